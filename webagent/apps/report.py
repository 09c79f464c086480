"""The suite's report from ``episodes.jsonl``: ``report.md`` (success per app and per task
kind, a row per task with steps, seconds, prompt tokens and how a failure ended),
``summary.json``, ``success.png`` and, where the tasks' traces are, ``steps.md``
(``steps_digest``). Another run's folder (the ceiling) may be named to
stand beside each figure."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from webagent.apps.episode import AppsRow
from webagent.apps.runner import results
from webagent.apps.steps_digest import write_steps
from webagent.results_folder import figure

# How the report groups tasks: (name, heading, the groups of a row: its app, or each of its kinds)
GROUPINGS = (("app", "By app", lambda r: [r.app]), ("kind", "By task kind", lambda r: r.kinds))


def _share(rows: list[AppsRow]) -> str:
    won = sum(r.success for r in rows)
    return f"{won}/{len(rows)} ({100 * won / len(rows):.0f}%)" if rows else "–"


def _groups(rows: list[AppsRow], key) -> dict[str, list[AppsRow]]:
    out: dict[str, list[AppsRow]] = {}
    for r in rows:
        for k in key(r):
            out.setdefault(k, []).append(r)
    return dict(sorted(out.items()))


def summarise(rows: list[AppsRow]) -> dict:
    n = len(rows)
    med = lambda xs: sorted(xs)[len(xs) // 2] if xs else 0  # noqa: E731
    return {
        "tasks": n,
        "success": sum(r.success for r in rows),
        "success_rate": round(sum(r.success for r in rows) / n, 4) if n else 0.0,
        **{
            f"by_{name}": {
                k: {"tasks": len(rs), "success": sum(r.success for r in rs)} for k, rs in _groups(rows, key).items()
            }
            for name, _, key in GROUPINGS
        },
        "causes": dict(Counter(_cause_kind(r) for r in rows if not r.success).most_common()),
        "median_steps": med([r.steps for r in rows]),
        "median_seconds": med([r.time_s for r in rows]),
        "median_prompt_tokens": med([r.prompt_tokens for r in rows]),
        # --no-stop-at-goal: runs that reached the goal, went on acting after it, and lost it
        "reached_goal": sum(r.goal_step is not None for r in rows),
        "went_on_after_goal": sum(bool(r.went_on) for r in rows),
        "lost_after_goal": sum(r.goal_step is not None and not r.success for r in rows),
        # the ceiling: elements the agent showed under another name than their accessible one
        "naming_defects": sum(len(r.naming) for r in rows),
    }


def _cause_kind(row: AppsRow) -> str:
    """How a failed task ended, counted by kind: the ceiling's loss (``ceiling.LossKind``: the
    agent kept a gold step from the perfect model), else the run's cause in the report's words.
    A row written before losses had a kind reads "other"."""
    if not row.cause:
        return "unknown"
    if row.cause.startswith("gold step"):
        return {"not_offered": "not offered", "refused": "refused"}.get(row.loss or "", "other")
    return row.cause


def write_report(out: Path, beside: Path | None = None) -> Path:
    """``out``/report.md, summary.json and success.png; ``beside``: a run (the ceiling) to compare."""
    config = json.loads((out / "config.json").read_text()) if (out / "config.json").is_file() else {}
    rows = list(results(out).rows().values())
    other = list(results(beside).rows().values()) if beside else []
    other_by = {r.task: r for r in other}
    summary = {"config": config, **summarise(rows)}
    if other:
        summary["beside"] = {"folder": str(beside), **summarise(other)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    label = beside.name if beside and other else ""
    agent = config.get("agent", config)  # the agent's options (a folder of an older version: at the top)
    lines = [
        f"# Real-app suite: {config.get('model', '?')}",
        "",
        f"{summary['success']}/{summary['tasks']} tasks succeeded (the app's database check)"
        + (f"; beside: {_share(other)} ({beside})" if other else "")
        + ".",
        f"Step limit {agent.get('max_steps')}, look-up {agent.get('lookup')}, context {agent.get('context_tokens')} tokens.",
        *(
            [
                "",
                f"The runs went on after the app's check first passed (--no-stop-at-goal): "
                f"{summary['reached_goal']} reached the goal, {summary['went_on_after_goal']} acted after it, "
                f"{summary['lost_after_goal']} no longer passed at the end.",
            ]
            if config.get("stop_at_goal") is False
            else []
        ),
    ]
    for column, title, key in GROUPINGS:
        lines += [
            "",
            f"## {title}",
            "",
            f"| {column} | success |{' ' + label + ' |' if other else ''}",
            f"|---|---|{'---|' if other else ''}",
        ]
        for name, rs in _groups(rows, key).items():
            side = f" {_share([other_by[r.task] for r in rs if r.task in other_by])} |" if other else ""
            lines.append(f"| {name} | {_share(rs)} |{side}")
    if summary["causes"]:
        lines += ["", "## How failures ended", ""] + [f"- {c}: {n}" for c, n in summary["causes"].items()]
    if any("naming" in r.model_fields_set for r in rows):  # a ceiling run: how the agent named the gold elements
        defects = [(r.task, n) for r in rows for n in r.naming]
        by = {k: sum(r.found_by.get(k, 0) for r in rows) for k in ("element", "name")}
        lines += ["", "## Naming defects", ""]
        lines.append(
            f"The gold model found its element's line by the element (role and name in the live page, then "
            f"its node) {by['element']} times, by kind and name among the controls offered {by['name']} times (the "
            "element not on the page when asked)."
        )
        lines.append("")
        lines.append(
            f"{len(defects)} gold elements shown under another name than their accessible one"
            + (":" if defects else " (every gold element found by role and name has the name the browser gives it).")
        )
        lines += [
            f"- {task}, gold step {n['gold_step']}: [{n['id']}] {n['kind']} shown as {n['shown']!r}, "
            f"accessible name {n['accessible']!r}"
            for task, n in defects
        ]
    lines += [
        "",
        "## Tasks",
        "",
        "| task | kinds | success | steps (gold) | s | prompt tokens | how it ended |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: (r.app, r.task)):
        ended = "site confirmed" if r.success else (r.cause or r.status)
        lines.append(
            f"| {r.task} | {', '.join(r.kinds)} | {'yes' if r.success else 'no'} | "
            f"{r.steps} ({r.gold_steps}) | {r.time_s:.0f} | {r.prompt_tokens} | "
            f"{ended.replace('|', '/')} |"
        )
    (out / "report.md").write_text("\n".join(lines) + "\n")
    write_steps(out)  # steps.md, where the tasks' traces are
    _plot(out / "success.png", rows, other, config.get("model", "?"), label)
    return out / "report.md"


def _plot(path: Path, rows: list[AppsRow], other: list[AppsRow], model: str, other_label: str = "") -> None:
    apps = sorted({r.app for r in rows})
    rate = lambda rs: 100 * sum(r.success for r in rs) / len(rs) if rs else 0  # noqa: E731
    with figure(path, (6, 3.2), dpi=100) as ax:
        width = 0.38 if other else 0.6
        xs = range(len(apps) + 1)
        mine = [rate([r for r in rows if r.app == a]) for a in apps] + [rate(rows)]
        ax.bar([x - (width / 2 if other else 0) for x in xs], mine, width, label=model)
        if other:
            theirs = [rate([r for r in other if r.app == a]) for a in apps] + [rate(other)]
            ax.bar([x + width / 2 for x in xs], theirs, width, label=other_label)
        ax.set_xticks(list(xs), apps + ["all"])
        ax.set_ylabel("tasks the app confirms (%)")
        ax.set_ylim(0, 105)
        ax.legend(fontsize=8)
