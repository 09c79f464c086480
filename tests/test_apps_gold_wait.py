"""Gold paths (issue 33): a ``wait`` step, for a page that shows its result from JavaScript
after the click (a role and name, a text, or a URL), and the error of a step whose element
is not on the page, which names the nearest names the page has instead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytest_asyncio
from browser_support import requires_chromium, serve_pages

from webagent.apps import gold
from webagent.apps.gold import GoldStepError, do_step, instead_of, wait_for
from webagent.apps.spec import GoldStep, load_app
from webagent.errors import DataError

WAIT_TASK = {
    "id": "shop-order",
    "kinds": ["checkout"],
    "task": "Place the order.",
    "gold": [
        {"op": "click", "role": "button", "name": "Place order"},
        {"op": "wait", "role": "heading", "name": "Order confirmed"},
        {"op": "done"},
    ],
}


def write_app(folder: Path, tasks: list) -> Path:
    folder.mkdir(parents=True)
    (folder / "app.toml").write_text(f'name = "{folder.name}"\ntitle = "A shop"\n')
    (folder / "app.py").write_text("")
    (folder / "tasks.json").write_text(json.dumps(tasks))
    return folder


def test_a_task_with_wait_steps_loads(tmp_path):
    steps = [
        {"op": "wait", "text": "Thank you"},
        {"op": "wait", "url": "**/order/*/done"},
        {"op": "wait", "url": "/order/\\d+/"},
        {"op": "wait", "role": "heading", "name": "Order confirmed", "nth": 0},
    ]
    task = {**WAIT_TASK, "gold": [*WAIT_TASK["gold"][:2], *steps, WAIT_TASK["gold"][-1]]}
    app = load_app(write_app(tmp_path / "shop", [task]))
    described = [s.describe() for s in app.tasks[0].gold]
    assert described == [
        "click button 'Place order'",
        "wait for heading 'Order confirmed'",
        "wait for text 'Thank you'",
        "wait for url '**/order/*/done'",
        "wait for url '/order/\\\\d+/'",
        "wait for heading 'Order confirmed' #0",
        "DONE",
    ]


@pytest.mark.parametrize(
    "step,message",
    [
        ({"op": "wait"}, "a wait step needs exactly one of: a role and a name, text, or url"),
        (
            {"op": "wait", "text": "Thanks", "url": "**/done"},
            "a wait step needs exactly one of: a role and a name, text, or url (it has text and url)",
        ),
        ({"op": "wait", "role": "heading"}, "a wait step for an element needs both a role and a name"),
        ({"op": "wait", "text": "Thanks", "value": "x"}, "a wait step takes no value"),
        ({"op": "wait", "url": "/order/(\\d+/"}, "url '/order/(\\\\d+/' is not a valid regular expression"),
        ({"op": "click", "role": "button", "name": "Go", "text": "Go"}, "text and url belong to a wait step"),
    ],
)
def test_a_bad_wait_step_is_refused_naming_file_record_and_field(tmp_path, step, message):
    task = {**WAIT_TASK, "gold": [WAIT_TASK["gold"][0], step]}
    folder = write_app(tmp_path / "shop", [task])
    with pytest.raises(DataError) as err:
        load_app(folder)
    text = str(err.value)
    assert text.startswith(f"{folder / 'tasks.json'}, record shop-order, field 'gold.1': ")
    assert message in text
    assert "\n" not in text


def test_instead_of_ranks_names_of_the_role_then_close_names_of_others():
    page = [("button", "Save changes"), ("button", "Save draft"), ("button", "Delete"), ("link", "Help")]
    assert instead_of(page, "button", "Save changs") == "nearest names on the page: 'Save changes', 'Save draft'"
    assert instead_of(page, "button", "Zzz") == "nearest names on the page: 'Save changes', 'Save draft', 'Delete'"
    assert instead_of(page, "checkbox", "Save change") == "close names with other roles: button 'Save changes'"
    assert instead_of(page, "checkbox", "Quantity") == "nothing on the page has a close name"
    assert instead_of([], "button", "Save") == ""


SHOP = """<!doctype html><html><head><title>Shop</title></head><body>
<h1>Your basket</h1>
<button id="place">Place order</button>
<button>Save changes</button> <button>Save draft</button> <a href="#help">Help</a>
<main id="out"></main>
<script>
document.getElementById('place').addEventListener('click', () => setTimeout(() => {
  const h = document.createElement('h2'); h.textContent = 'Order confirmed';
  const p = document.createElement('p'); p.textContent = 'Thank you for your order 42.';
  document.getElementById('out').append(h, p);
  history.pushState({}, '', 'order/42/done');
}, 500));
</script></body></html>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    base, stop = serve_pages(tmp_path_factory.mktemp("gold-wait"), {"shop.html": SHOP})
    yield base
    stop()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def browser():
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await gold.launch_browser(pw)
        yield browser
        await browser.close()


