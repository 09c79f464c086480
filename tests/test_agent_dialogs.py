"""Confirm dialogs the task asked for (issue 33, item 3): a ``confirm()`` raised by the model's
own click is held open and shown to the model, which answers it (DIALOG accept or dismiss).

``fixtures/agent_unseen/confirm_delete.html`` deletes its post only after an accepted
confirm ("Delete this post? This cannot be undone."); it records its verdict in
``document.body.dataset.result`` ("ok" once deleted, "wrong" after another change).

* Browser level: a CLICK that raises the confirm returns at once with the dialog open
  (``ActionResult.dialog``, and a note that says how to answer); DIALOG accept deletes the
  post, DIALOG dismiss keeps it; a prompt is answered with a text; a dialog left unanswered
  is dismissed by the next action, capture or ``close()``; a timer's confirm is not held.
* The live agent: the step's result and the next prompt show the dialog's text, the reply
  schema offers only its answers and DONE, the model accepts and the page says "ok"; the
  trace keeps the message and the answer. A run that ends with a dialog open dismisses it.
* ``accept_dialogs=True`` stays a fixed policy: the confirm is accepted at once, as before.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
import pytest_asyncio
from agent_support import prompt_of
from browser_support import one_id, open_page, requires_chromium

from webagent.agent import AgentOptions, run_agent
from webagent.apps.spec import Task
from webagent.browser import Action, BrowserSession
from webagent.demo_site import serve_directory
from webagent.llm.client import Reply
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.trace.writer import TraceWriter
from webagent.web.agent_view import build_view
from webagent.web.live_action import Choices, live_action_schema, parse_live_action

pytestmark = [pytest.mark.browser, requires_chromium, pytest.mark.asyncio(loop_scope="module")]
PAGES = Path(__file__).parent / "fixtures" / "agent_unseen"
TASK = Task.model_validate(json.loads((PAGES / "confirm_delete.json").read_text(encoding="utf-8")))
RESULT_JS = "() => (document.body && document.body.dataset.result) || ''"
MESSAGE = "Delete this post? This cannot be undone."
DELETE = "//button[@id='delete']"


@pytest.fixture(scope="module")
def site():
    base, stop = serve_directory(PAGES)
    yield base
    stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser():
    async with BrowserSession(allowed_domains=["127.0.0.1"], settle_timeout_s=2.0) as browser:
        yield browser


async def _verdict(browser) -> tuple[str, str]:
    page = browser.page
    return await page.evaluate(RESULT_JS), (await page.text_content("#msg") or "")


# -- the browser ------------------------------------------------------------------------------


async def test_a_click_that_asks_returns_with_the_dialog_open_and_accept_deletes(browser, site):
    obs = await open_page(browser, site + TASK.start)
    t0 = time.perf_counter()
    asked = await browser.act(Action(op="CLICK", element_id=one_id(obs, DELETE)), obs)
    assert time.perf_counter() - t0 < browser.action_timeout_s  # it did not wait for an answer
    assert asked.ok and asked.dialog is not None
    assert (asked.dialog.kind, asked.dialog.message, asked.dialog.answer) == ("confirm", MESSAGE, None)
    assert asked.note.startswith(f'the page asks (confirm): "{MESSAGE}" -- answer it: DIALOG accept or DIALOG dismiss')
    assert browser.dialog == asked.dialog

    answered = await browser.act(Action(op="DIALOG", value="accept"))
    assert answered.ok and answered.dialog is not None and answered.dialog.answer == "accept"
    assert f"dialog confirm {MESSAGE!r} accepted" in answered.note
    assert browser.dialog is None
    assert await _verdict(browser) == ("ok", "Post deleted.")
    assert "Trip notes" not in (await browser.observe()).cleaned_html


async def test_dismiss_keeps_the_post(browser, site):
    obs = await open_page(browser, site + TASK.start)
    asked = await browser.act(Action(op="CLICK", element_id=one_id(obs, DELETE)), obs)
    assert asked.dialog is not None
    answered = await browser.act(Action(op="DIALOG", value="dismiss"))
    assert answered.ok and answered.dialog.answer == "dismiss" and "dismissed (answered Cancel)" in answered.note
    assert await _verdict(browser) == ("", "The post was kept.")
    assert "Trip notes" in (await browser.observe()).cleaned_html


async def test_dialog_without_one_open_fails_and_says_why(browser, site):
    await open_page(browser, site + TASK.start)
    result = await browser.act(Action(op="DIALOG", value="accept"))
    assert not result.ok and "no dialog is open" in result.error


async def test_a_prompt_is_answered_with_a_text(browser, site):
    obs = await open_page(browser, site + TASK.start)
    await browser.page.evaluate(
        "document.getElementById('edit').onclick = () => { document.getElementById('msg').textContent ="
        " String(prompt('New title?', 'Trip notes')); }"
    )
    asked = await browser.act(Action(op="CLICK", element_id=one_id(obs, "//button[@id='edit']")), obs)
    assert asked.dialog and asked.dialog.kind == "prompt" and asked.dialog.default_value == "Trip notes"
    assert 'the page asks (prompt): "New title?"' in asked.note
    answered = await browser.act(Action(op="DIALOG", value="accept", text="Train notes"))
    assert answered.dialog.answer == "accept 'Train notes'" and "accepted with 'Train notes'" in answered.note
    assert (await _verdict(browser))[1] == "Train notes"


async def test_a_dialog_left_unanswered_is_dismissed_by_the_next_capture(browser, site):
    obs = await open_page(browser, site + TASK.start)
    await browser.act(Action(op="CLICK", element_id=one_id(obs, DELETE)), obs)
    again = await browser.observe()  # a modal dialog blocks the page: it is dismissed first
    assert browser.dialog is None and "Trip notes" in again.cleaned_html
    assert f"dialog confirm {MESSAGE!r} dismissed (answered Cancel): it was not answered" in browser.events[-1]
    assert await _verdict(browser) == ("", "The post was kept.")


async def test_a_timers_confirm_is_not_held(browser, site):
    obs = await open_page(browser, site + TASK.start)
    await browser.page.evaluate("setTimeout(() => { document.body.dataset.answer = String(confirm('Later?')); }, 100)")
    await asyncio.sleep(0.5)  # no action in flight: today's policy, dismissed at once
    assert browser.dialog is None and await browser.page.evaluate("document.body.dataset.answer") == "false"
    nxt = await browser.act(Action(op="SCROLL", direction="down"), obs)
    assert "before this action: dialog confirm 'Later?' dismissed" in nxt.note


async def test_close_dismisses_a_dialog_left_open(site):
    browser = BrowserSession(settle_timeout_s=2.0)
    async with browser:
        obs = await open_page(browser, site + TASK.start)
        await browser.act(Action(op="CLICK", element_id=one_id(obs, DELETE)), obs)
        assert browser.dialog is not None
        t0 = time.perf_counter()
    assert time.perf_counter() - t0 < 5
    assert browser.events[-1].endswith("dismissed (answered Cancel): the browser closed")


async def test_accept_dialogs_accepts_the_confirm_at_once(site):
    async with BrowserSession(settle_timeout_s=2.0, accept_dialogs=True) as browser:
        obs = await open_page(browser, site + TASK.start)
        clicked = await browser.act(Action(op="CLICK", element_id=one_id(obs, DELETE)), obs)
        assert clicked.ok and clicked.dialog is None and browser.dialog is None
        assert f"dialog confirm {MESSAGE!r} accepted (answered OK)" in clicked.note
        assert await _verdict(browser) == ("ok", "Post deleted.")


# -- what the model may answer -----------------------------------------------------------------


async def test_while_a_dialog_is_open_only_its_answers_and_done_are_choices():
    controls = build_view('<html><body><button backend_node_id="5">Delete post</button></body></html>').controls
    confirm, prompt = Choices(controls, can_back=True, dialog="confirm"), Choices(controls, dialog="prompt")
    assert confirm.operations() == ["DIALOG", "DONE"] and Choices(controls).operations()[0] == "CLICK"
    branches = live_action_schema(confirm)["properties"]["action"]["anyOf"]
    assert [b["properties"]["operation"]["enum"] for b in branches] == [["DIALOG"], ["DONE"]]
    assert branches[0]["properties"]["value"]["enum"] == ["accept", "dismiss"]
    assert len(live_action_schema(prompt)["properties"]["action"]["anyOf"]) == 3  # accept + text, dismiss, DONE

    def parse(data, choices):
        return parse_live_action(Reply(text=json.dumps(data), data=data), choices)

    action, problem = parse({"action": {"operation": "CLICK", "element_id": "5"}}, confirm)
    assert action is None and problem is not None and problem.kind == "not_offered"
    assert "answer it first" in problem.message and "DIALOG, DONE" in problem.message
    action, problem = parse({"operation": "DIALOG", "value": "Accept"}, confirm)
    assert problem is None and (action.value, action.describe()) == ("accept", "DIALOG accept")
    action, problem = parse({"operation": "DIALOG", "value": "maybe"}, confirm)
    assert action is None and problem is not None and problem.kind == "bad_value" and "accept" in problem.message
    action, problem = parse({"operation": "DIALOG", "value": "accept", "text": "Ann"}, prompt)
    assert problem is None and action.text == "Ann" and action.describe() == 'DIALOG accept "Ann"'
    action, problem = parse({"operation": "DIALOG", "value": "accept"}, Choices(controls))
    assert action is None and problem is not None and "no dialog is open" in problem.message


# -- the live agent ----------------------------------------------------------------------------


def _model(answer: str | None, seen: list[dict]):
    """Clicks "Delete post"; while the page shows a dialog, answers it with ``answer`` (or
    DONE when None); DONE once the post is gone or kept."""

    def fn(messages, params, purpose, context):
        prompt, last = prompt_of(messages), str(messages[-1]["content"])
        ops = [
            b["properties"]["operation"]["enum"][0]
            for b in params["response_format"]["json_schema"]["schema"]["properties"]["action"]["anyOf"]
        ]
        seen.append({"prompt": prompt, "last": last, "ops": ops, "page": context.page})
        if context.dialog:
            return {
                "action": {"operation": "DIALOG", "value": answer} if answer else {"operation": "DONE", "value": ""}
            }
        if "Post deleted." in context.page or "The post was kept." in context.page:
            return {"action": {"operation": "DONE", "value": ""}}
        return {"action": {"operation": "CLICK", "element_id": context.control_id("button", "Delete post")}}

    return fn


async def _run(browser, site, tmp_path, answer: str | None):
    await open_page(browser, site + TASK.start)
    seen: list[dict] = []
    trace = TraceWriter(tmp_path / "trace")
    result = await run_agent(
        browser,
        fake_client(FunctionBackend(_model(answer, seen))),
        TASK.task,
        trace=trace,
        options=AgentOptions(max_steps=5, screenshots=False),
    )
    steps = [json.loads(line) for line in (trace.folder / "steps.jsonl").read_text().splitlines()]
    run = json.loads((trace.folder / "run.json").read_text())
    return result, seen, steps, run


async def test_the_agent_sees_the_dialog_and_accepts_it(browser, site, tmp_path):
    result, seen, steps, _ = await _run(browser, site, tmp_path, "accept")
    assert result.status == "done" and result.failed_steps == 0 and result.steps == 3
    assert (await _verdict(browser))[0] == "ok"
    asked = f'the page asks (confirm): "{MESSAGE}" -- answer it: DIALOG accept or DIALOG dismiss'
    assert steps[0]["result_text"] == asked
    # the next step: the same page, the dialog's text, and only its answers (and DONE) to choose
    assert asked in seen[1]["prompt"]
    assert f'The page shows a dialog (confirm): "{MESSAGE}"' in seen[1]["last"]
    assert "Trip notes" in seen[1]["page"]
    assert seen[0]["ops"][0] == "CLICK" and seen[1]["ops"] == ["DIALOG", "DONE"]
    assert steps[1]["action_text"] == "DIALOG accept" and steps[1]["dialog"]["message"] == MESSAGE
    assert steps[1]["result"]["dialog"] == {
        "kind": "confirm",
        "message": MESSAGE,
        "default_value": "",
        "answer": "accept",
    }
    assert steps[1]["result_text"].startswith('ok; the page now shows "Post deleted."')
    assert "Post deleted." in seen[2]["page"] and seen[2]["ops"][0] == "CLICK"


async def test_the_agent_may_dismiss_it(browser, site, tmp_path):
    result, _, steps, _ = await _run(browser, site, tmp_path, "dismiss")
    assert result.status == "done" and await _verdict(browser) == ("", "The post was kept.")
    assert steps[1]["result"]["dialog"]["answer"] == "dismiss"


async def test_a_dialog_open_when_the_run_ends_is_dismissed(browser, site, tmp_path):
    result, _, steps, run = await _run(browser, site, tmp_path, None)  # DONE while the dialog is open
    assert result.status == "done" and browser.dialog is None
    assert run["dialog_left_open"] == f"dialog confirm {MESSAGE!r} dismissed (answered Cancel): the run ended"
    assert await _verdict(browser) == ("", "The post was kept.")


async def test_with_accept_dialogs_the_agent_never_sees_the_dialog(site, tmp_path):
    async with BrowserSession(allowed_domains=["127.0.0.1"], settle_timeout_s=2.0, accept_dialogs=True) as browser:
        result, seen, steps, _ = await _run(browser, site, tmp_path, "dismiss")
        assert result.status == "done" and result.steps == 2
        assert await _verdict(browser) == ("ok", "Post deleted.")
    assert f"dialog confirm {MESSAGE!r} accepted (answered OK)" in steps[0]["result_text"]
    assert all("DIALOG" not in s["ops"] for s in seen)


# -- the gold path: a dialog step ----------------------------------------------------------------


async def test_the_gold_path_accepts_the_dialog_with_playwright_alone(site):
    """``{"op": "dialog", "value": "accept"}`` after the click: Playwright alone, told before the
    click, accepts it (``gold.answer_next_dialog``, as ``gold.follow`` does)."""
    from playwright.async_api import async_playwright

    from webagent.apps.gold import answer_next_dialog, do_step, launch_browser

    assert [s.op for s in TASK.gold] == ["click", "dialog"]
    async with async_playwright() as pw:
        chromium = await launch_browser(pw)
        page = await chromium.new_page()
        await page.goto(site + TASK.start)
        answer_next_dialog(page, TASK.gold[1].value)
        for step in TASK.gold:
            await do_step(page, step)
        await page.wait_for_function("() => document.body.dataset.result")
        assert await page.evaluate(RESULT_JS) == "ok"
        await chromium.close()


async def test_the_ceilings_gold_model_answers_the_dialog_through_the_agent(browser, site):
    from webagent.apps.ceiling import GoldModel

    await open_page(browser, site + TASK.start)
    gold = GoldModel(TASK, browser)
    result = await run_agent(
        browser, fake_client(gold.backend()), TASK.task, options=AgentOptions(max_steps=4, screenshots=False)
    )
    assert (await _verdict(browser))[0] == "ok", (result, gold.losses)
    assert gold.losses == [] and gold.naming == []
