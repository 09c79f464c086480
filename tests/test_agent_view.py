"""The agent view on real pages in Chromium: every element that can be acted on keeps its
own line with its label, and the view is shorter than the Mind2Web rendering."""

from pathlib import Path

import pytest
import pytest_asyncio
from browser_support import requires_chromium

from webagent.browser import BrowserSession
from webagent.demo_site import SITE_DIR, serve_directory
from webagent.html import split_snippets
from webagent.html.clean import parse_cleaned
from webagent.web.agent_view import build_view, line_ids, view_snippets

pytestmark = [pytest.mark.browser, requires_chromium, pytest.mark.asyncio(loop_scope="module")]
PAGES = Path(__file__).parent / "fixtures" / "web_pages"
FIXTURES = [
    "browsergym/test_page.html",
    "browsergym/obstructed_checkbox_page.html",
    "own/widgets.html",
    "own/password.html",
    "browsergym/basic_iframe_site/basic_iframe.html",
]
DEMO = ["index.html", "results.html?q=", "order.html?item=b6"]
ACTIONABLE = ("input", "select", "textarea", "button", "a")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser():
    async with BrowserSession(allowed_domains=["127.0.0.1"]) as browser:
        yield browser


@pytest.fixture(scope="module")
def sites():
    fixtures, stop_fixtures = serve_directory(PAGES)
    demo, stop_demo = serve_directory(SITE_DIR)
    yield fixtures, demo
    stop_fixtures()
    stop_demo()


def _actionable(cleaned: str) -> dict[str, bool]:
    """Every actionable element's id -> whether the page gives it a name (text, label,
    aria-label, placeholder, title, alt or value)."""
    root = parse_cleaned(cleaned)
    labelled = {label.get("for") for label in root.iter("label") if label.get("for")}
    labelled_els = {el for label in root.iter("label") for el in label.iter(*ACTIONABLE)}
    out = {}
    for el in root.iter(*ACTIONABLE):
        if el.tag == "input" and (el.get("type") or "").lower() in ("hidden", "file", "color", "range"):
            continue
        if el.get("backend_node_id"):
            named = bool(
                " ".join(el.itertext()).strip()
                or el in labelled_els
                or el.get("id") in labelled
                or any(el.get(a) for a in ("aria_label", "placeholder", "title", "alt", "value"))
            )
            out[el.get("backend_node_id")] = named
    return out


async def _observe(browser, url):
    assert (await browser.open(url)).ok
    return await browser.observe()


@pytest.mark.parametrize("page", FIXTURES + [f"demo:{p}" for p in DEMO])
async def test_every_actionable_element_keeps_its_line_and_label(browser, sites, page):
    fixtures, demo = sites
    url = demo + page[5:] if page.startswith("demo:") else fixtures + page
    obs = await _observe(browser, url)
    view = build_view(obs.cleaned_html)
    text = view.render()
    shown = set(line_ids(text))
    wanted = _actionable(obs.cleaned_html)
    assert wanted and set(wanted) <= shown, (page, set(wanted) - shown, text)
    assert shown == set(view.controls)
    for element_id, named in wanted.items():
        assert view.controls[element_id].name or not named, (page, view.controls[element_id])  # its label survives
    # The snippets cut the same elements and show the same lines, nothing lost or doubled.
    snippets, _ = view_snippets(obs.cleaned_html, budget_words=40)
    assert sorted(i for s in snippets for i in line_ids(s.text)) == sorted(shown)
    old = sum(s.words for s in split_snippets(obs.cleaned_html))
    assert len(text.split()) < old, page


async def test_the_order_form_reads_as_a_small_model_needs_it(browser, sites):
    _, demo = sites
    view = build_view((await _observe(browser, demo + "order.html?item=b6")).cleaned_html)
    lines = view.render().splitlines()
    assert lines[0] == "Order Night Trains"
    kinds = {c.kind: c for c in view.controls.values()}
    name, shipping, gift, order = (kinds[k] for k in ("text field", "select", "checkbox", "submit button"))
    assert (name.name, name.op, name.value) == ("Your name", "TYPE", "")
    assert f'[{name.id}] text field "Your name" empty required' in lines
    assert (shipping.op, shipping.options, shipping.value) == (
        "SELECT",
        ("Standard (5 days)", "Express (1 day)", "Pick up in store"),
        "Standard (5 days)",
    )
    assert (gift.name, gift.value) == ("Gift wrap", "not checked") and order.name == "Place order"


async def test_labels_by_for_and_wrapping_and_clickable_wrappers():
    html = (
        '<html backend_node_id="1"><body backend_node_id="2">'
        '<label for="e" backend_node_id="3">E-mail</label><input id="e" type="email" backend_node_id="4" input_value="a@b"/>'
        '<div is_clickable="true" backend_node_id="5">Open menu</div>'
        '<div is_clickable="true" backend_node_id="6"><p backend_node_id="7">a long delegated area with many words '
        'that is a container and not one control at all here</p><a backend_node_id="8">Inside</a></div>'
        '<p backend_node_id="9">plain text</p></body></html>'
    )
    view = build_view(html)
    assert view.render().splitlines() == [
        "E-mail",
        '[4] email field "E-mail" value="a@b"',
        '[5] clickable "Open menu"',
        "a long delegated area with many words that is a container and not one control at all here",
        '[8] link "Inside"',
        "plain text",
    ]
    assert set(view.controls) == {"4", "5", "8"}


