"""A general agent (issue 22): the page decides what is possible, the model what to do.

Each counter-example of the issue is one small page of ``fixtures/agent_general/`` (plain
HTML and a little JS) with its task as a person would type it and a gold path
(``<case>.json``, a ``webagent.apps.spec.Task``). Each page records its own verdict in
``document.body.dataset.result`` ("ok" once the goal is reached, "wrong" for a wrong
result), so success is the page's final state, never the model's word.

* The gold path followed by Playwright alone reaches "ok": the page and the path are right.
* The live agent, driven by the suite's gold-path model (``webagent.apps.ceiling.GoldModel``,
  which proposes the right action at every step), reaches "ok" too, and nothing it proposed
  was refused or left out of the view. An answer task ends with DONE and the answer.
* A few cases also check that the view shows a control's live state (pressed, expanded,
  checked, the selected option) and that the task the model reads stays the same.
* Invalid actions are still refused, with a message that says why.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import pytest_asyncio
from agent_support import prompt_of, trace_lines
from browser_support import open_page, requires_chromium

from webagent.agent import AgentOptions, run_agent
from webagent.apps.ceiling import GoldModel
from webagent.apps.spec import Task
from webagent.browser import BrowserSession
from webagent.demo_site import serve_directory
from webagent.llm.reask import REASK_PREFIX
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.trace.writer import TraceWriter

pytestmark = [pytest.mark.browser, requires_chromium, pytest.mark.asyncio(loop_scope="module")]
PAGES = Path(__file__).parent / "fixtures" / "agent_general"
TASKS = {p.stem: Task.model_validate(json.loads(p.read_text(encoding="utf-8"))) for p in sorted(PAGES.glob("*.json"))}
RESULT_JS = "() => (document.body && document.body.dataset.result) || ''"
# The page's lines and the task's line of the step prompt, for the tests of what the model reads.
_PAGE = re.compile(r"Current page \(URL: .*?\n'''\n(.*?)\n'''", re.DOTALL)
_TASK = re.compile(r"^Task: (.*)$", re.MULTILINE)


async def test_every_counter_example_has_a_page_and_a_task():
    assert set(TASKS) == {
        "filter_samsung",
        "directory_lookup",
        "flight_oneway",
        "signup_newsletter",
        "signup_optout",
        "hotel_fr",
        "settings_switch",
        "plan_yearly",
        "ship_congo",
        "retype_email",
        "retype_address",
        "opening_hours",
        "delayed_booking",
        "toggle_bold",
        "accordion_faq",
        "signup_password",
        "delivery_express",
    }
    for case, task in TASKS.items():
        assert task.id == case and (PAGES / task.start).is_file()


@pytest.fixture(scope="module")
def site():
    base, stop = serve_directory(PAGES)
    yield base
    stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser():
    async with BrowserSession(allowed_domains=["127.0.0.1"]) as browser:
        yield browser


# -- the pages and their gold paths, with Playwright alone ------------------------------------


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def playwright_browser():
    from playwright.async_api import async_playwright

    from webagent.apps.gold import launch_browser

    async with async_playwright() as pw:
        chromium = await launch_browser(pw)
        yield chromium
        await chromium.close()


@pytest.mark.parametrize("case", sorted(TASKS))
async def test_the_gold_path_reaches_the_goal_with_playwright_alone(playwright_browser, site, case):
    """``webagent.apps.gold.do_step`` for each step, as ``gold.follow`` does, on a page kept
    open to read its verdict; before each step the element is waited for (the delayed
    booking's button appears 800 ms after the click, as a person would wait for it)."""
    from webagent.apps.gold import do_step

    task = TASKS[case]
    context = await playwright_browser.new_context()
    try:
        page = await context.new_page()
        hosts: set[str] = set()
        page.on("request", lambda request: hosts.add(request.url.split("/")[2] if "://" in request.url else ""))
        await page.goto(site + task.start, wait_until="load")
        assert await page.evaluate(RESULT_JS) != "ok"  # not reached before the gold path
        for step in task.gold:
            if step.op != "done":
                await page.get_by_role(step.role, name=step.name, exact=True).first.wait_for(timeout=5000)
            await do_step(page, step)
        if task.answer is not None:
            assert task.answer in await page.inner_text("body")
            if case != "opening_hours":  # the look-up's result shows on the page
                assert await page.evaluate(RESULT_JS) == "ok"
        else:
            assert await page.evaluate(RESULT_JS) == "ok", await page.inner_text("body")
        assert hosts <= {site.split("/")[2]}
    finally:
        await context.close()


# -- the live agent with the gold-path model -----------------------------------------------


async def _page_result(browser) -> str:
    try:
        return await browser.page.evaluate(RESULT_JS)
    except Exception:  # noqa: BLE001 - a page between documents has no verdict yet
        return ""


async def _run_case(browser, site, case: str, tmp_path):
    """The agent on ``case`` with the gold-path model: (result, gold model, step prompts, steps)."""
    task = TASKS[case]
    await open_page(browser, site + task.start)
    gold = GoldModel(task, browser)
    backend = FunctionBackend(_typing_what_the_task_shows(gold, task.task), name="fake:gold")  # recorded

    async def page_says_done(step: int) -> str | None:
        if task.answer is not None:  # an answer task ends with DONE
            return None
        return "the page shows the result" if await _page_result(browser) == "ok" else None

    trace = TraceWriter(tmp_path / "trace")
    result = await run_agent(
        browser,
        fake_client(backend),
        task.task,
        options=AgentOptions(max_steps=2 * len(task.gold) + 3),
        trace=trace,
        after_step=page_says_done,
    )
    # Each step's prompt once (a re-ask after a refusal repeats its step's prompt).
    prompts = [
        prompt_of(r["messages"])
        for r in backend.requests
        if r["messages"][0]["role"] == "system" and not str(r["messages"][-1]["content"]).startswith(REASK_PREFIX)
    ]
    try:
        steps = trace_lines(trace)
    except Exception:  # noqa: BLE001 - the trace is only for the failure message
        steps = []
    return result, gold, prompts, steps


def _typing_what_the_task_shows(gold: GoldModel, task: str):
    """``gold.reply``, except that a value the agent shows the model in another form in the
    task (a secret as a placeholder, say ``<secret:password>`` for ``Hx9!kq2``) is proposed
    in that form, as a model that reads the task would type it."""

    async def reply(messages, params, purpose, context=None):
        out = await gold.reply(messages, params, purpose, context=context)
        shown = context.task if context is not None else task  # the task as the action call shows it
        if isinstance(out, dict) and out.get("value") and shown != task:
            start = next((i for i, (a, b) in enumerate(zip(task, shown)) if a != b), min(len(task), len(shown)))
            end = 0
            while end < min(len(task), len(shown)) - start and task[-1 - end] == shown[-1 - end]:
                end += 1
            given, token = task[start : len(task) - end], shown[start : len(shown) - end]
            if given and out["value"] == given:
                out = {**out, "value": token}
        return out

    return reply


def _story(result, gold, steps) -> str:
    lines = [f"status={result.status} steps={result.steps} error={result.error!r} answer={result.answer!r}"]
    lines += [
        f"  {s.get('step')}. {s.get('action_text')} -> {s.get('result_text')}"
        + (f"  [problem: {s['problem']}]" if s.get("problem") else "")
        for s in steps
    ]
    lines += [f"  gold step {loss['gold_step']} ({loss['step']}): {loss['message']}" for loss in gold.losses]
    return "\n".join(lines)


def _fold(text: str) -> str:
    return " ".join(re.sub(r"[^\w:+]", " ", text).split()).casefold()


@pytest.mark.parametrize("case", sorted(TASKS))
async def test_the_agent_lets_a_perfect_model_reach_the_goal(browser, site, case, tmp_path):
    task = TASKS[case]
    result, gold, _, steps = await _run_case(browser, site, case, tmp_path)
    story = _story(result, gold, steps)
    if task.answer is not None:
        assert result.status == "done" and _fold(task.answer) in _fold(result.answer or ""), story
        if case != "opening_hours":  # the look-up was made on the page
            assert await _page_result(browser) == "ok", story
        else:  # the answer was on the start page: DONE at the first step
            assert result.steps == 1 and browser.page.url == site + task.start, story
    else:
        assert await _page_result(browser) == "ok", story
    # Nothing the perfect model proposed was refused, nor missing from the view. (The
    # delayed booking's "Book now" may be missing for a step while it has not appeared
    # yet: the model waits with a scroll; a refusal is still a loss. On a loaded machine it may
    # appear between the capture and the gold model's look at the live page: "not offered: no
    # line shows" then, the same wait.)
    losses = [loss for loss in gold.losses if not (case == "delayed_booking" and "no line shows" in loss["message"])]
    assert not losses, story


async def test_a_button_whose_effect_comes_later_can_be_pressed_again(browser, site, tmp_path):
    """ "Check availability" answers after 800 ms. A model that sees no answer yet presses
    it again (the page ignores the second press); that must not be refused, and the run
    reaches the booking."""
    task = TASKS["delayed_booking"]
    await open_page(browser, site + task.start)

    def policy(messages, params, purpose, context):
        named = {c.name: i for i, c in reversed(context.controls.items())}  # the first control of each name
        target = "Book now" if "Book now" in named else "Check availability"
        return {"operation": "CLICK", "element_id": named[target]}

    async def page_says_done(step: int):
        return "booked" if await _page_result(browser) == "ok" else None

    backend = FunctionBackend(policy)
    trace = TraceWriter(tmp_path / "trace")
    result = await run_agent(
        browser,
        fake_client(backend),
        task.task,
        options=AgentOptions(max_steps=6),
        trace=trace,
        after_step=page_says_done,
    )
    steps = trace_lines(trace)
    story = "\n".join(f"{s['step']}. {s['action_text']} -> {s['result_text']}" for s in steps)
    reasked = [r for r in backend.requests if str(r["messages"][-1]["content"]).startswith(REASK_PREFIX)]
    assert not reasked, f"refused: {reasked[0]['messages'][-1]['content']}\n{story}"
    assert await _page_result(browser) == "ok", f"status={result.status} {result.error}\n{story}"


# -- what the view shows: live state, and the task as it was given ---------------------------


def _line(prompt: str, name: str) -> str:
    """The control line named ``name`` in the step prompt's page, without its id."""
    page = m.group(1) if (m := _PAGE.search(prompt)) else prompt
    found = re.search(rf'^\[[A-Za-z0-9_-]+\] (.*"{re.escape(name)}".*)$', page, re.MULTILINE)
    assert found, f"no line for {name!r} in:\n{page}"
    return found.group(1)


def _state(prompt: str, name: str) -> str:
    """The control's state as its line shows it (what this run did to it aside)."""
    return re.sub(r" \(you \w+ this at step \d+\)$", "", _line(prompt, name).replace(f'"{name}"', ""))


async def test_the_view_says_what_this_run_did_to_a_control(browser, site, tmp_path):
    """A field typed into says so, with the step, for as long as the page shows it; the
    run's own note is the model's alone (the field typed again is still a change)."""
    result, gold, prompts, steps = await _run_case(browser, site, "retype_email", tmp_path)
    assert result.status == "done" and not gold.losses, _story(result, gold, steps)
    assert "you typed this" not in _line(prompts[0], "Email")
    assert _line(prompts[1], "Email").endswith("(you typed this at step 1)")
    assert _line(prompts[2], "Email").endswith("(you typed this at step 2)")
    assert [s["changed"] for s in steps[:2]] == [True, True]


async def test_the_view_tells_pressed_from_not_pressed(browser, site, tmp_path):
    result, gold, prompts, steps = await _run_case(browser, site, "toggle_bold", tmp_path)
    assert not gold.losses and len(prompts) >= 2, _story(result, gold, steps)
    first, second = prompts[0], prompts[1]
    assert _state(first, "Bold") != _state(first, "Italic")  # off and on look different
    assert _state(first, "Bold") == _state(first, "Underline")  # both off
    assert _state(second, "Bold") == _state(first, "Italic")  # Bold, pressed, now reads as on
    assert _state(second, "Bold") != _state(first, "Bold")


async def test_the_view_shows_an_accordion_opened(browser, site, tmp_path):
    result, gold, prompts, steps = await _run_case(browser, site, "accordion_faq", tmp_path)
    assert not gold.losses and len(prompts) >= 2, _story(result, gold, steps)
    assert _state(prompts[0], "Returns") == _state(prompts[0], "Shipping")  # both closed
    assert _state(prompts[1], "Returns") != _state(prompts[0], "Returns")  # opened
    assert _state(prompts[1], "Shipping") == _state(prompts[0], "Shipping")


async def test_the_view_shows_a_switch_turned_off(browser, site, tmp_path):
    result, gold, prompts, steps = await _run_case(browser, site, "settings_switch", tmp_path)
    assert not gold.losses and len(prompts) >= 2, _story(result, gold, steps)
    assert _state(prompts[0], "Email notifications") == _state(prompts[0], "Weekly summary")  # both on
    assert _state(prompts[0], "Email notifications") != _state(prompts[0], "Push notifications")
    assert _state(prompts[1], "Email notifications") == _state(prompts[0], "Push notifications")  # now off


async def test_the_view_shows_the_option_chosen_over_the_one_the_html_preselected(browser, site, tmp_path):
    result, gold, prompts, steps = await _run_case(browser, site, "delivery_express", tmp_path)
    assert not gold.losses and len(prompts) >= 2, _story(result, gold, steps)
    before, after = _state(prompts[0], "Delivery"), _state(prompts[1], "Delivery")
    assert before != after
    chosen = after.split("options:")[0]  # the state shown before a list of options, if any
    assert "Express delivery" in chosen and "Standard delivery" not in chosen, after


async def test_the_password_reaches_both_fields_and_stays_out_of_the_prompt(browser, site, tmp_path):
    """The second password field gets what the first got: the task the model reads is the
    same at every step (a placeholder for the secret is fine, asterisks that appear once
    the password was typed are not), the password is in no prompt, and both fields hold
    it in the end (the page checks that they match)."""
    secret = "Hx9!kq2"
    result, gold, prompts, steps = await _run_case(browser, site, "signup_password", tmp_path)
    story = _story(result, gold, steps)
    tasks = [m.group(1) for p in prompts if (m := _TASK.search(p))]
    assert len(tasks) == len(prompts) >= 4, story
    assert len(set(tasks)) == 1, tasks
    assert await _page_result(browser) == "ok", story
    assert await browser.page.evaluate("() => document.forms[0].pw2.value") == secret
    assert not [p for p in prompts if secret in p], "the password is in the model's prompt"


# -- invalid actions are still refused, saying why -------------------------------------------


def _refusal(text: str, controls) -> str:
    from webagent.llm.client import Reply
    from webagent.llm.structured import extract_json
    from webagent.web.live_action import Choices, parse_live_action

    action, problem = parse_live_action(Reply(text=text, data=extract_json(text)), Choices(controls))
    assert action is None and problem is not None, f"{text} was accepted as {action}"
    assert problem.kind in ("wrong_operation", "not_offered"), problem
    return problem.message


async def _controls(browser, site):
    from webagent.web.agent_view import build_view

    obs = await open_page(browser, site + "offsite.html")
    controls = build_view(obs.cleaned_html).controls
    by_name = {c.name: i for i, c in controls.items()}
    return obs, controls, by_name


async def test_select_on_a_text_field_is_refused(browser, site):
    _, controls, by_name = await _controls(browser, site)
    field = by_name["Your name"]
    problem = _refusal(json.dumps({"operation": "SELECT", "element_id": field, "value": "Orders"}), controls)
    assert f"[{field}]" in problem and "TYPE" in problem and "SELECT" in problem, problem


async def test_type_on_a_button_is_refused(browser, site):
    _, controls, by_name = await _controls(browser, site)
    button = by_name["Send"]
    problem = _refusal(
        json.dumps({"operation": "TYPE", "element_id": button, "value": "hello", "press_enter": False}), controls
    )
    assert f"[{button}]" in problem and "CLICK" in problem and "TYPE" in problem, problem


async def test_an_id_not_on_the_page_is_refused(browser, site):
    _, controls, _ = await _controls(browser, site)
    missing = str(max(int(i) for i in controls if i.isdigit()) + 1000)
    problem = _refusal(json.dumps({"operation": "CLICK", "element_id": missing}), controls)
    assert missing in problem and "not" in problem, problem


async def test_a_link_off_the_allowed_sites_is_refused(browser, site, tmp_path):
    """In a run: the model clicks the map link; the browser refuses it and the next prompt
    tells the model why; the browser stays on the site."""
    await open_page(browser, site + "offsite.html")
    start = browser.page.url
    histories: list[tuple[str, ...]] = []

    def policy(messages, params, purpose, context):
        histories.append(context.history)
        if not context.history:
            return {"operation": "CLICK", "element_id": context.control_id("link", "the map site")}
        return {"operation": "DONE", "value": ""}

    backend = FunctionBackend(policy)
    result = await run_agent(
        browser,
        fake_client(backend),
        "Open the map",
        options=AgentOptions(max_steps=3, grounded_done=False),  # (DONE only stops the run here)
        trace=TraceWriter(tmp_path / "trace"),
    )
    assert result.steps == 2 and browser.page.url == start
    told = "\n".join(histories[-1])
    assert "not in the allowed domains" in told and "maps.elsewhere.invalid" in told, told
    assert told in prompt_of(backend.requests[-1]["messages"])  # as the model read it
