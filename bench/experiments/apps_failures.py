"""What the agent got wrong on the real-app suite: the failed tasks of one `webagent apps eval`
folder, ranked by how they ended, each with a trace excerpt: the page lines the model saw
around the element it acted on, its reply, and what the agent told it.

    .venv/bin/python -m bench.experiments.apps_failures runs/apps/1.5b [--out failures.md]

The excerpt is taken at the step where the run went wrong as far as a script can tell: a
DONE the app disagrees with, the action repeated until the run was stuck, or the last step
at the step limit. Reading the whole trace (its `steps.jsonl` keeps every prompt and reply)
is still how the cause is confirmed.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from bench.lib.results_io import read_result
from webagent.apps.steps_digest import trace_folder
from webagent.trace.record import FILE, StepRecord, read_steps
from webagent.web.agent_view import LINE_ID

AROUND = 2  # page lines shown before and after the acted-on element's line


def _steps(folder: Path, row: dict) -> list[StepRecord]:
    found = trace_folder(folder, row["task"], row.get("trace_dir"))
    return read_steps(found / FILE) if found is not None else []


def _decisive(steps: list[StepRecord], status: str) -> StepRecord | None:
    """The step to quote: the last one, or for ``stuck`` the first of the repeated actions."""
    if not steps:
        return None
    if status == "stuck":
        last = steps[-1].action_text
        return next((s for s in steps if s.action_text == last), steps[-1])
    return steps[-1]


def _page_lines(step: StepRecord) -> list[str]:
    """The page as the model read it at this step (the last page block of its prompt)."""
    calls = [c for c in step.calls if c.get("purpose") == "action"] or step.calls
    if not calls:
        return []
    text = str(calls[0]["messages"][-1]["content"])
    blocks = text.split("'''")
    return blocks[-2].strip("\n").splitlines() if len(blocks) >= 3 else []


def excerpt(step: StepRecord) -> str:
    lines = _page_lines(step)
    element = (step.action.element_id if step.action is not None else "") or ""
    at = next((i for i, line in enumerate(lines) if (m := LINE_ID.match(line)) and m.group(1) == element), None)
    shown = lines[max(0, at - AROUND) : at + AROUND + 1] if at is not None else lines[-2 * AROUND - 1 :]
    reply = next((c.get("reply") for c in step.calls if c.get("purpose") == "action"), "") or ""
    return "\n".join(
        [
            f"step {step.step}, {step.url}",
            *(f"    {line}" for line in shown),
            f"  reply: {str(reply).strip()}",
            f"  -> {step.result_text}",
        ]
    )


def report(folder: Path) -> str:
    rows = {row["task"]: row for row in read_result(folder / "episodes.jsonl")[0]}
    failed = [r for r in rows.values() if not r["success"]]
    causes = Counter(r.get("cause") or r["status"] for r in failed)
    out = [
        f"# Failures in {folder}: {len(failed)} of {len(rows)} tasks",
        "",
        "| cause | tasks |",
        "|---|---|",
        *(f"| {cause} | {n} |" for cause, n in causes.most_common()),
        "",
    ]
    for cause, _ in causes.most_common():
        out.append(f"## {cause}")
        for r in failed:
            if (r.get("cause") or r["status"]) != cause:
                continue
            step = _decisive(_steps(folder, r), r["status"])
            out += [
                "",
                f"**{r['task']}** ({r['steps']} steps; check: {r.get('check') or r.get('error') or '-'})",
                "",
                "```",
                excerpt(step) if step else "(no trace)",
                "```",
            ]
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="an `apps eval` output folder")
    parser.add_argument("--out", type=Path, help="write the Markdown here (default: print it)")
    args = parser.parse_args(argv)
    if not (args.folder / "episodes.jsonl").is_file():
        print(f"{args.folder}: no episodes.jsonl (not an `apps eval` folder)", file=sys.stderr)
        return 2
    text = report(args.folder)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
