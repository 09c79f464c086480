"""Benchmark: MiniWoB++ episodes per minute with the scripted model (no model latency:
the harness itself — serving, seeding, capture, actions, reward), 1 episode at a time vs 4
in parallel in one Chromium (one context each). Same tasks and seeds both times; every
episode must succeed (the scripted check). Target: ≥ 2.5× at 4.

Each figure is the whole run's wall time, start-up included: opening 4 contexts and
loading 4 task pages at once takes about 2 s on 2 cores (0.6 s for one), so the run has
20 episodes per task (100 in all) -- with 10 per task, start-up was a fifth of the
concurrent run. When the first episode finished is
printed too (start-up plus one episode).

Run: .venv/bin/python -m bench.gated.agent_miniwob_throughput [--episodes N]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from bench.lib.verdict import Targets
from webagent.agent import AgentOptions
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.miniwob.runner import MiniWoBConfig, MiniWoBEval, run_miniwob, shared_browser
from webagent.miniwob.scripted import SCRIPTED_TASKS, scripted_reply

TARGET = 2.5


async def measure(shared, episodes: int, concurrency: int) -> tuple[float, int, int, float]:
    client = fake_client(FunctionBackend(scripted_reply, name="fake:scripted", record=False))
    options = AgentOptions(max_steps=6, screenshots=False, form_check=False)
    config = MiniWoBConfig(model="fake:scripted", agent=options, seed=0)
    with tempfile.TemporaryDirectory() as out:
        finished: list[float] = []
        start = time.perf_counter()
        rows = await run_miniwob(
            client,
            MiniWoBEval(list(SCRIPTED_TASKS), episodes, config, browser=shared, traces=False),
            Path(out),
            concurrency=concurrency,
            progress=lambda _: finished.append(time.perf_counter()),
        )
        wall = time.perf_counter() - start
    first = finished[0] - start if finished else float("nan")
    return 60 * len(rows) / wall, len(rows), sum(r.success for r in rows), first


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=20, help="episodes per task (5 tasks)")
    args = parser.parse_args()
    async with shared_browser() as shared:
        await measure(shared, 1, 1)  # warm-up: page cache, first context
        one, n1, ok1, first1 = await measure(shared, args.episodes, 1)
        four, n4, ok4, first4 = await measure(shared, args.episodes, 4)
    print(f"concurrency 1: {one:.1f} episodes/min ({ok1}/{n1} succeeded; first episode done after {first1:.2f} s)")
    print(f"concurrency 4: {four:.1f} episodes/min ({ok4}/{n4} succeeded; first episode done after {first4:.2f} s)")
    ratio = four / one
    targets = Targets("agent_miniwob_throughput")
    targets.check(
        f"episodes per minute at concurrency 4 >= {TARGET}x concurrency 1",
        f"{ratio:.2f}x ({four:.1f}/min)",
        f"concurrency 1: {one:.1f} episodes/min, same tasks and seeds",
        ratio >= TARGET,
    )
    targets.check(
        "every episode succeeds with the scripted model (the harness check)",
        f"{ok1}/{n1} at 1, {ok4}/{n4} at 4",
        "floor: 100%",
        ok1 == n1 and ok4 == n4,
    )
    return targets.report()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
