"""Evaluations on Ray against the serial run, in one run on this machine: the apps ceiling
(every task, the gold path as the model) serially, then on a local Ray of two workers; and
MiniWoB++ with the scripted model over 20 episodes, both ways.

    .venv/bin/python -m bench.gated.cluster_ray [--workers 2] [--app APP ...] [--keep]

Targets: the ceiling finishes every task both ways; both evaluators' rows are identical apart
from timings and where traces went; the Ray ceiling's wall time is at most 0.65x the serial
one's. Writes its figures to bench/results/cluster/DATE-COMMIT-ray-vs-serial/ with --keep;
exits non-zero when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.lib import ROOT, results_folder
from bench.lib.results_io import load_average, read_result, write_meta
from bench.lib.verdict import Targets

RATIO_TARGET = 0.65
WEBAGENT = str(ROOT / ".venv" / "bin" / "webagent")
MINIWOB_TASKS = "click-button,enter-text,login-user,choose-list,click-checkboxes"
# What may differ between two runs of one episode: times, where the trace went, and MiniWoB's
# reward, which decays with the seconds an episode took (its raw reward does not).
TIMINGS = {"time_s", "reset_s", "wall_s", "trace_dir", "reward"}


def run(cmd: list[str]) -> float:
    """Wall seconds of ``cmd`` (the whole command: start, every episode, the report)."""
    t0 = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit(f"failed (exit {done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return time.perf_counter() - t0


def rows(folder: Path, key: tuple[str, ...]) -> dict[tuple, dict]:
    return {tuple(row[k] for k in key): row for row in read_result(folder / "episodes.jsonl")[0]}


def comparable(row: dict) -> dict:
    same = {k: v for k, v in row.items() if k not in TIMINGS}
    if isinstance(same.get("usage"), dict):
        same["usage"] = {k: v for k, v in same["usage"].items() if not k.endswith("_s")}
    return same


def differences(a: dict[tuple, dict], b: dict[tuple, dict]) -> list[str]:
    """What differs between two runs' rows, timings aside: ``key: field``."""
    out = [f"{k}: only in one run" for k in sorted(set(a) ^ set(b))]
    for k in sorted(set(a) & set(b)):
        x, y = comparable(a[k]), comparable(b[k])
        out += [f"{k}: {f}" for f in sorted(set(x) | set(y)) if x.get(f) != y.get(f)]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--app", action="append", default=[], help="only these apps (default: all)")
    parser.add_argument("--keep", action="store_true", help="write the figures to bench/results/cluster/")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    apps = [a for name in args.app for a in ("--app", name)]
    ray = ["--ray", "--workers", str(args.workers)]
    load_before = load_average()

    ceiling = [WEBAGENT, "apps", "eval", "--ceiling", *apps, "--out"]
    serial_s = run([*ceiling, str(work / "ceiling-serial")])
    ray_s = run([*ceiling, str(work / "ceiling-ray"), *ray])
    serial, on_ray = rows(work / "ceiling-serial", ("task",)), rows(work / "ceiling-ray", ("task",))
    ceiling_diff = differences(serial, on_ray)

    # Each Ray episode loads its page afresh: the serial run to compare does too.
    miniwob = [WEBAGENT, "miniwob", "--model", "fake:scripted", "--tasks", MINIWOB_TASKS, "--episodes", "4"]
    miniwob += ["--reload-each-episode", "--out"]
    run([*miniwob, str(work / "miniwob-serial")])
    run([*miniwob, str(work / "miniwob-ray"), *ray])
    mw_serial, mw_ray = rows(work / "miniwob-serial", ("task", "seed")), rows(work / "miniwob-ray", ("task", "seed"))
    miniwob_diff = differences(mw_serial, mw_ray)

    ratio = ray_s / serial_s
    figures = {
        "workers": args.workers,
        "ceiling_tasks": len(serial),
        "ceiling_success_serial": sum(r["success"] for r in serial.values()),
        "ceiling_success_ray": sum(r["success"] for r in on_ray.values()),
        "ceiling_serial_s": round(serial_s, 1),
        "ceiling_ray_s": round(ray_s, 1),
        "ratio": round(ratio, 3),
        "ceiling_differences": ceiling_diff,
        "miniwob_episodes": len(mw_serial),
        "miniwob_success_serial": sum(r["success"] for r in mw_serial.values()),
        "miniwob_success_ray": sum(r["success"] for r in mw_ray.values()),
        "miniwob_differences": miniwob_diff,
        "load_before": load_before,
        "load_after": load_average(),
        "work": str(work),
    }
    print(json.dumps(figures, indent=1))
    targets = Targets("cluster_ray")
    n = len(serial)
    targets.check(
        "the ceiling finishes every task serially and on Ray",
        f"{figures['ceiling_success_serial']}/{n} serial, {figures['ceiling_success_ray']}/{len(on_ray)} on Ray",
        "every task (the serial run's own ceiling)",
        figures["ceiling_success_serial"] == figures["ceiling_success_ray"] == n > 0,
    )
    targets.check(
        "the Ray ceiling's rows equal the serial run's, timings aside",
        f"{len(ceiling_diff)} differences" + (f" (first: {ceiling_diff[0]})" if ceiling_diff else ""),
        "the serial run",
        not ceiling_diff,
    )
    targets.check(
        "MiniWoB++ scripted on Ray equals the serial run, timings aside",
        f"{len(mw_ray)} episodes, {len(miniwob_diff)} differences",
        "the serial run",
        not miniwob_diff and len(mw_ray) == 20,
    )
    targets.check(
        f"Ray ceiling wall time at most {RATIO_TARGET}x the serial run's ({args.workers} workers)",
        f"{ray_s:.0f} s against {serial_s:.0f} s: {ratio:.2f}x",
        "the serial run, same tasks, same machine, this run",
        ratio <= RATIO_TARGET,
    )
    if args.keep:
        folder = results_folder("cluster", "ray-vs-serial")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "figures.json").write_text(json.dumps(figures, indent=1) + "\n")
        write_meta(folder, note="apps ceiling and MiniWoB++ scripted, serial against a local Ray, in one run")
        print(f"kept: {folder}")
    return targets.report()


if __name__ == "__main__":
    sys.exit(main())
