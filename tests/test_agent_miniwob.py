"""The MiniWoB++ harness: the scripted model scores 100% on the tasks it knows through the
whole agent; an unscripted task scores 0; results resume; another configuration is refused."""

import asyncio
import json

import pytest
from browser_support import requires_chromium

from webagent.agent import AgentOptions
from webagent.errors import UserError
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.miniwob.report import write_reports
from webagent.miniwob.runner import MiniWoBConfig, MiniWoBEval, results, run_miniwob
from webagent.miniwob.scripted import SCRIPTED_TASKS, scripted_reply


def _config(**changes):
    """The configuration of a run with the agent's options ``changes`` (max steps 6 unless said)."""
    return MiniWoBConfig(model="fake:scripted", agent=AgentOptions(**{"max_steps": 6, **changes}), seed=0)


def _run(client, tasks, episodes, out, config, *, concurrency=1, traces=False):
    return run_miniwob(client, MiniWoBEval(tasks, episodes, config, traces=traces), out, concurrency=concurrency)


@pytest.mark.browser
@requires_chromium
async def test_scripted_model_scores_100_percent_and_resumes(tmp_path):
    client = fake_client(FunctionBackend(scripted_reply, name="fake:scripted"))
    tasks = [*SCRIPTED_TASKS, "book-flight"]
    config = _config(screenshots=False, form_check=False)  # one call per step
    rows = await _run(client, tasks, 1, tmp_path, config, concurrency=2, traces=True)
    by_task = {r.task: r for r in rows}
    for task in SCRIPTED_TASKS:
        assert by_task[task].success and by_task[task].raw_reward > 0, by_task[task]
        assert by_task[task].status == "done" and by_task[task].usage["calls"] == by_task[task].steps
    # the scripted model does not know book-flight: it ends without the task judging it, scored -1 as a timeout
    assert not by_task["book-flight"].success and by_task["book-flight"].raw_reward == -1
    assert not by_task["book-flight"].judged and all(by_task[t].judged for t in SCRIPTED_TASKS)
    assert (tmp_path / "traces" / "login-user-0" / "report.html").is_file()

    summary = write_reports(tmp_path, rows, tasks, config.model_dump(mode="json"))
    assert summary["tasks"]["click-button"]["success_rate"] == 1.0
    assert summary["overall"]["success_rate"] == pytest.approx(5 / 6)
    assert (tmp_path / "success_rate.png").stat().st_size > 1000
    assert "| click-button | 1 | 100% |" in (tmp_path / "report.md").read_text()
    assert json.loads((tmp_path / "report.json").read_text())["overall"]["episodes"] == 6

    # Resume: nothing runs again (a model call would be counted), and a second seed is added.
    calls = client.usage.total.calls
    rows = await _run(client, ["click-button"], 2, tmp_path, config)
    assert [r.seed for r in rows] == [0, 1] and client.usage.total.calls == calls + 1
    assert len(results(tmp_path).rows()) == 7

    rows = results(tmp_path).rows()
    assert rows[("click-button", 1)].success  # the second episode started on the loaded page

    with pytest.raises(UserError, match="another configuration"):
        await _run(client, ["click-button"], 1, tmp_path, _config(max_steps=3))


@pytest.mark.browser
@requires_chromium
async def test_an_episode_on_the_loaded_page_is_the_episode_of_a_fresh_page():
    from webagent.miniwob.browser import ReusingEnv, context_session, shared_browser

    async with shared_browser() as shared:
        async with context_session(shared) as browser, ReusingEnv(browser) as env:
            fresh = {}
            for seed in (3, 4):
                await browser.page.goto("about:blank")
                fresh[seed] = (await env.reset("click-checkboxes", seed=seed)).utterance
            await browser.page.evaluate("window.sameDocument = true")
            again = [(await env.reset("click-checkboxes", seed=s)).utterance for s in (4, 3, 4)]
            status = await env.status()
            assert await browser.page.evaluate("window.sameDocument === true")  # not reloaded
    assert fresh[3] != fresh[4] and again == [fresh[4], fresh[3], fresh[4]]
    assert not status.done and status.raw_reward == 0


# --- without a browser: the runner's bookkeeping over fake sessions, environments and agents ----------------


class _FakeSession:
    def __init__(self, fail_after: float | None = None):
        self.fail_after = fail_after

    async def __aenter__(self):
        if self.fail_after is not None:
            await asyncio.sleep(self.fail_after)
            raise RuntimeError("the browser context crashed")
        return self

    async def __aexit__(self, *exc):
        return None


def _fake_env(status_of):
    from webagent.miniwob import MiniWoBEpisode, MiniWoBStatus

    class FakeEnv:
        def __init__(self, browser, **kwargs):
            self.task = self.seed = None

        async def __aenter__(self):
            return self

        async def __aexit__(self, *exc):
            return None

        async def reset(self, task, seed=0):
            self.task, self.seed = task, seed
            return MiniWoBEpisode(task=task, seed=seed, url=f"http://x/{task}", utterance=f"do {task}")

        async def status(self):
            done, raw = status_of(self.task, self.seed)
            return MiniWoBStatus(done=done, raw_reward=raw, reward=raw)

    return FakeEnv


