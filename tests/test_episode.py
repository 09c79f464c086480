"""One episode for every evaluator (issue 35, item 1; webagent.agent.episode): a task sets itself up
and gives the goal, says after each step whether the site shows it done (the run then ends on
the site's word, not the model's), and gives the final verdict; the app suite and MiniWoB++
serve this protocol (their own tests run through it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_support import requires_chromium

from webagent.agent.episode import Verdict, run_episode
from webagent.agent.options import AgentOptions
from webagent.browser import BrowserSession
from webagent.demo_site import serve_directory
from webagent.llm.testing import FunctionBackend, fake_client

PAGES = Path(__file__).parent / "fixtures" / "agent_pages"
pytestmark = [pytest.mark.browser, requires_chromium]


class CounterTask:
    """Count to 2 on the counter page: the page's count is the site's word."""

    def __init__(self, base: str):
        self.base = base
        self.browser: BrowserSession | None = None
        self.checked: list[int] = []

    async def setup(self, browser) -> str:
        self.browser = browser
        assert (await browser.open(self.base + "counter.html")).ok
        return "Add one, twice."

    async def count(self) -> int:
        assert self.browser is not None
        return int(await self.browser.page.inner_text("#count"))

    async def done(self, step: int) -> str | None:
        self.checked.append(step)
        return "the counter shows 2" if await self.count() >= 2 else None

    async def validate(self, answer: str | None) -> Verdict:
        n = await self.count()
        return Verdict(n == 2, f"the counter shows {n}")


@pytest.mark.asyncio
async def test_the_run_ends_on_the_sites_word_and_the_verdict_is_the_sites(tmp_path):
    base, stop = serve_directory(PAGES)
    try:

        def clicks(messages, params, purpose, context=None):
            return {"operation": "CLICK", "element_id": context.control_id("button", "Add one")}

        task = CounterTask(base)
        async with BrowserSession() as browser:
            browser.guard = None
            ran = await run_episode(
                task, browser, fake_client(FunctionBackend(clicks)), AgentOptions(max_steps=6), tmp_path / "trace"
            )
        # the model never said DONE: the site's count ended the run after step 2
        assert ran.goal == "Add one, twice." and ran.result.status == "done" and ran.result.steps == 2
        assert task.checked == [1, 2] and ran.verdict == Verdict(True, "the counter shows 2")
        assert [s.operation for s in ran.steps] == ["CLICK", "CLICK"]
        assert (tmp_path / "trace" / "report.html").is_file()
    finally:
        stop()
