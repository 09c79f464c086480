"""A control the browser leaves unnamed is never named by its ``value`` attribute (a
checkbox's "on" is what its form sends); the caption beside it names it, after it or, when
there is none after, before it, as a person reads a settings switch (issue 47, item 7)."""

from webagent.agent.elements import describe
from webagent.web.agent_view import build_view

SWITCH = (
    '<html backend_node_id="1"><body backend_node_id="2"><div backend_node_id="3">'
    '<span backend_node_id="4">Email notifications</span>'
    '<label backend_node_id="5" class="switch"><input backend_node_id="6" type="checkbox" value="on" '
    'input_checked="true" ax_name=""/><span backend_node_id="7" class="slider"></span></label>'
    "</div></body></html>"
)


def test_a_switch_whose_caption_comes_before_it_is_named_by_the_caption():
    view = build_view(SWITCH)
    assert view.controls["6"].name == "Email notifications"
    assert '[6] checkbox "Email notifications" checked' in view.render()
    assert describe(SWITCH, "6") == "[checkbox]  checkbox"  # the history never says "on"


def test_a_checkbox_with_no_caption_is_not_named_by_its_value():
    html = (
        '<html backend_node_id="1"><body backend_node_id="2">'
        '<input backend_node_id="3" type="checkbox" value="on"/>'
        '<input backend_node_id="4" type="radio" value="yes"/>'
        '<input backend_node_id="5" type="submit" value="Save"/>'
        "</body></html>"
    )
    controls = build_view(html).controls
    assert controls["3"].name == "" and controls["4"].name == ""
    assert controls["5"].name == "Save"  # an input drawn as a button is named by its value


def test_the_caption_after_a_checkbox_still_comes_first_and_is_not_the_next_ones():
    html = (
        '<html backend_node_id="1"><body backend_node_id="2"><div backend_node_id="3">'
        '<input backend_node_id="4" type="checkbox" value="on"/> Remember me '
        '<input backend_node_id="5" type="checkbox" value="on"/>'
        "</div></body></html>"
    )
    controls = build_view(html).controls
    assert controls["4"].name == "Remember me"
    assert controls["5"].name == ""  # "Remember me" is the first box's caption, not this one's
