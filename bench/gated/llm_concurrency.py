"""Benchmark: gisting 64 pages at concurrency 16 against a fake OpenAI-compatible server
that answers after a fixed 200 ms, through the real HTTP client path.

Reports wall time / ideal, where ideal = ceil(64 / 16) × 0.2 s (the best of three cold runs,
each on an empty cache), and the same run repeated with the cache warm. Targets: ratio ≤ 1.3; the server never sees more than 16 calls at
once; the warm re-run makes 0 model calls. Exits 1 when a target is missed.
Run: .venv/bin/python -m bench.gated.llm_concurrency
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import time
from pathlib import Path

from bench.lib.verdict import Targets
from webagent.llm.cache import Cache
from webagent.llm.client import LLMClient
from webagent.llm.openai_backend import OpenAIBackend
from webagent.llm.testing import FakeOpenAIServer
from webagent.memory import Page, build_memory

PAGES, CONCURRENCY, DELAY_S = 64, 16, 0.2
COLD_RUNS = 3


async def gist_all(base_url: str, cache: Cache) -> tuple[float, LLMClient]:
    client = LLMClient(OpenAIBackend(base_url, "fake", None), cache=cache, concurrency=CONCURRENCY)
    pages = [Page(i, f"Page {i}: " + "some words of a long document " * 40) for i in range(PAGES)]
    start = time.perf_counter()
    memory, failures = await build_memory(client, pages)
    elapsed = time.perf_counter() - start
    assert len(memory) == PAGES and failures == 0
    await client.close()
    return elapsed, client


async def prime(base_url: str) -> None:
    """One untimed request: a process's first call through the openai SDK pays its lazy
    imports and type-hint evaluation once (~170 ms here), which is no concurrency cost."""
    client = LLMClient(OpenAIBackend(base_url, "fake", None), cache=None, concurrency=1)
    await client.complete("prime", purpose="prime", max_tokens=4)
    await client.close()


def main() -> None:
    # The server runs on its own thread and loop, as a separate server would.
    server = FakeOpenAIServer(delay_s=DELAY_S, responder=lambda messages, body: "a short gist").start_in_thread()
    asyncio.run(prime(server.base_url))
    colds = []
    for run in range(COLD_RUNS):  # best of N cold runs, each on an empty cache: the machine is shared
        with tempfile.TemporaryDirectory() as tmp:
            cache = Cache(Path(tmp) / "cache.sqlite")
            colds.append(asyncio.run(gist_all(server.base_url, cache)))
            if run == COLD_RUNS - 1:
                warm_s, warm = asyncio.run(gist_all(server.base_url, cache))
    cold_s, cold = min(colds, key=lambda c: c[0])
    max_in_flight = server.max_in_flight
    server.stop_thread()
    ideal = math.ceil(PAGES / CONCURRENCY) * DELAY_S
    ratio = cold_s / ideal
    print(
        f"gist {PAGES} pages, concurrency {CONCURRENCY}, server delay {DELAY_S * 1000:.0f} ms; cold = best of "
        f"{COLD_RUNS} ({', '.join(f'{c[0]:.3f}' for c in colds)} s)"
    )
    print(f"{'run':<6}{'wall s':>8}{'calls':>7}{'cached':>8}{'max in flight':>15}")
    print(f"{'cold':<6}{cold_s:>8.3f}{cold.usage.total.calls:>7}{cold.usage.total.cached_calls:>8}{max_in_flight:>15}")
    print(f"{'warm':<6}{warm_s:>8.3f}{warm.usage.total.calls:>7}{warm.usage.total.cached_calls:>8}{'-':>15}")
    print(f"ideal = ceil({PAGES}/{CONCURRENCY}) x {DELAY_S} s = {ideal:.2f} s")
    print(f"warm/cold wall ratio = {warm_s / cold_s:.3f}")
    targets = Targets("llm_concurrency")
    targets.check(
        "gisting wall time <= 1.3x the ideal",
        f"{ratio:.3f}x ({cold_s:.3f} s)",
        f"floor: ideal = ceil({PAGES}/{CONCURRENCY}) x {DELAY_S} s = {ideal:.2f} s",
        ratio <= 1.3,
    )
    targets.check(
        f"calls in flight at the server <= {CONCURRENCY}",
        str(max_in_flight),
        f"the concurrency limit ({CONCURRENCY}); {PAGES} calls wanted at once",
        max_in_flight <= CONCURRENCY,
    )
    targets.check(
        "warm re-run makes 0 model calls",
        str(warm.usage.total.calls),
        f"the cold run's {cold.usage.total.calls} calls",
        warm.usage.total.calls == 0,
    )
    sys.exit(targets.report())


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # only --help: no options
    main()
