"""The agent view on real pages in Chromium: every element that can be acted on keeps its
own line with its label, and the view is shorter than the Mind2Web rendering."""

from pathlib import Path

import pytest
import pytest_asyncio

from webagent.browser import BrowserSession
from webagent.demo_site import SITE_DIR, serve_directory
from webagent.html import split_snippets
from webagent.html.clean import parse_cleaned
from webagent.web.agent_view import build_view, empty_form_submits, line_ids, view_snippets

from browser_support import requires_chromium

pytestmark = [pytest.mark.browser, requires_chromium, pytest.mark.asyncio(loop_scope="module")]
PAGES = Path(__file__).parent / "fixtures" / "web_pages"
FIXTURES = ["browsergym/test_page.html", "browsergym/obstructed_checkbox_page.html", "own/widgets.html",
            "own/password.html", "browsergym/basic_iframe_site/basic_iframe.html"]
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
            named = bool(" ".join(el.itertext()).strip() or el in labelled_els or el.get("id") in labelled
                         or any(el.get(a) for a in ("aria_label", "placeholder", "title", "alt", "value")))
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
    assert f'[{name.id}] text field "Your name" value="" required' in lines
    assert (shipping.op, shipping.options, shipping.value) == (
        "SELECT", ("Standard (5 days)", "Express (1 day)", "Pick up in store"), "Standard (5 days)")
    assert (gift.name, gift.value) == ("Gift wrap", "not checked") and order.name == "Place order"
    assert empty_form_submits(view.controls) == {order.id}  # nothing typed yet: submitting asks for nothing


async def test_labels_by_for_and_wrapping_and_clickable_wrappers():
    html = ('<html backend_node_id="1"><body backend_node_id="2">'
            '<label for="e" backend_node_id="3">E-mail</label><input id="e" type="email" backend_node_id="4" input_value="a@b"/>'
            '<div is_clickable="true" backend_node_id="5">Open menu</div>'
            '<div is_clickable="true" backend_node_id="6"><p backend_node_id="7">a long delegated area with many words '
            'that is a container and not one control at all here</p><a backend_node_id="8">Inside</a></div>'
            '<p backend_node_id="9">plain text</p></body></html>')
    view = build_view(html)
    assert view.render().splitlines() == [
        "E-mail", '[4] email field "E-mail" value="a@b"', '[5] clickable "Open menu"',
        "a long delegated area with many words that is a container and not one control at all here",
        '[8] link "Inside"', "plain text"]
    assert set(view.controls) == {"4", "5", "8"}


def _in_one_div(controls: str):
    """The agent view of a page whose controls share one parent (a form built of divs)."""
    return build_view('<html backend_node_id="1"><body backend_node_id="2"><div backend_node_id="3">'
                      f'{controls}</div></body></html>')


async def test_a_lone_button_beside_empty_fields_asks_for_nothing():
    def view(value: str, extra_button: str = ""):
        return _in_one_div(
            f'<p backend_node_id="4"><input type="text" backend_node_id="5" input_value="{value}"/></p>'
            f'<button backend_node_id="6">Submit</button>{extra_button}')

    task = 'Enter "Jerald" into the text field and press Submit.'
    assert empty_form_submits(view("").controls, task) == {"6"}  # a form built of divs, nothing typed yet
    assert empty_form_submits(view("Jerald").controls, task) == set()
    other = '<button backend_node_id="7">Cancel</button>'
    assert empty_form_submits(view("", other).controls, task) == set()  # several buttons: not one form's submit


async def test_a_form_is_not_sent_while_a_field_the_task_names_is_empty():
    # MiniWoB's login-user once cleaned: a label before each field, a lone Login button.
    def view(username: str, password: str):
        return _in_one_div(
            '<label backend_node_id="5">Username</label>'
            f'<input type="text" backend_node_id="7" input_value="{username}"/>'
            '<label backend_node_id="9">Password</label>'
            f'<input type="password" backend_node_id="11" input_value="{password}"/>'
            '<button backend_node_id="12">Login</button>')

    task = 'Enter the username "karrie" and the password "AU" into the text fields and press login.'
    assert view("karrie", "").controls["11"].name == "Password"
    assert empty_form_submits(view("karrie", "").controls, task) == {"12"}   # the password is still missing
    assert empty_form_submits(view("karrie", "••").controls, task) == set()  # both typed
    assert empty_form_submits(view("karrie", "").controls, "Log in as karrie.") == set()  # a field the task does not name may stay empty
    # Words inside other words do not name a field ("passwords" is not "Password").
    assert empty_form_submits(view("karrie", "").controls, "Forget saved passwords for karrie.") == set()


