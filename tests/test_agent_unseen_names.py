"""Names as the browser computes them (issue 33, item 1), and a ceiling that finds elements,
not strings (item 4).

``fixtures/agent_unseen/names_form.html`` holds every naming case seen on apps no one here
wrote: a search box named by a hidden ``<label for>``, a quantity named through
``aria-labelledby``, a field named by ``aria-label``, one by ``title``, one by two labelling
elements joined, an image link named by its ``alt``, a button whose name holds quotes, and a
button whose name starts with an icon-font glyph (U+F145). The gold path names each control
by its accessible name, as Playwright's ``get_by_role`` computes it.

* The view shows each control under that name (the glyph dropped, the quotes kept).
* The agent, driven by the ceiling's gold model (which resolves each step's element in the
  live page by role and name, then finds the agent's line by the element's backend node),
  reaches the page's "ok" with no loss and no naming defect.
* With the browser's names switched off (the agent's own rules, as before this change), the
  same gold model still finds every element, and counts the names the rules got wrong as
  naming defects, each with both names.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytest_asyncio
from browser_support import open_page, requires_chromium

from webagent.agent import AgentOptions, run_agent
from webagent.apps.ceiling import GoldModel
from webagent.apps.locate import gold_ids
from webagent.apps.spec import Task
from webagent.browser import BrowserSession
from webagent.demo_site import serve_directory
from webagent.llm.testing import fake_client
from webagent.web.agent_view import build_view

pytestmark = [pytest.mark.browser, requires_chromium, pytest.mark.asyncio(loop_scope="module")]
PAGES = Path(__file__).parent / "fixtures" / "agent_unseen"
TASK = Task.model_validate(json.loads((PAGES / "names_form.json").read_text(encoding="utf-8")))
RESULT_JS = "() => (document.body && document.body.dataset.result) || ''"


@pytest.fixture(scope="module")
def site():
    base, stop = serve_directory(PAGES)
    yield base
    stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser():
    async with BrowserSession(allowed_domains=["127.0.0.1"]) as browser:
        yield browser


async def test_each_control_reads_as_its_accessible_name(browser, site):
    obs = await open_page(browser, site + TASK.start)
    names = {c.name for c in build_view(obs.cleaned_html).controls.values()}
    assert {
        "Search:",  # a hidden <label for>
        "General admission",  # aria-labelledby
        "Balcony seats",  # aria-label
        "Attendee first name",  # aria-labelledby with two elements, joined
        "Phone number",  # title
        '_("Add participant")',  # quotes survive
        "Add to favourites",  # an image link's alt
        "Buy tickets",  # the icon-font glyph dropped
    } <= names
    view = build_view(obs.cleaned_html).render()
    assert 'button "_(\\"Add participant\\")"' in view  # the quote escaped as JSON writes it
    assert "\uf145" not in view


async def test_a_gold_step_resolves_to_the_agents_id_for_that_element(browser, site):
    obs = await open_page(browser, site + TASK.start)
    controls = build_view(obs.cleaned_html).controls
    for step in TASK.gold:
        ids = await gold_ids(browser, step)
        assert ids and ids[0] in controls, step.describe()
        assert obs.elements[ids[0]].tag in ("input", "button", "a")


async def _run(browser, site, tmp_path, accessible_names: bool):
    await open_page(browser, site + TASK.start)
    gold = GoldModel(TASK, browser)
    browser.capture_options["accessible_names"] = accessible_names

    async def page_says_done(step: int):
        return "ok" if await browser.page.evaluate(RESULT_JS) == "ok" else None

    try:
        result = await run_agent(
            browser,
            fake_client(gold.backend()),
            TASK.task,
            options=AgentOptions(max_steps=2 * len(TASK.gold) + 3, form_check=False),
            after_step=page_says_done,
        )
    finally:
        browser.capture_options.pop("accessible_names")
    return result, gold, await browser.page.evaluate(RESULT_JS)


async def test_the_gold_model_reaches_the_goal_with_no_loss_and_no_naming_defect(browser, site, tmp_path):
    result, gold, verdict = await _run(browser, site, tmp_path, accessible_names=True)
    assert verdict == "ok", (result, gold.losses)
    assert gold.losses == [] and gold.naming == []


async def test_names_by_the_old_rules_are_counted_as_naming_defects_not_losses(browser, site, tmp_path):
    result, gold, verdict = await _run(browser, site, tmp_path, accessible_names=False)
    assert verdict == "ok", (result, gold.losses)  # found by element, not by string
    assert gold.losses == []
    wrong = {n["accessible"]: n["shown"] for n in gold.naming}
    # the rules read the words before the field, where aria-labelledby names it
    assert wrong["General admission"] == "(£40)", wrong
    assert "Search:" not in wrong  # not a step of the gold path
    assert all(n["shown"] != n["accessible"] for n in gold.naming)