def _patch_runner(monkeypatch, *, env, agent, sessions, events):
    from contextlib import asynccontextmanager

    import webagent.miniwob.runner as runner

    @asynccontextmanager
    async def fake_shared_browser():
        try:
            yield "shared-browser"
        finally:
            events.append("browser closed")

    made = iter(sessions)
    monkeypatch.setattr(runner, "shared_browser", fake_shared_browser)
    monkeypatch.setattr(runner, "context_session", lambda shared: next(made))
    monkeypatch.setattr(runner, "ReusingEnv", env)
    import webagent.agent.loop as loop

    monkeypatch.setattr(loop, "run_agent", agent)  # the episode (webagent.agent.episode) runs the agent


async def test_an_episode_the_task_never_judged_is_unjudged_and_scored_minus_one(tmp_path, monkeypatch):
    """The agent said DONE (or ran out of steps) but the task never judged the episode: MiniWoB's own
    timeout gives -1, and so does the harness; success stays raw reward > 0."""
    from webagent.agent.loop import AgentResult

    judged = {
        "click-button": (True, 1.0),
        "enter-text": (False, 0.0),
        "login-user": (False, 0.0),
        "choose-list": (True, -1.0),
    }
    ends = {"click-button": "done", "enter-text": "done", "login-user": "max_steps", "choose-list": "done"}
    current = {}

    async def agent(browser, client, task, **kwargs):
        name = task.split()[1]
        current["task"] = name
        return AgentResult(status=ends[name], steps=3)

    events = []
    _patch_runner(
        monkeypatch,
        env=_fake_env(lambda task, seed: judged[task]),
        agent=agent,
        sessions=[_FakeSession()],
        events=events,
    )
    tasks = list(judged)
    config = _config(max_steps=3, screenshots=False)
    rows = await _run(None, tasks, 1, tmp_path, config)
    by_task = {r.task: r for r in rows}
    assert by_task["click-button"].judged and by_task["click-button"].raw_reward == 1.0
    assert by_task["choose-list"].judged and by_task["choose-list"].raw_reward == -1.0
    for task in ("enter-text", "login-user"):
        row = by_task[task]
        assert not row.judged and row.raw_reward == -1.0 and row.reward == -1.0 and not row.success
        assert "unjudged" in row.reason
    summary = write_reports(tmp_path, rows, tasks, config.model_dump(mode="json"))
    assert summary["overall"]["mean_raw_reward"] == pytest.approx((1 - 1 - 1 - 1) / 4)
    assert summary["overall"]["success_rate"] == pytest.approx(1 / 4)
    assert summary["overall"]["unjudged"] == 2 and summary["tasks"]["enter-text"]["unjudged"] == 1
    md = (tmp_path / "report.md").read_text()
    assert "unjudged" in md and "| enter-text | 1 | 0% | -1.000 |" in md


async def test_one_workers_exception_cancels_the_others_before_the_browser_closes(tmp_path, monkeypatch):
    """Worker 2's context fails while worker 1 is in its second episode: worker 1 is cancelled (and
    has ended) before the shared browser closes, the error comes out, and the report holds the
    episode that finished."""
    from webagent.agent.loop import AgentResult

    events, calls = [], []

    async def agent(browser, client, task, **kwargs):
        calls.append(task)
        if len(calls) == 1:
            return AgentResult(status="done", steps=1)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            events.append("episode cancelled")
            raise
        events.append("episode finished")  # pragma: no cover - the bug
        return AgentResult(status="done", steps=1)

    _patch_runner(
        monkeypatch,
        env=_fake_env(lambda task, seed: (True, 1.0)),
        agent=agent,
        sessions=[_FakeSession(), _FakeSession(fail_after=0.3)],
        events=events,
    )
    started = asyncio.get_running_loop().time()
    with pytest.raises(RuntimeError, match="the browser context crashed"):
        await _run(None, ["click-button"], 3, tmp_path, _config(max_steps=3, screenshots=False), concurrency=2)
    assert asyncio.get_running_loop().time() - started < 10
    assert events == ["episode cancelled", "browser closed"]
    assert [r.seed for r in results(tmp_path).rows().values()] == [0]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["overall"]["episodes"] == 1 and "| click-button | 0 |" in (tmp_path / "report.md").read_text()


def test_the_scripted_model_clicks_the_button_named_in_the_task_not_the_first():
    from webagent.miniwob.scripted import plan

    page = '[38] button "yes"\ncommodo nisl egestas\n[44] button "previous"\n'
    assert plan('Click on the "previous" button.', page, "") == {"operation": "CLICK", "element_id": "44"}


def test_the_scripted_model_submits_a_list_already_showing_the_option():
    """choose-list's first option can be the one asked for: choosing it again changes nothing
    visible, so the scripted model reads the select's state, not the history, or it would
    choose it until the agent calls the run stuck (seed 3, in two of four runs)."""
    from webagent.miniwob.scripted import plan

    task = "Select Heard Island and McDonald Islands from the list and click Submit."
    shown = '[288] select selected="Heard Island and McDonald Islands" options: "Heard Island and McDonald Islands", "Sudan"\n[310] button "Submit"\n'
    other = (
        '[288] select selected="Sudan" options: "Heard Island and McDonald Islands", "Sudan"\n[310] button "Submit"\n'
    )
    assert plan(task, shown, "1. SELECT [288] -> no visible change") == {"operation": "CLICK", "element_id": "310"}
    assert plan(task, other, "") == {
        "operation": "SELECT",
        "element_id": "288",
        "value": "Heard Island and McDonald Islands",
    }
