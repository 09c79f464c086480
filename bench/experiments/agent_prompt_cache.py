"""The live prompt as one growing conversation against a whole step each time, on a long
shop page (bench/experiments/pages/long_shop.html: 60 category links, six products with a quantity
select and an "Add to cart" button, 45 shop links; ~900 words in the agent view) where an
action changes one line ("Cart: ..."). Same embedded model, same page, same steps, one
run: the prompt tokens the server evaluated per step (prompt tokens minus those its cache
held, as the server reports them) and the seconds per step.

    .venv/bin/python -m bench.experiments.agent_prompt_cache [--embedded qwen2.5-coder-1.5b] [--steps 3]

Targets: after the first step, a step evaluates at most 300 new prompt tokens when the
action changed one line; the median step of the conversation takes at most 0.5x the
whole-page step's. Exits non-zero when one is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from bench.lib import ROOT
from bench.lib.verdict import Targets
from webagent.agent import AgentOptions, run_agent
from webagent.agent.options import PromptLayout
from webagent.browser import BrowserSession
from webagent.demo_site import serve_directory
from webagent.llm.endpoint import EndpointOptions, open_client
from webagent.trace.writer import TraceWriter

TASK = "Add two packs of Jasmine Pearls, one Earl Grey Loose Leaf and one Sencha Green Tea to the cart."
MAX_NEW_TOKENS = 300


async def one_layout(client, base: str, layout: PromptLayout, steps: int, folder: Path) -> list[dict]:
    async with BrowserSession() as browser:
        browser.guard = None
        assert (await browser.open(base + "long_shop.html")).ok
        trace = TraceWriter(folder / layout)
        await run_agent(
            browser,
            client,
            TASK,
            options=AgentOptions(max_steps=steps, prompt=layout, screenshots=False, form_check=False),
            trace=trace,
        )
        rows = []
        for step in trace.steps():
            usage = step.usage
            rows.append(
                {
                    "step": step.step,
                    "prompt": usage.get("prompt_tokens", 0),
                    "cached": usage.get("prompt_cached_tokens", 0),
                    "new": usage.get("prompt_tokens", 0) - usage.get("prompt_cached_tokens", 0),
                    "seconds": step.times.get("action_s", 0.0),
                    "action": step.action_text,
                    "result": step.result_text[:80],
                }
            )
        return rows


async def main_async(args) -> int:
    import tempfile

    base, stop = serve_directory(ROOT / "bench" / "experiments" / "pages")
    folder = Path(tempfile.mkdtemp(prefix="bench-prompt-cache-"))
    try:
        async with open_client(EndpointOptions(embedded=args.embedded)) as client:
            results = {}
            layouts: tuple[PromptLayout, ...] = ("full", "chat")
            for layout in layouts:  # the same server: its cache starts with the fixed prefix both times
                t0 = time.perf_counter()
                results[layout] = await one_layout(client, base, layout, args.steps, folder)
                print(f"{layout}: {time.perf_counter() - t0:.0f} s")
                for r in results[layout]:
                    print(
                        f"  step {r['step']}: {r['prompt']} prompt tokens, {r['cached']} cached, {r['new']} evaluated, "
                        f"{r['seconds']:.1f} s | {r['action']} -> {r['result']}"
                    )
    finally:
        stop()
    chat_later = [r["new"] for r in results["chat"][1:]]
    full_med = statistics.median(r["seconds"] for r in results["full"])
    chat_med = statistics.median(r["seconds"] for r in results["chat"])
    targets = Targets("agent_prompt_cache")
    targets.check(
        f"new prompt tokens a later step evaluates (conversation) <= {MAX_NEW_TOKENS}",
        f"max {max(chat_later) if chat_later else '-'} over steps 2..{args.steps}",
        f"whole step each time: {[r['new'] for r in results['full'][1:]]}",
        bool(chat_later) and max(chat_later) <= MAX_NEW_TOKENS,
    )
    targets.check(
        "median step seconds, conversation / whole step <= 0.5",
        f"{chat_med:.1f} s / {full_med:.1f} s = {chat_med / full_med:.2f}",
        "the whole-step layout",
        chat_med <= 0.5 * full_med,
    )
    print(f"traces: {folder}")
    return targets.report()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedded", default="qwen2.5-coder-1.5b")
    parser.add_argument("--steps", type=int, default=3)
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