@pytest_asyncio.fixture(loop_scope="module")
async def page(browser, site):
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(site + "shop.html")
    yield page
    await context.close()


def steps(*raw: dict) -> list[GoldStep]:
    return [GoldStep.model_validate(s) for s in raw]


def browser_test(func):
    """A test on a real headless Chromium, sharing the module's browser."""
    return requires_chromium(pytest.mark.browser(pytest.mark.asyncio(loop_scope="module")(func)))


@pytest.mark.parametrize(
    "awaited",
    [
        {"role": "heading", "name": "Order confirmed"},
        {"text": "Thank you for your order"},
        {"url": "**/order/42/done"},
        {"url": "/order/\\d+/done$/"},
    ],
    ids=["role", "text", "glob", "regex"],
)
@browser_test
async def test_click_wait_done_follows_a_page_that_confirms_later(page, awaited):
    click, wait, done = steps(
        {"op": "click", "role": "button", "name": "Place order"}, {"op": "wait", **awaited}, {"op": "done"}
    )
    await do_step(page, click)
    # Checked right after the click, the order is not confirmed yet: the point of the wait.
    assert await page.get_by_role("heading", name="Order confirmed").count() == 0
    await do_step(page, wait)
    await do_step(page, done)
    assert await page.get_by_role("heading", name="Order confirmed").count() == 1
    assert page.url.endswith("/order/42/done")


@pytest.mark.parametrize(
    "awaited,said",
    [
        (
            {"role": "heading", "name": "Order confirmd"},
            "wait for heading 'Order confirmd': not there after 0.3 s; nearest names on the page: 'Your basket'",
        ),
        ({"text": "Thank you"}, "wait for text 'Thank you': not there after 0.3 s (the page is http://"),
        ({"url": "**/done"}, "wait for url '**/done': not there after 0.3 s; the page is at http://"),
    ],
    ids=["role", "text", "url"],
)
@browser_test
async def test_a_wait_that_times_out_says_what_was_awaited(page, awaited, said):
    (wait,) = steps({"op": "wait", **awaited})
    with pytest.raises(GoldStepError) as err:
        await wait_for(page, wait, timeout_ms=300)
    assert str(err.value).startswith(said)


@browser_test
async def test_a_missing_name_lists_the_nearest_names_on_the_page(page, monkeypatch):
    monkeypatch.setattr(gold, "STEP_TIMEOUT_MS", 300)
    cases = [
        (
            {"op": "click", "role": "button", "name": "Save changs"},
            "click button 'Save changs': no button has this name; nearest names on the page: "
            "'Save changes', 'Save draft'",
        ),
        (
            {"op": "click", "role": "link", "name": "Save changes"},
            "click link 'Save changes': no link has this name; nearest names on the page: 'Help'",
        ),
        (
            {"op": "check", "role": "checkbox", "name": "Save change"},
            "check checkbox 'Save change': no checkbox on the page; close names with other roles: "
            "button 'Save changes'",
        ),
    ]
    for raw, said in cases:
        (step,) = steps(raw)
        with pytest.raises(GoldStepError) as err:
            await do_step(page, step)
        assert str(err.value) == said