def _in_one_div(controls: str):
    """The agent view of a page whose controls share one parent (a form built of divs)."""
    return build_view(
        f'<html backend_node_id="1"><body backend_node_id="2"><div backend_node_id="3">{controls}</div></body></html>'
    )


async def test_a_button_amid_fields_is_not_a_forms_submit_and_names_no_field():
    # MiniWoB's click-button: fields and buttons in random order in one parent.
    view = _in_one_div(
        '<input type="text" backend_node_id="4"/><button backend_node_id="5">ok</button>'
        '<input type="text" backend_node_id="6"/>'
    )
    assert view.controls["6"].name == ""  # not "ok": the button's words are its own name


async def test_a_file_input_is_text_not_a_control():
    # django-helpdesk's "Attach File": clicking it only opens the system's file picker, which
    # no action can use (the 0.5B clicked it until the run was stuck, on four tasks).
    view = _in_one_div(
        '<label for="f" backend_node_id="4">Attach File</label>'
        '<input type="file" id="f" is_clickable="true" backend_node_id="5"/><button backend_node_id="6">Send</button>'
    )
    assert set(view.controls) == {"6"} and "Attach File" in view.render()


async def test_a_read_only_field_is_clicked_not_typed_into():
    # MiniWoB's book-flight: the departure date is a read-only field that opens a date picker.
    view = build_view(
        '<html backend_node_id="1"><body backend_node_id="2">Departure Date'
        '<input type="text" readonly="" backend_node_id="3" input_value="12/01/2016"/></body></html>'
    )
    assert view.render().splitlines() == ["Departure Date", '[3] read-only field "Departure Date" value="12/01/2016"']
    assert view.controls["3"].op == "CLICK"


async def test_a_clickable_label_still_captions_the_field_after_it():
    # A label with a click handler is not a control of its own: its words name the next field.
    view = _in_one_div(
        '<label backend_node_id="4" is_clickable="true">Username</label>'
        '<input type="text" backend_node_id="5"/><button backend_node_id="6">Go</button>'
    )
    assert view.controls["5"].name == "Username"


async def test_state_is_shown_as_a_person_sees_it():
    view = _in_one_div(
        '<button aria-pressed="false" backend_node_id="4">Bold</button>'
        '<button aria-expanded="true" backend_node_id="5">Shipping</button>'
        '<div role="switch" aria-checked="true" aria-label="Email notifications" backend_node_id="6"></div>'
        '<input type="email" aria-invalid="true" required="" aria-label="E-mail" input_value="ann@" backend_node_id="7"/>'
        '<input type="text" aria-label="Coupon" disabled="" backend_node_id="8"/>'
    )
    assert view.render().splitlines() == [
        '[4] button "Bold" not pressed',
        '[5] button "Shipping" expanded',
        '[6] switch "Email notifications" checked',
        '[7] email field "E-mail" value="ann@" required invalid',
        '[8] text field "Coupon" empty disabled',
    ]
    assert view.controls["8"].disabled and not view.controls["7"].disabled


async def test_a_select_shows_the_live_choice_not_the_html_default():
    # A server-rendered default (<option selected>) after SELECT chose another option: the
    # select's live value (input_value, from the browser) is what it shows.
    view = _in_one_div(
        '<select backend_node_id="4" input_value="Express"><option backend_node_id="5" '
        'option_selected="true">Standard</option><option backend_node_id="6">Express</option></select>'
    )
    assert view.controls["4"].value == "Express"
    assert 'selected="Express"' in view.render()


async def test_a_field_alone_in_a_wrapper_is_named_by_the_caption_before_the_wrapper():
    # django-helpdesk's "View a Ticket": <label for="id_ticket"> points to no element; the
    # input, alone in its input-group div, has only its form name.
    view = _in_one_div(
        '<label for="id_ticket" backend_node_id="4">Ticket</label>'
        '<div backend_node_id="5"><input type="text" name="ticket" backend_node_id="6"/></div>'
        '<label for="id_email" backend_node_id="7">Your E-mail Address</label>'
        '<div backend_node_id="8"><input type="text" name="email" backend_node_id="9"/></div>'
        '<div backend_node_id="10">Search <div backend_node_id="11"><input type="text" name="q" backend_node_id="12"/>'
        "</div> or browse</div>"
    )
    assert (view.controls["6"].name, view.controls["9"].name) == ("Ticket", "Your E-mail Address")
    assert view.controls["12"].name == "Search"
    # A wrapper before it that holds a control is no caption: its words are that control's.
    view = _in_one_div(
        '<div backend_node_id="4"><button backend_node_id="5">Go</button></div>'
        '<div backend_node_id="6"><input type="text" name="q" backend_node_id="7"/></div>'
    )
    assert view.controls["7"].name == "q"