async def test_a_form_is_not_sent_before_the_option_or_checkbox_the_task_names():
    def view(selected: str, checked: str):
        return _in_one_div(
            '<select backend_node_id="4">'
            f'<option backend_node_id="5" option_selected="{str(selected == "Aurora").lower()}">Aurora</option>'
            f'<option backend_node_id="6" option_selected="{str(selected == "Bobine").lower()}">Bobine</option></select>'
            f'<div backend_node_id="7"><label backend_node_id="8"><input type="checkbox" backend_node_id="9" '
            f'input_checked="{checked}"/>HF2</label></div>'
            '<button backend_node_id="10">Submit</button>')

    assert empty_form_submits(view("Aurora", "false").controls, "Select Bobine from the list and click Submit.") == {"10"}
    assert empty_form_submits(view("Bobine", "false").controls, "Select Bobine from the list and click Submit.") == set()
    assert empty_form_submits(view("Aurora", "false").controls, "Select HF2 and click Submit.") == {"10"}
    assert empty_form_submits(view("Aurora", "true").controls, "Select HF2 and click Submit.") == set()
    # A name after a negation is not asked for.
    assert empty_form_submits(view("Aurora", "false").controls, "Do not select HF2; click Submit.") == set()
    assert empty_form_submits(view("Aurora", "false").controls, "Click Submit.") == set()


async def test_a_button_amid_fields_is_not_a_forms_submit_and_names_no_field():
    # MiniWoB's click-button: fields and buttons in random order in one parent.
    view = _in_one_div(
        '<input type="text" backend_node_id="4"/><button backend_node_id="5">ok</button>'
        '<input type="text" backend_node_id="6"/>')
    assert view.controls["6"].name == ""  # not "ok": the button's words are its own name
    assert empty_form_submits(view.controls, 'Click on the "ok" button.') == set()


async def test_a_read_only_field_is_clicked_not_typed_into():
    # MiniWoB's book-flight: the departure date is a read-only field that opens a date picker.
    view = build_view('<html backend_node_id="1"><body backend_node_id="2">Departure Date'
                      '<input type="text" readonly="" backend_node_id="3" input_value="12/01/2016"/></body></html>')
    assert view.render().splitlines() == ["Departure Date", '[3] read-only field "Departure Date" value="12/01/2016"']
    assert view.controls["3"].op == "CLICK"



async def test_the_options_a_task_names():
    from webagent.web.agent_view import Control, named_options

    shipping = Control("4", "SELECT", "select", "Shipping", ("Standard (5 days)", "Express (1 day)", "Pick up in store"))
    assert named_options('Buy "Python for Gardeners" for Alan Turing and pick it up in the store.', shipping) == [
        "Pick up in store"]
    assert named_options('Order "A Short History of Tea" for Grace Hopper with standard shipping.', shipping) == [
        "Standard (5 days)"]
    assert named_options("Ship it express, not standard.", shipping) == ["Express (1 day)"]
    assert named_options("Order a book.", shipping) == []
    names = Control("5", "SELECT", "select", "", ("Aurora", "Bobine"))
    assert named_options("Select Bobine from the list and click Submit.", names) == ["Bobine"]


async def test_empty_fields_hold_a_div_form_only_when_the_task_has_text_to_type():
    # MiniWoB's click-button: unrelated empty fields above the one button the task names.
    view = _in_one_div(
        '<input type="text" backend_node_id="4"/><input type="text" backend_node_id="5"/>'
        '<button backend_node_id="6">next</button>')
    assert empty_form_submits(view.controls, 'Click on the "next" button.') == set()
    assert empty_form_submits(view.controls, 'Enter "Jerald" into the text field and press next.') == {"6"}


async def test_a_clickable_label_still_captions_the_field_after_it():
    # A label with a click handler is not a control of its own: its words name the next field.
    view = _in_one_div('<label backend_node_id="4" is_clickable="true">Username</label>'
                       '<input type="text" backend_node_id="5"/><button backend_node_id="6">Go</button>')
    assert view.controls["5"].name == "Username"
