"""Which learned skills each evaluation task of the real-app suite could use, and whether a
single demonstration showed that combination together (issue 34: at least 14 of the 42 tasks
need skills in a combination no demonstration showed).

A skill covers a task when each of the skill's element steps has a step of the task's gold
path on an element of the same name (the role and accessible name the gold path names, the
recorded fingerprint's name); a task's combination is the set of skills covering it, less
those another of them holds (a log-in reached by its link holds the log-in alone: either does
it, so the task does not need both); a demonstration showed a combination when every skill of
it was learned from that one recording. Reads the skills kept by `webagent apps learn` (run it first).

With ``--run DIR`` (an ``apps eval`` results folder, repeatable) it also reports each run's
success on the tasks that need a new combination apart from the rest, by the share of the
gold path's element steps the covering skills do (none, under half, half or more, all) and, where the folder
still has its traces, how far the runs got through their tasks' covering skills: in how many
tasks the model ran every covering skill to its end (a SKILL step that came back ok), and how
many of those the app confirmed.

    .venv/bin/python -m bench.experiments.skills_coverage [--out DIR] [--run RESULTS_DIR ...]
        [--app NAME ...] [--app-dir FOLDER ...]

``--app-dir`` takes another app folder (webagent/apps/APP_FORMAT.md), as ``apps eval
--app-dir`` does; ``--app`` names the apps to read (default: every app known, those of
``--app-dir`` too).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.lib import results_folder
from bench.lib.results_io import read_result, write_meta
from webagent.apps.learn import app_site
from webagent.apps.spec import load_apps
from webagent.errors import UserError
from webagent.skills import store
from webagent.web.control_name import visible_name

OPS = {"click": "CLICK", "check": "CLICK", "uncheck": "CLICK", "type": "TYPE", "select": "SELECT"}


def _gold(task) -> list:
    """The task's element steps on its gold path, as (operation, visible name)."""
    return [(OPS.get(s.op), visible_name(s.name)) for s in task.gold if s.op in OPS]


def _steps(skill) -> set:
    """The skill's element steps, as (operation, visible name of the recorded target)."""
    return {(s.op, visible_name(s.target.name)) for s in skill.steps if s.target is not None}


def covers(skill, task) -> bool:
    steps = _steps(skill)
    return bool(steps) and steps <= set(_gold(task))


def needed(combo: list) -> list:
    """The covering skills no other covering skill holds (of two that do the same, the first)."""
    kept = []
    for k, skill in enumerate(combo):
        mine = _steps(skill)
        held = any(mine < _steps(other) or (mine == _steps(other) and j < k) for j, other in enumerate(combo) if j != k)
        if not held:
            kept.append(skill)
    return kept


def _episodes(run: Path) -> dict[str, bool]:
    """Each task's success in a results folder (a re-run row replaces the earlier one, as the
    report reads them)."""
    return {row["task"]: bool(row.get("success")) for row in read_result(run / "episodes.jsonl")[0]}


def success_by(rows: dict[str, bool], group: dict[str, str], order: list[str]) -> str:
    """A run's success (``rows``: task -> success) on each group of tasks (``group``: task ->
    its group's label)."""
    parts = []
    for label in order:
        chosen = [ok for t, ok in rows.items() if group.get(t) == label]
        parts.append(f"{label} {sum(chosen)}/{len(chosen)}")
    return "; ".join(parts)


def share_covered(combo: list, task) -> float:
    """The share of the task's element steps on the gold path that its covering skills do."""
    gold = _gold(task)
    done = set().union(*(_steps(skill) for skill in combo)) if combo else set()
    return sum(step in done for step in gold) / len(gold) if gold else 0.0


SHARES = ["none covered", "under half covered", "half or more covered", "all covered"]


def _skills_run_ok(trace_dir: Path) -> set[str]:
    """The skills a run's steps called that came back ok (a skill that could not start or
    stopped part-way is not counted)."""
    done = set()
    for step in read_result(trace_dir / "steps.jsonl")[0]:
        action = step.get("action") or {}
        if action.get("operation") == "SKILL" and step.get("ok"):
            done.add(str(action.get("element_id")))
    return done


