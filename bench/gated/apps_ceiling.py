"""The agent's ceiling on the real-app suite: the share of tasks the whole agent (its view,
its offered actions, its validity checks, its actions) lets a perfect model finish. The
model is each task's gold path, its elements found in the live page by role and name and
among the agent's offered controls by backend node (``webagent apps eval --ceiling``);
success is each app's database check.

    .venv/bin/python -m bench.gated.apps_ceiling [--out DIR] [--app APP ...]

Prints the report's figures and every loss (the gold step, the agent's message); exits
non-zero below the target (100%).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.lib import ROOT
from bench.lib.verdict import Targets

TARGET = 1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="results folder (resumed if it exists; default: a new temporary one)")
    parser.add_argument("--app", action="append", default=[])
    parser.add_argument("--max-steps", type=int, default=20)
    args = parser.parse_args(argv)
    out = Path(args.out or tempfile.mkdtemp(prefix="apps-ceiling-"))
    cmd = [
        str(ROOT / ".venv" / "bin" / "webagent"),
        "apps",
        "eval",
        "--ceiling",
        "--out",
        str(out),
        "--max-steps",
        str(args.max_steps),
    ]
    for app in args.app:
        cmd += ["--app", app]
    done = subprocess.run(cmd)
    if done.returncode != 0:
        print(f"apps eval failed (exit {done.returncode})", file=sys.stderr)
        return done.returncode
    summary = json.loads((out / "summary.json").read_text())
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]
    for app, figures in summary["by_app"].items():
        print(f"{app}: {figures['success']}/{figures['tasks']}")
    for row in rows:
        if not row["success"]:
            print(f"loss {row['task']}: {row['cause']}")
    rate, targets = summary["success_rate"], Targets("apps ceiling")
    figure = f"{summary['success']}/{summary['tasks']} ({100 * rate:.0f}%; results: {out})"
    target = f"the agent lets a perfect model finish {100 * TARGET:.0f}% of the tasks"
    targets.check(target, figure, "each task's gold path as the model", rate >= TARGET)
    return targets.report()


if __name__ == "__main__":
    sys.exit(main())
