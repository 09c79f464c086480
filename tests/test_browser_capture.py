"""Capture of real pages (BrowserGym's test pages and our own) in headless Chromium."""

import json
import re

import pytest
import pytest_asyncio
from browser_support import WEB_PAGES, ids, one_id, open_page, requires_chromium

from webagent.browser import Action, BrowserSession
from webagent.browser.capture import capture
from webagent.demo_site import serve_directory
from webagent.html import clean_html, split_snippets
from webagent.html.dom import LIVE_ATTRS

pytestmark = [pytest.mark.browser, requires_chromium, pytest.mark.asyncio(loop_scope="module")]


@pytest.fixture(scope="module")
def site():
    url, stop = serve_directory(WEB_PAGES)
    yield url
    stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser():
    async with BrowserSession() as b:
        yield b


def _names(obs) -> set[str]:
    return {n for n in re.findall(r'name="([^"]+)"', obs.cleaned_html)}


async def _deep_input_names(page) -> set[str]:
    """Every input name in the page, through shadow roots and same-origin frames (in JS)."""
    names = set()
    for frame in page.frames:
        names |= set(
            await frame.evaluate("""() => {
            const out = [];
            const walk = root => root.querySelectorAll('*').forEach(el => {
                if (el.tagName === 'INPUT' && el.name) out.push(el.name);
                if (el.shadowRoot) walk(el.shadowRoot);
            });
            walk(document);
            return out;
        }""")
        )
    return names


@pytest.mark.parametrize(
    "path",
    [
        "browsergym/basic_iframe_site/basic_iframe.html",
        "browsergym/basic_iframe_site/outer-iframe.html",
        "browsergym/basic_shadow_dom_site/basic_shadow_dom.html",
        "browsergym/basic_shadow_iframe_site/outer-iframe.html",
        "browsergym/test_page.html",
    ],
)
async def test_every_input_is_captured_with_an_id(browser, site, path):
    obs = await open_page(browser, site + path)
    expected = await _deep_input_names(browser.page)
    assert expected, "the fixture has inputs"
    assert _names(obs) >= expected
    for name in expected:
        ident = one_id(obs, f"//input[@name='{name}']")
        assert obs.elements[ident].tag == "input"


async def test_ids_are_unique_and_mapped(browser, site):
    obs = await open_page(browser, site + "browsergym/basic_iframe_site/basic_iframe.html")
    all_ids = ids(obs, "//*")
    assert len(all_ids) == len(set(all_ids))
    assert set(all_ids) == set(obs.elements)
    # the landed cleaning (with the attributes a live page keeps) leaves a capture as it is,
    # and the split keeps every id
    assert clean_html(obs.cleaned_html, LIVE_ATTRS) == obs.cleaned_html
    assert clean_html(obs.raw_html, LIVE_ATTRS) == obs.cleaned_html
    assert 'ax_name="Level 1 Text Field 1"' in obs.cleaned_html  # the browser's accessible name
    snippet_ids = [i for s in split_snippets(obs.cleaned_html, budget_words=30) for i in s.ids]
    assert sorted(snippet_ids) == sorted(all_ids)


async def test_cross_site_iframe_is_captured_and_usable(browser, site):
    obs = await open_page(browser, site.replace("127.0.0.1", "localhost") + "own/cross_site.html")
    frame = next(f for f in browser.page.frames if "cross_inner" in f.url)
    assert "127.0.0.1" in frame.url and "localhost" in obs.url
    assert obs.frame_errors == []
    field = one_id(obs, "//input[@id='inner-field']")
    button = one_id(obs, "//button[@id='inner-button']")
    outer = one_id(obs, "//input[@id='outer-field']")
    # the frame's own target: its ids carry its target name, unlike the page's
    assert obs.elements[field].target != obs.elements[outer].target
    assert re.fullmatch(r"t\d+-\d+", field) and outer.isdigit()
    # the inlined frame sits below its <iframe> element
    assert ids(obs, "//iframe[@id='cross']//input[@id='inner-field']") == [field]
    typed = await browser.act(Action(op="TYPE", element_id=field, value="hello frame"), obs)
    clicked = await browser.act(Action(op="CLICK", element_id=button), obs)
    assert typed.ok and clicked.ok, (typed.error, clicked.error)
    assert clicked.method == "mouse"
    assert await frame.evaluate("document.getElementById('inner-field').value") == "hello frame"
    assert await frame.evaluate("document.getElementById('inner-count').textContent") == "1"
    again = await browser.observe()
    assert ids(again, "//input[@id='inner-field'][@input_value='hello frame']") == [field]

    # the frame navigates to another page of the other site: captured anew, old ids refused
    await browser.page.evaluate(
        "u => { document.getElementById('cross').src = u; }", frame.url.replace("cross_inner.html", "tab.html")
    )
    await browser.page.wait_for_function(
        "() => document.getElementById('cross').contentWindow.length === 0", timeout=5000
    )
    await browser.settle()
    for _ in range(20):
        moved = await browser.observe()
        if ids(moved, "//iframe[@id='cross']//button[@id='here']"):
            break
        await browser.page.wait_for_timeout(100)
    here = one_id(moved, "//iframe[@id='cross']//button[@id='here']")
    assert re.fullmatch(r"t\d+-\d+", here)
    stale = await browser.act(Action(op="CLICK", element_id=button), obs)
    assert not stale.ok and stale.page_changed
    clicked = await browser.act(Action(op="CLICK", element_id=here), moved)
    assert clicked.ok, clicked.error


