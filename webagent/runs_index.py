"""The runs kept on disk: every trace folder under a runs folder (``runs/<kind>/<time>-<task>``,
as ``webagent.api.default_trace_dir`` lays them out), newest first, and one run read back
(its outcome from ``run.json``, its steps from ``steps.jsonl``, a line each).

A run still going (or one that died before writing it) has ``steps.jsonl`` and no ``run.json``:
it is listed as ``unfinished``. Shared by the front doors that list runs (``webagent mcp``,
``webagent ui``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from webagent.errors import UserError
from webagent.trace.record import FILE as STEPS_FILE

RUN_FILE = "run.json"
REPORT_FILE = "report.html"


@dataclass(frozen=True)
class RunEntry:
    """One run folder as a listing shows it."""

    id: str  # the folder relative to the runs folder: ``agent/20261128-101500-buy-the-book``
    folder: Path
    kind: str  # agent | replay | teach | ... (the folder it sits in)
    task: str
    status: str  # done | max_steps | stuck | error | interrupted | unfinished (no run.json yet)
    steps: int
    answer: str | None
    error: str | None
    updated: float  # seconds since the epoch: the last write to the folder's files

    @property
    def report(self) -> Path | None:
        path = self.folder / REPORT_FILE
        return path if path.is_file() else None


def _is_run(folder: Path) -> bool:
    return (folder / RUN_FILE).is_file() or (folder / STEPS_FILE).is_file()


def _entry(root: Path, folder: Path) -> RunEntry:
    run: dict = {}
    path = folder / RUN_FILE
    if path.is_file():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            loaded = {"status": "unreadable", "error": f"{path.name}: {exc}"}
        run = loaded if isinstance(loaded, dict) else {"status": "unreadable", "error": f"{path.name}: not an object"}
    steps_path = folder / STEPS_FILE
    written = [p.stat().st_mtime for p in (path, steps_path) if p.is_file()]
    steps = run.get("steps")
    if not isinstance(steps, int):  # a run still going: the lines written so far
        steps = (
            sum(1 for line in steps_path.read_text(encoding="utf-8").splitlines() if line.strip())
            if steps_path.is_file()
            else 0
        )
    return RunEntry(
        id=folder.relative_to(root).as_posix(),
        folder=folder,
        kind=folder.parent.name if folder.parent != root else "",
        task=str(run.get("task") or ""),
        status=str(run.get("status") or "unfinished"),
        steps=steps,
        answer=run.get("answer"),
        error=run.get("error"),
        updated=max(written, default=folder.stat().st_mtime),
    )


def recent_runs(root: str | Path, limit: int | None = None) -> list[RunEntry]:
    """The runs under ``root`` (``root/<kind>/<run>``, or ``root/<run>``), newest first."""
    root = Path(root)
    if not root.is_dir():
        return []
    folders = [f for f in root.glob("*/*") if f.is_dir() and _is_run(f)]
    folders += [f for f in root.glob("*") if f.is_dir() and _is_run(f)]
    entries = sorted((_entry(root, f) for f in folders), key=lambda e: e.updated, reverse=True)
    return entries[:limit] if limit is not None else entries


def find_run(root: str | Path, run_id: str) -> RunEntry:
    """The run ``run_id`` (as ``recent_runs`` names it) under ``root``; a ``UserError`` when
    there is none, or when the id points outside ``root``."""
    root = Path(root).resolve()
    folder = (root / run_id).resolve()
    if not folder.is_relative_to(root) or folder == root:
        raise UserError(f"run {run_id!r}: not a run of {root}")
    if not folder.is_dir() or not _is_run(folder):
        raise UserError(f"run {run_id!r}: no such run in {root} (list them with the runs listing)")
    return _entry(root, folder)