async def test_a_field_in_a_table_is_named_by_the_caption_beside_it_or_its_column():
    # Roundup's classic template: <th>Priority</th><td><select name="priority">, no <label>.
    view = build_view(
        '<html backend_node_id="1"><body backend_node_id="2"><table backend_node_id="3">'
        '<tr backend_node_id="4"><th backend_node_id="5">Priority</th><td backend_node_id="6">'
        '<select name="priority" backend_node_id="7"><option backend_node_id="8">urgent</option></select></td></tr>'
        '<tr backend_node_id="9"><th backend_node_id="10">Title</th><td backend_node_id="11">'
        '<input type="text" name="title" backend_node_id="12"/></td></tr></table>'
        '<table backend_node_id="20"><tr backend_node_id="21"><th backend_node_id="22">Qty</th></tr>'
        '<tr backend_node_id="23"><td backend_node_id="24"><input type="text" name="q_1" backend_node_id="25"/></td></tr>'
        "</table></body></html>"
    )
    assert (view.controls["7"].name, view.controls["12"].name, view.controls["25"].name) == ("Priority", "Title", "Qty")


async def test_a_hidden_control_is_not_one_but_a_hidden_checkbox_is():
    # A collapsed form's select (display:none: no box) cannot be acted on; a checkbox input
    # hidden under a styled label can (its click goes by JS).
    view = _in_one_div(
        '<select is_visible="false" backend_node_id="4"><option backend_node_id="5">bob</option></select>'
        '<button is_visible="false" backend_node_id="6">Save</button>'
        '<input type="checkbox" is_visible="false" aria-label="Public" backend_node_id="7"/>'
        '<button is_visible="true" backend_node_id="8">Update</button>'
    )
    assert set(view.controls) == {"7", "8"}
    assert "Save" in view.render()  # its text stays in the page


async def test_a_fields_validation_message_from_the_capture_is_shown_with_invalid():
    html = (
        '<html backend_node_id="1"><body backend_node_id="2">'
        '<input type="email" aria-label="E-mail" input_value="ann@" '
        'input_invalid="Please enter a part following \'@\'." backend_node_id="7"/>'
        "</body></html>"
    )
    assert (
        build_view(html).render()
        == '[7] email field "E-mail" value="ann@" invalid ("Please enter a part following \'@\'.")'
    )


async def test_a_cell_after_an_empty_one_keeps_its_own_column(browser, sites):
    # django-helpdesk's ticket list: an unassigned ticket's Owner cell is empty, and the
    # submitter after it was read as the owner when the capture dropped the empty cell.
    fixtures, _ = sites
    lines = build_view((await _observe(browser, fixtures + "own/table_gaps.html")).cleaned_html).render().splitlines()
    assert lines[lines.index(next(x for x in lines if "2. Laptop battery swelling" in x)) + 1 :] == [
        "Status: Open",
        "Submitter: j.patel@example.com",
    ]
    assert "Owner: Alice Moreau" in lines and "Submitter: m.fischer@example.com" in lines


async def test_a_table_cell_says_its_column_as_its_header_shows_it():
    # Roundup's issue list: a header row, a group row, then one issue per row; which name is
    # the creator and which the assignee is only said by the header above.
    view = build_view(
        '<html backend_node_id="1"><body backend_node_id="2"><table backend_node_id="3">'
        '<tr backend_node_id="4"><th backend_node_id="5">ID</th><th backend_node_id="6">Title</th>'
        '<th backend_node_id="7">Creator</th><th backend_node_id="8">Assigned To</th></tr>'
        '<tr backend_node_id="9"><th colspan="4" backend_node_id="10">critical</th></tr>'
        '<tr backend_node_id="11"><td backend_node_id="12">12</td><td backend_node_id="13">'
        '<a href="/issue12" backend_node_id="14">Uploads fail</a></td><td backend_node_id="15">carol</td>'
        '<td backend_node_id="16">dave</td></tr>'
        '<tr backend_node_id="17"><td backend_node_id="18">13</td><td backend_node_id="19">'
        '<a href="/issue13" backend_node_id="20">Slow start</a></td><td backend_node_id="21"><p backend_node_id="22">'
        'erin</p></td><td backend_node_id="23"></td></tr></table>'
        '<table backend_node_id="30"><tr backend_node_id="31"><td backend_node_id="32">Total</td>'
        '<td backend_node_id="33">3</td></tr></table></body></html>'
    )
    assert view.render().splitlines() == [
        "ID",
        "Title",
        "Creator",
        "Assigned To",
        "critical",
        "ID: 12",
        '[14] link "Uploads fail"',  # a cell of a control alone: the control's own line
        "Creator: carol",
        "Assigned To: dave",
        "ID: 13",
        '[20] link "Slow start"',
        "erin",  # a cell with lines of its own is left as it is
        "Total",  # no header row: nothing added
        "3",
    ]
    assert view.controls["14"].name == "Uploads fail"
