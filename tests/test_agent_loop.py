"""The live loop in a real browser with function-driven fake models: failures become
observations, stuck and max-steps endings, re-asked unusable replies, dry runs, the
navigation guard, password redaction, and gist reuse across steps."""

import json
import re
from pathlib import Path

import pytest
import pytest_asyncio
from agent_support import prompt_of, trace_lines
from browser_support import requires_chromium

from webagent.agent import AgentOptions, run_agent
from webagent.agent.mind2web_export import Mind2WebRecorder
from webagent.agent.report import write_report
from webagent.browser import REDACTED, BrowserSession
from webagent.browser.errors import CaptureError
from webagent.demo_site import serve_directory
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.trace.writer import TraceWriter

pytestmark = [pytest.mark.browser, requires_chromium, pytest.mark.asyncio(loop_scope="module")]
PAGES = Path(__file__).parent / "fixtures" / "agent_pages"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser():
    async with BrowserSession() as browser:
        yield browser


@pytest.fixture(scope="module")
def site():
    base, stop = serve_directory(PAGES)
    yield base
    stop()


async def _run(browser, url, policy, tmp_path, **options):
    browser.guard = None
    assert (await browser.open(url)).ok
    backend = FunctionBackend(policy)
    trace = TraceWriter(tmp_path / "trace")
    lines: list[str] = []
    recorder = options.pop("recorder", None)
    result = await run_agent(
        browser,
        fake_client(backend),
        "log in as ada",
        options=AgentOptions(**options),
        trace=trace,
        progress=lines.append,
        recorder=recorder,
    )
    write_report(trace.folder)
    return result, backend, trace_lines(trace), lines


async def test_a_failed_action_is_an_observation_and_three_in_a_row_are_stuck(browser, site, tmp_path):
    def policy(messages, params, purpose, context):
        return {"operation": "CLICK", "element_id": context.control_id("button", "Old login"), "value": ""}

    result, backend, steps, lines = await _run(browser, site + "login.html", policy, tmp_path)
    assert (result.status, result.steps, result.failed_steps) == ("stuck", 3, 3)
    # A disabled button is shown, not offered: the reply is refused (and re-asked once) with why.
    assert all("button 'Old login' is disabled" in s["problem"] and not s["ok"] for s in steps)
    # The next prompt shows the first step's failure in its history.
    third = prompt_of(backend.requests[2]["messages"])
    assert re.search(r"^1\. no usable action \(\[\d+\] button 'Old login' is disabled\) -> failed", third, re.MULTILINE)
    assert len(lines) == 3 and lines[0].startswith("step 1: http://127.0.0.1")


async def test_an_unusable_reply_is_reasked_once_then_a_failed_step(browser, site, tmp_path):
    result, backend, steps, _ = await _run(
        browser, site + "login.html", lambda m, p, purpose: "I am not sure.", tmp_path
    )
    assert (result.status, result.steps) == ("stuck", 3)
    assert len(backend.requests) == 6  # each step: the question and one re-ask
    assert "could not be used" in backend.requests[1]["messages"][-1]["content"]
    for s in steps:
        assert s["action"] is None and s["result"] is None and s["failures"] == 1 and s["problem"]
        assert s["action_text"].startswith("no usable action")
    assert browser.page.url == site + "login.html"


async def test_password_is_redacted_everywhere(browser, site, tmp_path):
    secret = "s3cret-pw-771"

    def policy(messages, params, purpose, context):
        done = len(context.history)
        if done < 1:
            return {"operation": "TYPE", "element_id": context.control_id("text field", "User"), "value": "ada"}
        if done < 2:
            return {
                "operation": "TYPE",
                "element_id": context.control_id("password field", "Password"),
                "value": secret,
            }
        if done < 3:
            return {"operation": "CLICK", "element_id": context.control_id("button", "Log in"), "value": ""}
        assert secret not in prompt_of(messages)  # the model's own history is redacted too
        return {"operation": "DONE", "element_id": "", "value": "logged in"}

    recorder = Mind2WebRecorder(tmp_path / "records", "log in as ada", site, run_id="pw")
    # (its DONE's words are no page's: the answer's grounding is test_agent_guards')
    result, _, steps, lines = await _run(
        browser, site + "login.html", policy, tmp_path, recorder=recorder, grounded_done=False
    )
    assert result.status == "done" and result.steps == 4
    assert await browser.page.input_value("#pw") == secret  # it was typed for real
    assert "Welcome ada" in await browser.page.inner_text("#msg")
    folder = tmp_path / "trace"
    for path in [*folder.iterdir(), recorder.path]:
        if path.suffix in (".jsonl", ".json", ".html"):
            assert secret not in path.read_text(), path
    assert secret not in "\n".join(lines)
    assert steps[1]["action"]["value"] == REDACTED and REDACTED in steps[1]["action_text"]
    assert json.loads(recorder.path.read_text())[0]["actions"][1]["operation"]["value"] == REDACTED


