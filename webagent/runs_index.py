"""The runs kept under a runs folder (``runs/`` by default: ``<kind>/<time>-<task>/``, as
``webagent.api.default_trace_dir`` names them; kinds ``agent``, ``replay``, ``teach``), newest
first, each read from its own ``run.json``. A folder whose ``run.json`` is not there yet is a
run still going (or one that died before writing it): ``status`` says ``unfinished``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from webagent.errors import UserError
from webagent.trace.record import FILE as STEPS


@dataclass(frozen=True)
class RunEntry:
    """One run's folder and what its ``run.json`` says."""

    id: str  # ``<kind>/<folder name>``: the folder relative to the runs folder
    folder: Path
    kind: str
    task: str
    status: str  # run.json's, or ``unfinished``
    steps: int
    answer: str | None
    error: str | None
    updated: float  # the folder's last change (seconds since the epoch)

    @property
    def report(self) -> Path | None:
        path = self.folder / "report.html"
        return path if path.is_file() else None


def _is_run(folder: Path) -> bool:
    return folder.is_dir() and ((folder / "run.json").is_file() or (folder / STEPS).is_file())


def read_entry(root: Path, folder: Path) -> RunEntry:
    run_file = folder / "run.json"
    try:
        run = json.loads(run_file.read_text(encoding="utf-8")) if run_file.is_file() else {}
    except (OSError, json.JSONDecodeError):
        run = {"status": "unreadable run.json"}
    if not isinstance(run, dict):
        run = {"status": "unreadable run.json"}
    changed = max((p.stat().st_mtime for p in (run_file, folder / STEPS) if p.is_file()), default=0.0)
    return RunEntry(
        id=folder.relative_to(root).as_posix(),
        folder=folder,
        kind=folder.parent.name,
        task=str(run.get("task") or ""),
        status=str(run.get("status") or "unfinished"),
        steps=int(run.get("steps") or 0),
        answer=run.get("answer"),
        error=run.get("error"),
        updated=changed or folder.stat().st_mtime,
    )


def recent_runs(root: Path, limit: int = 200) -> list[RunEntry]:
    """The runs under ``root`` (``<kind>/<run>/``), newest first, at most ``limit``."""
    if not root.is_dir():
        return []
    folders = [run for kind in root.iterdir() if kind.is_dir() for run in kind.iterdir() if _is_run(run)]
    entries = [read_entry(root, folder) for folder in folders]
    return sorted(entries, key=lambda e: e.updated, reverse=True)[:limit]


def find_run(root: Path, run_id: str) -> RunEntry:
    """The run ``run_id`` (``<kind>/<folder>``) under ``root``; a ``UserError`` for any other
    path (one outside ``root`` included)."""
    parts = run_id.split("/")
    if len(parts) != 2 or any(p in ("", ".", "..") for p in parts):
        raise UserError(f"no run {run_id!r}: a run is named <kind>/<folder>")
    folder = root / parts[0] / parts[1]
    if not _is_run(folder):
        raise UserError(f"no run {run_id!r} under {root}")
    return read_entry(root, folder)
