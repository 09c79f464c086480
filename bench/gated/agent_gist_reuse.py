"""Benchmark: gist reuse across steps of the live agent. A page of 8 long sections and a
counter; each step clicks "Add one", so between steps one element's text changes. With
the persistent cache off, step 1 gists every snippet and each later step may gist only
the snippet whose text changed (target: ≤ 2 gist calls per later step).

Run: .venv/bin/python -m bench.gated.agent_gist_reuse
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
from pathlib import Path

from bench.lib.verdict import Targets
from webagent.agent import AgentOptions, run_agent
from webagent.browser import BrowserSession
from webagent.demo_site import serve_directory
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.trace.writer import TraceWriter

STEPS, TARGET = 4, 2


def page() -> str:
    sections = "\n".join(
        f"<section><h2>Chapter {i}</h2><p>" + " ".join(f"word{i}x{j}" for j in range(60)) + "</p></section>"
        for i in range(8)
    )
    return (
        "<!DOCTYPE html><html><head><title>Counter</title></head><body><div>"
        "<button type=button onclick=\"var c=document.getElementById('n');c.textContent=+c.textContent+1\">"
        f"Add one</button> <span id=n>0</span></div>{sections}</body></html>"
    )


def policy(messages, params, purpose):
    prompt = str(messages[-1]["content"])  # the step's own prompt (worked examples may come first)
    if purpose == "gist":
        return "gist: " + " ".join(prompt.split("Snippet:", 1)[-1].split()[:12])
    if purpose == "lookup":
        return {"pages": [0], "reason": "the button"}
    # the button in either page rendering: one line per control, or the simplified HTML
    button = (
        re.search(r"^\[([A-Za-z0-9_-]+)\][^\n]*Add one", prompt, re.MULTILINE)
        or re.search(r"<button id=([A-Za-z0-9_-]+)", prompt)
    ).group(1)
    return {"operation": "CLICK", "element_id": button, "value": ""}


async def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "site").mkdir()
        (Path(tmp) / "site" / "index.html").write_text(page())
        base, stop = serve_directory(Path(tmp) / "site")
        try:
            async with BrowserSession() as browser:
                await browser.open(base + "index.html")
                trace = TraceWriter(Path(tmp) / "trace")
                await run_agent(
                    browser,
                    fake_client(FunctionBackend(policy)),
                    "add one",
                    trace=trace,
                    options=AgentOptions(
                        max_steps=STEPS, lookup="always", budget_words=60, screenshots=False, form_check=False
                    ),
                )
        finally:
            stop()
        steps = trace.steps()
    calls = [s.usage["by_purpose"].get("gist", {}).get("calls", 0) for s in steps]
    print(f"snippets per step: {[s.snippets for s in steps]}")
    print(f"gist calls per step: {calls} (reused: {[s.gists_reused for s in steps]})")
    worst = max(calls[1:])
    targets = Targets("agent_gist_reuse")
    targets.check(
        f"gist calls per later step <= {TARGET}",
        f"at most {worst} ({calls[1:]})",
        f"no reuse: every snippet gisted again, {steps[1].snippets} calls per step (step 1 made {calls[0]})",
        worst <= TARGET,
    )
    targets.check(
        "step 1 gists every snippet once",
        f"{calls[0]} calls",
        f"floor: its {steps[0].snippets} snippets",
        calls[0] == steps[0].snippets,
    )
    return targets.report()


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # only --help: no options
    sys.exit(asyncio.run(main()))
