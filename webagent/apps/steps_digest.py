"""``steps.md``: what the agent did on each task of an ``apps eval`` folder, step by step, read
from the task's trace: what the agent warned the model of in the step's prompt (a refusal, the
loop breaker's word), the model's reason, its action and what came of it. A run's results can
then be read, and quoted, where its traces are not: they stay on the machine that ran it
(screenshots and whole prompts are large), while the results folder is committed.

A task whose trace is not on this machine says so; a digest with no trace at all is not
written (it would replace one written where the traces were).
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

from webagent.apps.episode import AppsRow
from webagent.apps.runner import results
from webagent.errors import UserError
from webagent.trace.record import FILE, StepRecord, read_steps
from webagent.web.control_name import cut

NAME = "steps.md"
LINE_CHARS = 300  # one field of a step (a reason, an action, a result, a warning), cut beyond this


def _cut(text: str, limit: int = LINE_CHARS) -> str:
    return cut(" ".join(text.split()), limit)


def _where(url: str) -> str:
    """The step's address without scheme and host (the port changes from run to run)."""
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def trace_folder(out: Path, task: str, trace_dir: str | None) -> Path | None:
    """A task's trace: where the run wrote it (``trace_dir``), else under ``out``/traces (a
    results folder moved); None when neither holds one."""
    for folder in (Path(trace_dir) if trace_dir else None, out / "traces" / task):
        if folder is not None and (folder / FILE).is_file():
            return folder
    return None


def _task_text(folder: Path) -> str:
    try:
        return str(json.loads((folder / "run.json").read_text(encoding="utf-8")).get("task") or "")
    except (OSError, ValueError):
        return ""


def _step_lines(step: StepRecord) -> list[str]:
    lines = [f"{step.step}. `{_cut(_where(step.url), 80)}`"]
    if step.warning:  # (what this step's prompt carried: a refusal or the loop breaker's word)
        lines.append(f"   - warned: {_cut(step.warning)}")
    if step.reason:
        lines.append(f"   - reason: {_cut(step.reason)}")
    lines.append(f"   - action: {_cut(step.action_text or '(none)')}")
    lines.append(f"   - result: {_cut(step.result_text or '(none)')}")
    return lines


def _ending(row: AppsRow) -> str:
    if row.success:
        return "success (site confirmed)"
    said = f'; answered "{_cut(row.answer, 80)}"' if row.answer else ""
    return f"failed: {row.cause or row.status}{said}"


def digest(out: Path) -> str | None:
    """The digest of ``out``'s tasks (None when no task's trace is on this machine)."""
    rows = sorted(results(out).rows().values(), key=lambda r: (r.app, r.task))
    blocks, traced = [], 0
    for row in rows:
        head = [f"## {row.task}", "", f"{_ending(row)}; {row.steps} steps (gold {row.gold_steps})."]
        folder = trace_folder(out, row.task, row.trace_dir)
        if folder is None:
            blocks.append(head + ["", "(its trace is not on this machine)"])
            continue
        try:
            steps = read_steps(folder / FILE)
        except (UserError, ValueError) as exc:
            blocks.append(head + ["", f"(its trace cannot be read: {_cut(str(exc), 160)})"])
            continue
        traced += 1
        task = _task_text(folder)
        body = [line for step in steps for line in _step_lines(step)]
        blocks.append(head + ([f"Task: {task}"] if task else []) + [""] + body)
    if not traced:
        return None
    title = [
        "# Steps of each task",
        "",
        "Read from each task's trace: the warning the step's prompt carried (a refusal, the loop "
        "breaker's word), the model's reason, its action and the result. Secrets are shown as the "
        "trace keeps them (REDACTED).",
    ]
    return "\n".join(title + [line for block in blocks for line in ["", *block]]) + "\n"


def write_steps(out: Path) -> Path | None:
    """``out``/steps.md, unless no trace of ``out``'s tasks is on this machine."""
    text = digest(out)
    if text is None:
        return None
    path = out / NAME
    path.write_text(text, encoding="utf-8")
    return path
