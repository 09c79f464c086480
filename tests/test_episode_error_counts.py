"""An episode that ends in an error keeps its counts (issue 47, item 7): the row of an app task
(or of a MiniWoB++ episode) whose run raised reports the steps, model calls and prompt tokens
its trace holds, not 0 steps and 0 tokens. The app task's run is real (Chromium, the counter
page); the app's check raises after the second step, as a skill's crash did."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from browser_support import requires_chromium

from webagent.agent.episode import TraceCounts, trace_counts
from webagent.agent.options import AgentOptions
from webagent.apps.episode import run_task
from webagent.apps.spec import GoldStep, Task
from webagent.demo_site import serve_directory
from webagent.llm.testing import FunctionBackend, fake_client

PAGES = Path(__file__).parent / "fixtures" / "agent_pages"
TASK = Task(
    id="counter-add-two",
    kinds=["create"],
    task="Add one, twice, then once more.",
    start="counter.html",
    gold=[GoldStep(op="click", role="button", name="Add one")],
)


class CrashingInstance:
    """An app instance serving the counter page whose check raises at its second call."""

    def __init__(self, base: str):
        self.base, self.checks = base, 0
        self.app = SimpleNamespace(name="counter")

    def reset(self) -> float:
        return 0.0

    def url(self, path: str) -> str:
        return self.base + path.lstrip("/")

    def check(self, task_id: str, answer: str | None = None) -> tuple[bool, str]:
        self.checks += 1
        if self.checks == 2:
            raise RuntimeError("the check crashed")
        return False, "not yet"


def _add_one(messages, params, purpose, context=None):
    if purpose == "form_check":
        return {"fix": "", "ready": True}
    return {"operation": "CLICK", "element_id": context.control_id("button", "Add one")}


@pytest.mark.browser
@requires_chromium
@pytest.mark.asyncio
async def test_a_task_whose_run_raised_keeps_the_steps_calls_and_tokens_of_its_trace(tmp_path):
    base, stop = serve_directory(PAGES)
    try:
        client = fake_client(FunctionBackend(_add_one))
        options = AgentOptions(max_steps=5, screenshots=False)
        row = await run_task(CrashingInstance(base), TASK, client, options, tmp_path / "trace")
    finally:
        stop()
    assert (row.status, row.ended) == ("error", "error")
    assert row.error == "RuntimeError: the check crashed"
    run = json.loads((tmp_path / "trace" / "run.json").read_text())
    assert run["steps"] == 1 and run["usage"]["calls"] == 2  # the second step's call was made
    assert row.steps == 1
    assert row.usage["calls"] == 2
    assert row.prompt_tokens == run["usage"]["prompt_tokens"] > 0

    # a trace whose run.json was never written: the steps written, and their own usage
    (tmp_path / "trace" / "run.json").unlink()
    counts = trace_counts(tmp_path / "trace")
    assert (counts.steps, counts.usage["calls"]) == (1, 1) and counts.prompt_tokens > 0
    assert trace_counts(tmp_path / "missing") == trace_counts(None) == TraceCounts()


@pytest.mark.asyncio
async def test_a_miniwob_episode_that_raised_keeps_the_counts_of_its_trace(tmp_path, monkeypatch):
    from webagent.miniwob import episode as miniwob

    async def crashes(task, browser, client, options, trace_dir):
        trace_dir.mkdir(parents=True)  # as the loop leaves it when an error goes on
        run = {"status": "error", "steps": 3, "usage": {"calls": 4, "prompt_tokens": 5100}}
        (trace_dir / "run.json").write_text(json.dumps(run))
        raise RuntimeError("the page went away")

    monkeypatch.setattr(miniwob, "episode_run", crashes)
    options = AgentOptions(max_steps=5, screenshots=False)
    row = await miniwob.run_episode(None, None, None, "click-button", 1, options, tmp_path / "trace")
    assert row.error == "RuntimeError: the page went away"
    assert (row.steps, row.usage["calls"], row.usage["prompt_tokens"]) == (3, 4, 5100)