async def test_navigation_to_another_domain_is_refused_and_reported(browser, site, tmp_path):
    def policy(messages, params, purpose, context):
        if not context.history:
            return {"operation": "CLICK", "element_id": context.control_id("link", "A special offer")}
        return {"operation": "DONE", "element_id": "", "value": "Members area"}  # (the page's words: taken)

    result, _, steps, _ = await _run(browser, site + "login.html", policy, tmp_path)
    assert result.status == "done"
    assert not steps[0]["ok"] and "not in the allowed domains" in steps[0]["result_text"]
    assert steps[0]["result"]["blocked_navigation"] == "http://elsewhere.invalid/offer.html"
    assert "refused" in steps[0]["result_text"]
    assert browser.page.url == site + "login.html"


async def test_dry_run_predicts_without_executing(browser, site, tmp_path):
    def policy(messages, params, purpose, context):
        return {"operation": "TYPE", "element_id": context.control_id("text field", "User"), "value": "ada"}

    result, _, steps, _ = await _run(browser, site + "login.html", policy, tmp_path, dry_run=True)
    assert result.status == "stuck" and result.steps == 3
    assert all(s["result_text"] == "not executed (dry run)" and s["result"] is None for s in steps)
    assert await browser.page.input_value("#user") == ""


async def test_max_steps_and_gist_reuse_when_one_element_changes(browser, site, tmp_path):
    def policy(messages, params, purpose, context):
        if purpose == "gist":  # a gist call has no typed context: its prompt is the snippet
            return "gist: " + " ".join(prompt_of(messages).split("Snippet:", 1)[-1].split()[:12])
        if purpose == "lookup":
            return {"pages": [0], "reason": "the button"}
        return {"operation": "CLICK", "element_id": context.control_id("button", "Add one"), "value": ""}

    result, backend, steps, _ = await _run(
        browser, site + "counter.html", policy, tmp_path, max_steps=3, lookup="always", budget_words=60
    )
    assert (result.status, result.steps, result.failed_steps) == ("max_steps", 3, 0)
    assert await browser.page.inner_text("#count") == "3"
    gist_calls = [s["usage"]["by_purpose"]["gist"]["calls"] for s in steps]
    assert steps[0]["snippets"] >= 5 and gist_calls[0] == steps[0]["snippets"]
    assert gist_calls[1] <= 2 and gist_calls[2] <= 2  # only the snippet with the counter is gisted again
    assert steps[1]["gists_reused"] == steps[1]["snippets"] - gist_calls[1]
    assert steps[0]["raw_words"] > steps[0]["context_words"] > 0


async def test_a_model_endpoint_that_fails_ends_the_run_with_error(browser, site, tmp_path):
    from webagent.llm.client import TransientError

    def down(messages, params, purpose):
        raise TransientError("connection refused")

    result, backend, steps, _ = await _run(browser, site + "login.html", down, tmp_path)
    assert (result.status, result.steps) == ("error", 1)
    assert "model endpoint failed" in result.error and steps[0]["action"] is None
    assert len(backend.requests) == 5  # the first try and four retries, then no re-ask


def _schema_of(request) -> dict:
    return request["params"]["response_format"]["json_schema"]["schema"]


