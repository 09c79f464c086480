"""Benchmark: procedural memory. The demo shop's order done once (``webagent run --demo
--save-as``), then replayed with the model forbidden (``webagent replay --no-model``): wall
time and model calls of each, in one run.

By default (``make bench``) the original run is driven by a function-driven fake that knows
the shop (no model server): the replay makes 0 model calls, the shop confirms its order, and
it is no slower than the agent loop itself with a zero-latency model (the floor: browser,
observation and actions). With ``--gguf PATH`` the original run is the embedded model's, and
the target is a replay at least 10x faster than it; when the model does not complete the
order, the fake records it instead and the ratio is against the model's own seconds per step
(an estimate, printed as such, and a missed target). Exits 1 when a target is missed.

Run: .venv/bin/python -m bench.gated.replay [--gguf PATH] [--max-steps 8]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

TARGET_SPEEDUP = 10.0
RESULTS = Path("runs") / "bench-replay"  # traces and replay.json (runs/ is not committed)


def fake_demo_policy(messages, params, purpose):
    """The demo order, the way a model that knows the shop would answer (either rendering)."""
    prompt = str(messages[-1]["content"])  # the step's prompt (instructions and examples may come first)
    context = prompt.split("'''")[1] if prompt.count("'''") >= 2 else prompt

    def find(text: str, html: str) -> str:
        for pattern in (rf"^\[([A-Za-z0-9_-]+)\][^\n]*{re.escape(text)}", rf"<\w+ id=([A-Za-z0-9_-]+){html}"):
            if m := re.search(pattern, context, re.MULTILINE):
                return m.group(1)
        raise AssertionError(f"{text} not on the page")

    url = (re.search(r"\(URL: (\S+), title:", prompt) or [None, ""])[1]
    history = prompt.split("Previous actions and their results:", 1)[-1]
    if "index.html" in url:
        return {
            "operation": "TYPE",
            "element_id": find("search field", r"[^>]*? search"),
            "value": "Night Trains",
            "press_enter": True,
        }
    if "results.html" in url:
        return {"operation": "CLICK", "element_id": find('"Night Trains"', r"[^>]*>\s*Night Trains")}
    if "order.html" in url:
        if '"Ada Lovelace"' not in history:
            return {
                "operation": "TYPE",
                "element_id": find('"Your name"', r"[^>]*? text name"),
                "value": "Ada Lovelace",
            }
        if "SELECT" not in history:
            return {
                "operation": "SELECT",
                "element_id": find('"Shipping"', r"[^>]*? shipping"),
                "value": "Express (1 day)",
            }
        return {"operation": "CLICK", "element_id": find('"Place order"', r"[^>]*>\s*Place order")}
    return {"operation": "DONE", "element_id": "", "value": "ordered Night Trains"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--gguf",
        default=os.environ.get("WEBAGENT_BENCH_GGUF"),
        help="GGUF of the embedded model for the original run (default: the function-driven fake, no model server)",
    )
    parser.add_argument("--max-steps", type=int, default=8)
    args = parser.parse_args()

    home = tempfile.mkdtemp(prefix="webagent-bench-replay-")
    os.environ["WEBAGENT_HOME"] = home  # the saved workflow lives here, not in the user's store
    os.environ.setdefault("WEBAGENT_MODELS", str(Path.home() / ".cache" / "webagent" / "models"))
    from bench.lib.verdict import Targets
    from webagent import Agent, RunResult, replay_sync
    from webagent.demo_site import DEMO_TASK
    from webagent.llm.endpoint import EndpointOptions
    from webagent.llm.testing import FunctionBackend, fake_client

    RESULTS.mkdir(parents=True, exist_ok=True)
    say = lambda message: print(f"  {message}", file=sys.stderr, flush=True)  # noqa: E731
    targets = Targets("replay")

    def original_run(name: str, progress=None, **model) -> tuple[RunResult, float]:
        """The demo order saved as ``demo-order`` by the model ``model`` names (its trace in
        RESULTS/``name``), and its wall seconds."""
        started = time.perf_counter()
        run = Agent(
            DEMO_TASK, demo=True, max_steps=args.max_steps, save_as="demo-order", trace_dir=RESULTS / name, **model
        ).run_sync(progress)
        return run, time.perf_counter() - started

    def fake_run(name: str):
        return original_run(name, llm=fake_client(FunctionBackend(fake_demo_policy, record=False)))

    if args.gguf:
        print(
            f"original run: the embedded model ({Path(args.gguf).name}) on the demo shop, {args.max_steps} steps "
            "at most",
            flush=True,
        )
        started = time.perf_counter()
        try:
            run, run_wall = original_run("run", say, endpoint=EndpointOptions(gguf=args.gguf))
        except Exception as exc:  # noqa: BLE001 - e.g. the model server did not start: said below
            run = RunResult(status="error", error=f"{type(exc).__name__}: {exc}")
            run_wall = time.perf_counter() - started
    else:
        print(
            "original run: the function-driven fake model on the demo shop (no model server; "
            "--gguf PATH runs a real model)",
            flush=True,
        )
        run, run_wall = fake_run("run-fake")
    model_done = bool(run.ok and run.demo_order_placed and run.saved_as)
    print(
        f"  status {run.status}, shop confirmed: {bool(run.demo_order_placed)}, {run.steps} steps, "
        f"{run.model_calls} model calls, {run_wall:.1f} s (start-up included)"
    )
    baseline, baseline_note, run_calls = run_wall, "measured", run.model_calls
    if args.gguf and not model_done:
        per_step = run_wall / max(run.steps, 1)
        print(
            f"NOTE: the embedded model did NOT complete the demo order ({run.status}; "
            f"{run.error or run.save_error or 'the shop has no confirmed order'}). A function-driven fake "
            "records the order instead; the replay is compared with the model's seconds per step "
            f"({per_step:.1f} s) x the fake's steps: an estimate, and a missed target."
        )
        fake, _ = fake_run("run-fake")
        if not (fake.ok and fake.saved_as):
            print(f"the fake did not record the order either: {fake.status} {fake.error or fake.save_error}")
            return 1
        baseline, baseline_note, run_calls = per_step * fake.steps, "estimated", fake.model_calls

    print("replay: webagent replay demo-order --demo --no-model")
    replayed = replay_sync(
        "demo-order",
        demo=True,
        no_model=True,
        trace_dir=RESULTS / "replay",
        endpoint=EndpointOptions(gguf=args.gguf),
        progress=say,
    )
    speedup = baseline / replayed.wall_s if replayed.wall_s else 0.0
    print(
        f"  status {replayed.status}, shop confirmed: {bool(replayed.demo_order_placed)}, {replayed.steps} steps "
        f"({replayed.replayed} replayed, {replayed.repaired} repaired), {replayed.model_calls} model calls, "
        f"{replayed.wall_s:.1f} s"
    )
    print()
    who = f"the embedded model ({Path(args.gguf).name})" if args.gguf else "the fake model (0 latency)"
    print("| | wall time | model calls | shop confirmed |")
    print("|---|---:|---:|---|")
    print(f"| original run, {who}, {baseline_note} | {baseline:.1f} s | {run_calls} | {bool(run.demo_order_placed)} |")
    print(
        f"| replay, --no-model | {replayed.wall_s:.1f} s | {replayed.model_calls} | {bool(replayed.demo_order_placed)} |"
    )
    if args.gguf:
        targets.check(
            "the embedded model completes the original order",
            f"{run.status}, {run.steps} steps",
            "the shop's confirmation",
            model_done,
        )
        targets.check(
            f"replay >= {TARGET_SPEEDUP:.0f}x faster than the original run",
            f"{speedup:.1f}x faster ({replayed.wall_s:.1f} s)",
            f"the model's run, {baseline:.1f} s ({baseline_note})",
            speedup >= TARGET_SPEEDUP,
        )
    else:
        targets.check(
            "replay no slower than the agent with a zero-latency model",
            f"{speedup:.2f}x faster ({replayed.wall_s:.1f} s)",
            f"floor: the fake model's run, {baseline:.1f} s (browser, observation and actions only)",
            speedup >= 1.0,
        )
    targets.check(
        "the replay makes 0 model calls",
        str(replayed.model_calls),
        f"the original run's {run_calls}",
        replayed.model_calls == 0,
    )
    targets.check(
        "the shop confirms the replayed order",
        f"{replayed.status}, confirmed: {bool(replayed.demo_order_placed)}",
        "the original run's order",
        bool(replayed.ok and replayed.demo_order_placed),
    )
    (RESULTS / "replay.json").write_text(
        json.dumps(
            {
                "gguf": args.gguf,
                "model_completed": model_done,
                "baseline": baseline_note,
                "run_wall_s": round(run_wall, 2),
                "run_status": run.status,
                "run_steps": run.steps,
                "run_model_calls": run.model_calls,
                "baseline_wall_s": round(baseline, 2),
                "replay_wall_s": round(replayed.wall_s, 2),
                "replay_model_calls": replayed.model_calls,
                "replay_status": replayed.status,
                "speedup": round(speedup, 2),
                "missed": [t for t, _, _, ok in targets.rows if not ok],
            },
            indent=1,
        )
    )
    return targets.report()


if __name__ == "__main__":
    sys.exit(main())
