"""One run path (issue 46, item 3): ``webagent run`` is an episode like the evaluators' —
the demo shop's (``DemoEpisode``) or any page's (``PageEpisode``) — run by ``run_episode``,
with what the command guarantees kept: the trace, the report and the records, ``run.json``
when it fails before its first step, the model opened only once the page has; a run's and a
replay's ``RunResult`` filled in one place; and the live agent's uncached model view."""

import asyncio
import json
from pathlib import Path

import pytest
from browser_support import requires_chromium
from replay_support import demo_policy

from webagent import Agent, RunResult
from webagent.agent import episode
from webagent.agent.demo_episode import DemoEpisode
from webagent.agent.episode import PageEpisode
from webagent.agent.loop import AgentResult
from webagent.demo_site import serve_directory
from webagent.errors import UserError
from webagent.llm.cache import Cache
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.replay.runner import ReplayResult

PAGES = Path(__file__).parent / "fixtures" / "agent_pages"


@pytest.fixture
def episodes(monkeypatch):
    """The episodes ``webagent run`` hands to ``run_episode`` (which then runs them as usual)."""
    seen: list = []
    real = episode.run_episode

    async def spy(task, *args, **kwargs):
        seen.append(task)
        return await real(task, *args, **kwargs)

    monkeypatch.setattr(episode, "run_episode", spy)
    return seen


def _add_one_twice(messages, params, purpose, context=None):
    if purpose == "form_check":
        return {"fix": "", "ready": True}
    if len(context.history) >= 2:
        return {"operation": "DONE", "element_id": "", "value": "2"}  # (the count the page shows)
    return {"operation": "CLICK", "element_id": context.control_id("button", "Add one")}


@pytest.mark.browser
@requires_chromium
def test_a_run_on_any_page_is_a_page_episode(tmp_path, episodes):
    base, stop = serve_directory(PAGES)
    said: list[str] = []
    try:
        agent = Agent(
            "Add one, twice.",
            url=base + "counter.html",
            llm=fake_client(_add_one_twice),
            max_steps=5,
            trace_dir=tmp_path / "t",
            record_dir=tmp_path / "rec",
        )
        result = agent.run_sync(progress=said.append)
    finally:
        stop()
    assert [type(e) for e in episodes] == [PageEpisode] and episodes[0].url == base + "counter.html"
    assert said[0] == f"opened {base}counter.html; trace in {tmp_path / 't'}"
    assert (result.status, result.answer, result.steps) == ("done", "2", 3)
    assert result.final_url == base + "counter.html" and result.final_title == "Counter"
    assert result.demo_order_placed is None and agent.demo_orders is None
    run = json.loads((tmp_path / "t" / "run.json").read_text())
    assert (run["status"], run["steps"], run["final_url"]) == ("done", 3, base + "counter.html")
    assert (tmp_path / "t" / "report.html").is_file()
    records = json.loads((tmp_path / "rec" / "live" / "t.json").read_text())
    assert [a["operation"]["op"] for a in records[0]["actions"]] == ["CLICK", "CLICK"]


@pytest.mark.browser
@requires_chromium
def test_the_demo_is_the_shops_episode_and_the_shop_confirms_the_order(tmp_path, episodes):
    agent = Agent("", demo=True, llm=fake_client(demo_policy), max_steps=8, trace_dir=tmp_path / "t")
    result = agent.run_sync()
    assert [type(e) for e in episodes] == [DemoEpisode] and episodes[0].url.endswith("/index.html")
    # the shop's confirmation ended the run (its word, not the model's DONE) and judged it
    assert (result.status, result.answer, result.steps) == ("done", "the shop confirmed the order", 5)
    assert result.demo_order_placed is True
    assert agent.demo_orders == "the shop recorded: book b6 for ada lovelace, express"


@pytest.mark.browser
@requires_chromium
def test_the_model_is_opened_once_the_page_has_and_an_early_failure_is_in_the_trace(tmp_path):
    """A model that does not load fails the run only after its page opened; a page that does
    not open fails it first. Either way run.json says so and report.html shows it."""
    base, stop = serve_directory(PAGES)
    try:
        for url, why in (
            (base + "counter.html", "unknown fake model 'fake:nope'"),
            ("http://127.0.0.1:9/", "cannot open"),
        ):
            trace = tmp_path / why.split()[0]
            with pytest.raises(UserError, match=why):
                Agent("Add one.", url=url, model="fake:nope", trace_dir=trace).run_sync()
            run = json.loads((trace / "run.json").read_text())
            assert run["status"] == "error" and run["error"].startswith(why) and run["steps"] == 0
            assert run["start_url"] == url and (trace / "report.html").is_file()
    finally:
        stop()


def test_a_run_and_a_replay_fill_their_result_the_same_way():
    common = dict(status="done", answer="ok", final_url="http://x/end", final_title="End", steps=2, usage={"calls": 1})
    ran = AgentResult(**common, trace_dir="t", error=None, failed_steps=1)
    assert RunResult.of(ran, wall_s=1.5) == RunResult(**common, failed_steps=1, wall_s=1.5, trace_dir=Path("t"))
    replayed = ReplayResult(**common, trace_dir="t", replayed=2)
    assert RunResult.of(replayed, replayed=replayed.replayed, saved_as="w") == RunResult(
        **common,
        replayed=2,
        saved_as="w",
        trace_dir=Path("t"),
    )


def test_the_live_agents_view_of_a_client_keeps_no_reply_at_rest():
    backend = FunctionBackend(lambda messages, params, purpose, context=None: "the password is hunter2")
    client = fake_client(backend, cache=Cache(":memory:"))
    view = client.uncached()
    for _ in range(2):
        asyncio.run(view.complete("what is it?", purpose="action"))
    assert view.cache is None and client.cache is not None and len(backend.requests) == 2  # asked each time
    assert client.usage.total.calls == 2  # counted in the client's usage too
