"""Benchmark: gisting 64 pages at concurrency 16 against a fake OpenAI-compatible server
that answers after a fixed 200 ms, through the real HTTP client path.

Reports wall time / ideal, where ideal = ceil(64 / 16) × 0.2 s, and the same run repeated
with the cache warm. Targets: ratio ≤ 1.3; the server never sees more than 16 calls at
once; the warm re-run makes 0 model calls. Exits 1 when a target is missed.
Run: .venv/bin/python bench/llm_concurrency.py
"""

from __future__ import annotations

import asyncio
import math
import sys
import tempfile
import time
from pathlib import Path

from webagent.llm.cache import Cache
from webagent.llm.client import LLMClient
from webagent.llm.openai_backend import OpenAIBackend
from webagent.llm.testing import FakeOpenAIServer
from webagent.memory import Page, build_memory

PAGES, CONCURRENCY, DELAY_S = 64, 16, 0.2


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


def _short_gist(messages, body) -> str:
    return "a short gist"


def main() -> None:
    # The server runs on its own thread and loop, as a separate server would.
    server = FakeOpenAIServer(delay_s=DELAY_S, responder=_short_gist).start_in_thread()
    asyncio.run(prime(server.base_url))
    with tempfile.TemporaryDirectory() as tmp:
        cache = Cache(Path(tmp) / "cache.sqlite")
        cold_s, cold = asyncio.run(gist_all(server.base_url, cache))
        warm_s, warm = asyncio.run(gist_all(server.base_url, cache))
    max_in_flight = server.max_in_flight
    server.stop_thread()
    ideal = math.ceil(PAGES / CONCURRENCY) * DELAY_S
    ratio = cold_s / ideal
    print(f"gist {PAGES} pages, concurrency {CONCURRENCY}, server delay {DELAY_S * 1000:.0f} ms")
    print(f"{'run':<6}{'wall s':>8}{'calls':>7}{'cached':>8}{'max in flight':>15}")
    print(f"{'cold':<6}{cold_s:>8.3f}{cold.usage.total.calls:>7}{cold.usage.total.cached_calls:>8}{max_in_flight:>15}")
    print(f"{'warm':<6}{warm_s:>8.3f}{warm.usage.total.calls:>7}{warm.usage.total.cached_calls:>8}{'-':>15}")
    print(f"ideal = ceil({PAGES}/{CONCURRENCY}) x {DELAY_S} s = {ideal:.2f} s")
    checks = {
        f"ratio wall/ideal = {ratio:.3f}  (target <= 1.3)": ratio <= 1.3,
        f"max calls in flight at the server = {max_in_flight}  (target <= {CONCURRENCY})":
            max_in_flight <= CONCURRENCY,
        f"warm re-run model calls = {warm.usage.total.calls}  (target 0)": warm.usage.total.calls == 0,
    }
    for text, ok in checks.items():
        print(f"{text}: {'PASS' if ok else 'FAIL'}")
    print(f"warm/cold wall ratio = {warm_s / cold_s:.3f}")
    if not all(checks.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