def _offered(schema: dict, op: str) -> dict[str, list]:
    """id -> the values the schema allows for ``op`` (None: any value)."""
    found: dict[str, list] = {}
    for branch in schema["properties"]["action"]["anyOf"]:
        props = branch["properties"]
        if props["operation"]["enum"] == [op]:
            for i in props["element_id"]["enum"]:
                found[i] = props.get("value", {}).get("enum")
    return found


async def _clock_run(browser, site, tmp_path, task, policy, max_steps, **options):
    browser.guard = None
    assert (await browser.open(site + "clock.html")).ok
    backend = FunctionBackend(policy)
    trace = TraceWriter(tmp_path / "trace")
    result = await run_agent(
        browser, fake_client(backend), task, options=AgentOptions(max_steps=max_steps, **options), trace=trace
    )
    return result, backend, trace_lines(trace)


async def test_a_clock_ticking_is_no_change_and_nothing_is_withheld(browser, site, tmp_path):
    """A page with a clock that ticks every 50 ms while the model thinks: a button that does
    nothing and the option a select already shows are "no visible change" (the clock aside);
    everything stays on offer (a note, not a ban: the loop breaker off; on, an action that changed
    nothing leaves the next step's choices, test_agent_guards); a button that changes the page is
    "ok" and says what the page now shows."""
    import time

    def policy(messages, params, purpose, context):
        time.sleep(0.3)  # the model thinks; the clock ticks
        if purpose == "form_check":
            return {"fix": "", "ready": True}
        n = len(calls)
        calls.append(n)
        if n == 0:
            return {"operation": "CLICK", "element_id": context.control_id("button", "Does nothing")}
        if n == 1:
            return {"operation": "SELECT", "element_id": context.control_id("select"), "value": "Red"}
        return {"operation": "CLICK", "element_id": context.control_id("button", "Add one")}

    calls: list[int] = []
    result, backend, steps = await _clock_run(
        browser, site, tmp_path, "Choose a colour, then add one.", policy, 4, loop_breaker=False
    )
    assert [s["result_text"].split(";")[0].split(" (")[0] for s in steps] == [
        "no visible change",
        "no visible change",
        "ok",
        "ok",
    ]
    assert [s["changed"] for s in steps] == [False, False, True, True]
    nothing = steps[0]["action"]["element_id"]
    select = steps[1]["action"]["element_id"]
    schemas = [_schema_of(r) for r in backend.requests if r["purpose"] == "action"]
    assert all(nothing in _offered(schema, "CLICK") for schema in schemas)
    assert all(_offered(schema, "SELECT")[select] == ["Red", "Green", "Blue"] for schema in schemas)
    assert "the page now shows" in steps[2]["result_text"]
    assert result.status == "max_steps"


async def test_the_runs_note_marks_the_control_it_acted_on_not_its_namesakes():
    """Six selects named "Quantity" on a shop page: choosing one marks that one alone."""
    from webagent.agent.state import RunState
    from webagent.html import Snippet
    from webagent.web.agent_view import Control

    controls = {i: Control(id=i, op="SELECT", kind="select", name="Quantity", options=("1", "2")) for i in "45"}
    text = '[4] select "Quantity" selected="2"\n[5] select "Quantity" selected="1"\n[9] button "Add to cart"'
    state = RunState(task="Add two packs.", options=AgentOptions())
    chosen = controls["4"]
    state.did[(chosen.id, chosen.describe())] = "you chose this at step 1"
    [shown] = state.annotated([Snippet(0, ["4", "5", "9"], text, len(text.split()))], controls)
    assert shown.text.splitlines() == [
        '[4] select "Quantity" selected="2" (you chose this at step 1)',
        '[5] select "Quantity" selected="1"',
        '[9] button "Add to cart"',
    ]
    # A new document that gives id 4 to another kind of control carries no note.
    other = {"4": Control(id="4", op="TYPE", kind="text field", name="Quantity")}
    [again] = state.annotated([Snippet(0, ["4"], '[4] text field "Quantity"', 4)], other)
    assert again.text == '[4] text field "Quantity"'


