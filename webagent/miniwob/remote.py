"""The worker side of ``miniwob --ray``: one (task, seed) in a Ray worker process, in its own
headless Chromium, the task page loaded afresh (the problem depends only on the seed); the
row is ``runner.run_episode``'s, as a serial run writes it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from webagent.cluster import with_usage
from webagent.llm.endpoint import EndpointOptions


def episode(task: str, seed: int, options, endpoint: EndpointOptions, trace: str | None) -> dict:
    from webagent.browser import BrowserSession
    from webagent.miniwob.browser import ReusingEnv
    from webagent.miniwob.episode import model_client, run_episode

    async def run() -> dict:
        async with model_client(endpoint) as client, BrowserSession() as browser, ReusingEnv(browser) as env:
            row = await run_episode(browser, env, client, task, seed, options, Path(trace) if trace else None)
            return with_usage(row, client)

    return asyncio.run(run())