async def test_hidden_elements_are_left_out_and_state_is_live(browser, site):
    obs = await open_page(browser, site + "own/widgets.html")
    assert ids(obs, "//button[@id='hidden']") == []
    assert ids(obs, "//button[@id='plain']")
    assert ids(obs, "//div[contains(@class,'dropdown-menu')]") == []  # display:none until opened
    assert one_id(obs, "//select[@id='country']")
    assert len(ids(obs, "//select[@id='country']/option")) == 4
    await browser.page.fill("#notes", "typed by hand")
    await browser.page.select_option("#country", "de")
    obs = await browser.observe()
    assert ids(obs, "//textarea[@input_value='typed by hand']")
    assert ids(obs, "//select[@input_value='Germany']")
    assert ids(obs, "//option[@option_selected='true']") == ids(obs, "//option[@value='de']")
    raw_box = re.search(r'<button[^>]*id="plain"[^>]*bounding_box_rect="([^"]+)"', obs.raw_html)
    assert raw_box and len(raw_box.group(1).split(",")) == 4
    assert 'is_visible="true"' in obs.raw_html


async def test_checkbox_state_and_obstructed_checkbox(browser, site):
    obs = await open_page(browser, site + "browsergym/obstructed_checkbox_page.html")
    assert ids(obs, "//input[@id='hobbies-checkbox-1'][@input_checked='true']")
    box = one_id(obs, "//input[@id='hobbies-checkbox-2'][@input_checked='false']")
    result = await browser.act(Action(op="CLICK", element_id=box), obs)
    assert result.ok, result.error
    assert await browser.page.is_checked("#hobbies-checkbox-2")
    obs = await browser.observe()
    assert ids(obs, "//input[@id='hobbies-checkbox-2'][@input_checked='true']")


async def test_huge_page_is_bounded(browser, site):
    await open_page(browser, site + "browsergym/long_page.html")
    full = await capture(browser)
    cut = await capture(browser, max_nodes=5)
    assert not full.truncated and cut.truncated
    assert len(cut.elements) == 5 < len(full.elements)
    assert set(cut.elements) <= set(full.elements)


async def test_password_never_appears(browser, site):
    obs = await open_page(browser, site + "own/password.html")
    assert "preset-secret-42" not in obs.raw_html + obs.cleaned_html
    pwd = one_id(obs, "//input[@type='password']")
    assert obs.elements[pwd].is_password
    result = await browser.act(Action(op="TYPE", element_id=pwd, value="hunter2-typed"), obs)
    assert result.ok, result.error
    assert await browser.page.input_value("#pwd") == "hunter2-typed"  # it was really typed
    obs = await browser.observe()
    dumped = result.model_dump_json() + obs.model_dump_json()
    assert "hunter2" not in dumped and "preset-secret" not in dumped
    assert "********" in obs.cleaned_html and result.action.value == "********"
    user = one_id(obs, "//input[@id='user']")
    plain = await browser.act(Action(op="TYPE", element_id=user, value="alice"), obs)
    assert plain.action.value == "alice"  # only secrets are redacted
    assert json.loads(plain.model_dump_json())["ok"] is True