async def test_a_reload_of_the_same_page_keeps_its_ids(browser, site, tmp_path):
    """ "Show All" loads the same URL again: every node is new to the browser, but the model
    keeps the ids it read, the conversation says the page is the same instead of sending it
    again, and an action on a kept id reaches the new document's element (the loop breaker off:
    the second click changed nothing again)."""

    def policy(messages, params, purpose, context):
        if purpose == "form_check":
            return {"fix": "", "ready": True}
        seen.append((context.control_id("link", "Show All"), context.control_id("text field", "Filter")))
        last.append(str(messages[-1]["content"]))
        if len(seen) <= 2:
            return {"operation": "CLICK", "element_id": seen[-1][0]}
        return {"operation": "TYPE", "element_id": seen[-1][1], "value": "abc", "press_enter": False}

    seen: list[tuple[str, str]] = []
    last: list[str] = []
    browser.guard = None
    assert (await browser.open(site + "list.html")).ok
    trace = TraceWriter(tmp_path / "trace")
    await run_agent(
        browser,
        fake_client(FunctionBackend(policy)),
        "Filter by abc",
        options=AgentOptions(max_steps=3, loop_breaker=False),
        trace=trace,
    )
    steps = trace_lines(trace)
    assert len(set(seen)) == 1, seen  # the same two ids at every step
    assert [s["result_text"].split(";")[0] for s in steps[:2]] == ["no visible change", "no visible change"]
    # only the link's own line is new ("you clicked this at step 1"); the list is not sent again
    assert "The page changed; these lines are new or changed" in last[1]
    assert f'[{seen[0][0]}] link "Show All" (you clicked this at step 1)' in last[1]
    assert "Issue 40" not in last[1]
    assert steps[2]["result_text"].startswith("ok") and "Filtering: abc" in steps[2]["result_text"]


class _FirstCaptureEmpty:
    """The session, but its first capture is of a document that has not loaded yet: the
    same address, nothing in it (as a click that navigated can leave on a busy machine);
    with ``fail_next``, the capture after it fails."""

    def __init__(self, browser, fail_next: bool = False):
        self._browser, self.captures, self.fail_next = browser, 0, fail_next

    def __getattr__(self, name):
        return getattr(self._browser, name)

    async def observe(self, **options):
        self.captures += 1
        obs = await self._browser.observe(**options)
        if self.captures == 2 and self.fail_next:
            raise CaptureError("the page could not be captured")
        if self.captures > 1:
            return obs
        empty = "<html><body></body></html>"
        return obs.model_copy(update={"title": "", "raw_html": empty, "cleaned_html": empty, "elements": {}})


async def test_an_empty_capture_is_looked_at_again_before_a_step_is_spent_on_it(browser, site, tmp_path):
    def policy(messages, params, purpose, context):
        if not context.history or "Log in" not in "\n".join(context.history):
            return {"operation": "CLICK", "element_id": context.control_id("button", "Log in"), "value": ""}
        return {"operation": "DONE", "element_id": "", "value": "clicked"}

    loading = _FirstCaptureEmpty(browser)
    result, backend, steps, _ = await _run(loading, site + "login.html", policy, tmp_path, grounded_done=False)
    # The page was captured again before step 1 was spent on nothing: step 1 acts on it.
    assert steps[0]["controls"] > 0 and steps[0]["ok"] and "Log in" in steps[0]["action_text"]
    assert not any(s.get("problem") for s in steps)
    assert result.status == "done" and result.steps == 2 and loading.captures >= 2


async def test_a_second_look_that_cannot_capture_keeps_the_page_as_seen(browser, site, tmp_path):
    def policy(messages, params, purpose, context):
        return {"operation": "CLICK", "element_id": context.control_id("button", "Log in"), "value": ""}

    loading = _FirstCaptureEmpty(browser, fail_next=True)
    result, _, steps, _ = await _run(loading, site + "login.html", policy, tmp_path)
    # Step 1 still sees the empty page (its second look failed): a failed step, nothing done;
    # step 2 sees the page captured again after it.
    assert steps[0]["problem"] == "the page shows nothing to act on" and steps[0]["controls"] == 0
    assert steps[1]["controls"] > 0 and steps[1]["ok"] and result.status != "error" and loading.captures >= 3
