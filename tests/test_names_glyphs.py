"""Icon-font glyphs (private-use code points) belong to an accessible name but read as
nothing to a model: the view drops them, and the ceiling and replay take a name with and
without them as one name (issue 33)."""

from lxml import etree

from webagent.apps.ceiling import find_control, same_name
from webagent.apps.spec import GoldStep
from webagent.trace.fingerprint import Fingerprint, name_of
from webagent.trace.match import score
from webagent.web.agent_view import Control, build_view
from webagent.web.control_name import visible_name

GLYPH = "\uf145"


def test_visible_name_drops_private_use_glyphs_only():
    assert visible_name(f"{GLYPH} Buy tickets") == "Buy tickets"
    assert visible_name("\U000f0001Save\ue000 draft") == "Save draft"
    assert visible_name("Café – naïve") == "Café – naïve"


def test_the_view_shows_the_accessible_name_without_the_glyph_and_the_rules_where_there_is_none():
    html = (
        '<html backend_node_id="1"><body backend_node_id="2">'
        f'<button backend_node_id="3" ax_role="button" ax_name="{GLYPH} Buy tickets">x</button>'
        '<label backend_node_id="4" for="q">Find</label><input backend_node_id="5" id="q" type="text" ax_name=""/>'
        "</body></html>"
    )
    controls = build_view(html).controls
    assert controls["3"].name == "Buy tickets" and controls["3"].role == "button"
    assert controls["5"].name == "Find"  # the tree gave no name: the agent's rules


def test_the_ceiling_matches_a_name_with_and_without_its_glyph():
    assert same_name("Buy tickets", f"{GLYPH} Buy tickets")
    controls = {
        "7": Control("7", "CLICK", "submit button", "Buy tickets"),
        "8": Control("8", "CLICK", "button", "Buy later"),
    }
    assert find_control(controls, GoldStep(op="click", role="button", name=f"{GLYPH} Buy tickets")) == "7"


def test_the_ceiling_finds_a_name_with_quotes_inside():
    html = '<html backend_node_id="1"><button backend_node_id="9" ax_role="button">_("Add participant")</button></html>'
    controls = build_view(html).controls
    assert find_control(controls, GoldStep(op="click", role="button", name='_("Add participant")')) == "9"


def test_replay_takes_a_name_with_and_without_its_glyph_as_one_name():
    el = etree.fromstring(f'<button ax_name="{GLYPH} Save">{GLYPH} Save</button>')
    assert name_of(el) == "Save"
    recorded = Fingerprint(tag="button", name=f"{GLYPH} Save")
    live = Fingerprint(tag="button", name="Save")
    value, shared, _ = score(recorded, live)
    assert "name" in shared and value == 1.0
