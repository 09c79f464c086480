"""The demo shop with a real model: does the shop confirm the order, and where a step's
seconds go (observation, model calls, acting).

    .venv/bin/python -m bench.experiments.agent_demo --embedded qwen2.5-coder-0.5b            # the default task
    .venv/bin/python -m bench.experiments.agent_demo --embedded qwen2.5-coder-1.5b --all-tasks
    .venv/bin/python -m bench.experiments.agent_demo --from runs/agent/2026-...-demo           # summarise trace folders

Each run is `webagent run --demo` (the shop's own record decides success); the per-step
times come from its steps.jsonl: observe (capture after the action, agent view),
screenshot, model (gists, look-up, action) and act (executing the action). Exits 1 when
the shop did not confirm every order asked for.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from webagent.trace.record import FILE, read_steps

PHASES = {
    "observe": ("observe_s", "view_s"),
    "screenshot": ("screenshot_s",),
    "model": ("gist_s", "lookup_s", "action_s"),
    "act": ("execute_s",),
}


def run_demo(task: str | None, args, folder: Path) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "webagent.cli",
        "run",
        "--demo",
        "--json",
        "--max-steps",
        str(args.max_steps),
        "--trace-dir",
        str(folder),
    ]
    cmd += ["--base-url", args.base_url, "--model", args.model] if args.base_url else ["--embedded", args.embedded]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    if task:
        cmd.insert(4, task)
    done = subprocess.run(cmd, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {"status": "error", "error": done.stderr.strip()[-300:]}


def phases(folder: Path) -> dict:
    steps = read_steps(folder / FILE)
    total = {name: sum(s.times.get(k, 0.0) for s in steps for k in keys) for name, keys in PHASES.items()}
    per_step = sorted(sum(s.times.get(k, 0.0) for keys in PHASES.values() for k in keys) for s in steps)
    run = json.loads((folder / "run.json").read_text()) if (folder / "run.json").is_file() else {}
    return {
        "steps": len(steps),
        "seconds": total,
        "median_step_s": statistics.median(per_step) if per_step else 0.0,
        "status": run.get("status"),
        "answer": run.get("answer"),
        "prompt_tokens": sum(s.usage.get("prompt_tokens", 0) for s in steps),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedded", default="qwen2.5-coder-0.5b")
    parser.add_argument("--base-url")
    parser.add_argument("--model", default="")
    parser.add_argument("--max-steps", type=int, default=12)
    parser.add_argument("--threads", type=int, help="embedded server compute threads (default: its rule)")
    parser.add_argument("--all-tasks", action="store_true", help="the default task and the five others")
    parser.add_argument("--from", dest="sources", nargs="+", help="summarise these trace folders instead")
    args = parser.parse_args()
    rows = []
    if args.sources:
        for source in args.sources:
            info = phases(Path(source))
            rows.append((source, info, info["answer"] == "the shop confirmed the order"))
    else:
        from webagent.demo_site import DEMO_TASK, DEMO_TASKS

        out = Path(tempfile.mkdtemp(prefix="bench-demo-"))
        for i, task in enumerate(DEMO_TASKS if args.all_tasks else [DEMO_TASK]):
            result = run_demo(task, args, out / f"task{i}")
            info = (
                phases(out / f"task{i}")
                if (out / f"task{i}" / "steps.jsonl").is_file()
                else {"steps": 0, "seconds": {k: 0.0 for k in PHASES}, "prompt_tokens": 0, "median_step_s": 0.0}
            )
            rows.append((task, info, bool(result.get("demo_order_placed"))))
    print(f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    print(
        "| run | confirmed | steps | s / step | median s / step | observe | screenshot | model | act | prompt tokens / step |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, info, confirmed in rows:
        steps = info["steps"] or 1
        total = sum(info["seconds"].values()) or 1.0
        shares = " | ".join(f"{100 * info['seconds'][k] / total:.0f}%" for k in PHASES)
        print(
            f"| {name} | {'yes' if confirmed else 'NO'} | {info['steps']} | {total / steps:.1f} | "
            f"{info['median_step_s']:.1f} | {shares} | "
            f"{info['prompt_tokens'] / steps:.0f} |"
        )
    ok = all(confirmed for _, _, confirmed in rows)
    print(
        f"target: the shop confirms every order; figure {sum(c for *_, c in rows)}/{len(rows)}; "
        f"{'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