def skills_reached(run: Path, ok_rows: dict[str, bool], covering: dict[str, list[str]]) -> str:
    """Of the tasks with covering skills, those whose run (``ok_rows``: task -> success) called
    all of them to their end, and the app's verdict on those; "" when the folder has no traces."""
    traces = run / "traces"
    if not traces.is_dir():
        return ""
    tasks = [t for t in ok_rows if covering.get(t) and (traces / t / "steps.jsonl").is_file()]
    reached = [t for t in tasks if set(covering[t]) <= _skills_run_ok(traces / t)]
    confirmed = sum(ok_rows[t] for t in reached)
    without = sum(ok_rows[t] for t in tasks if t not in reached)
    return (
        f"every covering skill run to its end in {len(reached)}/{len(tasks)} tasks "
        f"(the app confirmed {confirmed} of those; {without} others succeeded without)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", help="folder for coverage.json and coverage.md (default: bench/results/skills/DATE-COMMIT-coverage)"
    )
    parser.add_argument("--run", action="append", default=[], help="an apps eval results folder (repeatable)")
    parser.add_argument("--app", action="append", default=[], help="an app to read (repeatable; default: every app)")
    parser.add_argument(
        "--app-dir", action="append", default=[], help="another app folder (webagent/apps/APP_FORMAT.md; repeatable)"
    )
    args = parser.parse_args(argv)
    try:
        apps = load_apps(args.app or None, extra=args.app_dir)
    except UserError as exc:  # an unknown app, a folder with no app.toml: one line
        print(exc, file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []
    by_share: dict[str, str] = {}
    lines = [
        "| task | skills that cover it | one demonstration showed them together | gold steps they do |",
        "|---|---|---|---|",
    ]
    for app in apps:
        skills = store.load(app_site(app))
        if not skills:
            print(f"{app.name}: no skills kept: run `webagent apps learn --app {app.name}` first", file=sys.stderr)
            return 2
        for task in app.tasks:
            combo = needed([s for s in skills if covers(s, task)])
            together = any(all(src in s.sources for s in combo) for src in {x for s in combo for x in s.sources})
            new = len(combo) >= 2 and not together
            share = share_covered(combo, task)
            rows.append(
                {
                    "app": app.name,
                    "task": task.id,
                    "skills": [s.id for s in combo],
                    "new_combination": new,
                    "gold_share_covered": round(share, 3),
                }
            )
            by_share[task.id] = SHARES[0 if share == 0 else 1 if share < 0.5 else 2 if share < 1 else 3]
            shown = "yes" if together else ("no" if len(combo) >= 2 else "–")
            lines.append(f"| {task.id} | {', '.join(s.id for s in combo) or '–'} | {shown} | {share:.0%} |")
    needing_new = [r for r in rows if r["new_combination"]]
    used = [r for r in rows if r["skills"]]
    summary = (
        f"{len(used)} of {len(rows)} evaluation tasks have a learned skill covering part of their gold path; "
        f"{len(needing_new)} need two or more skills in a combination no single demonstration showed."
    )
    print(summary)
    combination = {r["task"]: "new combination" if r["new_combination"] else "the others" for r in rows}
    covering = {r["task"]: r["skills"] for r in rows}
    for run in args.run:
        if not (Path(run) / "episodes.jsonl").is_file():
            print(f"{run}: no episodes.jsonl")
            continue
        ok_rows = _episodes(Path(run))
        print(f"{run}: " + success_by(ok_rows, combination, ["new combination", "the others"]))
        print(f"{run}: " + success_by(ok_rows, by_share, SHARES))
        if reached := skills_reached(Path(run), ok_rows, covering):
            print(f"{run}: " + reached)
    out = Path(args.out) if args.out else results_folder("skills", "coverage")
    write_meta(out)
    (out / "coverage.json").write_text(json.dumps({"summary": summary, "tasks": rows}, indent=1))
    (out / "coverage.md").write_text(summary + "\n\n" + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
