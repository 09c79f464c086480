"""Saved workflows: ``$WEBAGENT_HOME/workflows/NAME/workflow.json`` (plus ``saved.json``:
when, from which trace, replays since).

``webagent run --save-as NAME`` keeps a successful run here; ``webagent replay NAME``
runs it; a replay that had to repair steps writes the repaired program back, so the
next replay is model-free again.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

from webagent.errors import UserError
from webagent.llm.cache import webagent_home
from webagent.trace import workflow as W

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def root() -> Path:
    return webagent_home() / "workflows"


def check_name(name: str) -> str:
    if not _NAME.match(name or ""):
        raise UserError(f"workflow name {name!r}: use letters, digits, '.', '_' and '-' (at most 64)")
    return name


def folder(name: str) -> Path:
    return root() / check_name(name)


def exists(name: str) -> bool:
    return bool(_NAME.match(name or "")) and (root() / name / W.FILE).is_file()


def save(name: str, workflow: W.Workflow, *, note: str = "saved") -> Path:
    where = folder(name)
    path = W.save(workflow, where)
    meta_path = where / "saved.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {"created": time.time()}
    meta.update(updated=time.time(), last=note, trace=workflow.source.get("trace"))
    meta_path.write_text(json.dumps(meta, indent=1), encoding="utf-8")
    return path


def _saved(name: str) -> Path:
    if not exists(name):
        raise UserError(f"no saved workflow {name!r} (see `webagent workflows list`)")
    return folder(name)


def load(name: str) -> W.Workflow:
    return W.load(_saved(name))


def remove(name: str) -> None:
    shutil.rmtree(_saved(name))


def listing() -> list[dict]:
    """One row per saved workflow: name, task, steps, parameters, last saved."""
    rows: list[dict] = []
    for path in sorted(root().iterdir()) if root().is_dir() else []:
        if not (path / W.FILE).is_file():
            continue
        try:
            workflow = W.load(path)
        except (UserError, ValueError) as exc:
            rows.append({"name": path.name, "error": str(exc)})
            continue
        meta_path = path / "saved.json"
        meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
        rows.append(
            {
                "name": path.name,
                "task": workflow.task,
                "steps": len(workflow.steps),
                "params": sorted(workflow.params),
                "start_url": workflow.start_url,
                "updated": meta.get("updated"),
                "last": meta.get("last"),
            }
        )
    return rows


def resolve(trace_or_name: str | Path) -> tuple[W.Workflow, str | None]:
    """(workflow, store name or None) for ``webagent replay TRACE_DIR|NAME``: an existing
    folder is a trace (or workflow) folder, anything else a saved name."""
    path = Path(trace_or_name)
    if path.is_dir():
        return W.load(path), None
    name = str(trace_or_name)
    if exists(name):
        return load(name), name
    raise UserError(f"{trace_or_name!r} is neither a trace folder nor a saved workflow (see `webagent workflows list`)")
