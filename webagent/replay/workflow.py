"""A finished run as a program: ``workflow.json``.

    {"version": 1, "task": ..., "start_url": ..., "allow_domains": [...],
     "params": {"name": {"default": "Ada Lovelace", "source": "task"}, ...},
     "steps": [{"op": "TYPE", "value": "Ada Lovelace", "param": "name", "press_enter": false,
                "target": <fingerprint>, "page": {"url", "pattern", "title"}, "text": "..."}, ...,
               {"op": "DONE", "value": "<answer>", "page": {...}}],
     "source": {...}}

Built from a trace folder (``steps.jsonl`` + ``run.json``, as ``webagent run`` and
``webagent replay`` write them): the executed steps that worked, in order (also those
that seemed to change nothing: a typed password looks like nothing); failed steps and
model replies are left out.
"""

from __future__ import annotations

import json
from pathlib import Path

from webagent.browser import REDACTED
from webagent.errors import UserError
from webagent.replay import params as P
from webagent.replay.fingerprint import url_pattern

VERSION = 1
ELEMENT_OPS = ("CLICK", "TYPE", "SELECT")
REPLAYABLE = (*ELEMENT_OPS, "SCROLL", "GOTO", "BACK", "DONE")
FILE = "workflow.json"


def _read_steps(folder: Path) -> list[dict]:
    path = folder / "steps.jsonl"
    if not path.is_file():
        raise UserError(f"{folder} is not a run's trace folder (no steps.jsonl)")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _expanded(records: list[dict]) -> list[dict]:
    """The records with each SKILL step replaced by the steps its skill did (``skills.run``),
    and each FILL step by its fields and click (``agent.fill``), each as a step of the run:
    replay and learning read what was done on the page."""
    out: list[dict] = []
    for rec in records:
        op = str((rec.get("action") or {}).get("operation"))
        inner = rec.get({"SKILL": "skill_steps", "FILL": "fill_steps"}.get(op, ""))
        if not isinstance(inner, list):
            out.append(rec)
            continue
        for k, sub in enumerate(inner, 1):
            out.append(
                {
                    "step": f"{rec.get('step')}.{k}",
                    "url": sub.get("url") or rec.get("url"),
                    "title": sub.get("title") or rec.get("title"),
                    "ok": sub.get("ok"),
                    "target": sub.get("target"),
                    "action_text": f"{sub.get('op')} {sub.get('element') or sub.get('value') or ''}".strip(),
                    "action": {
                        "operation": sub.get("op"),
                        "element_id": sub.get("element_id") or "",
                        "value": sub.get("value") or "",
                        "press_enter": bool(sub.get("press_enter")),
                    },
                }
            )
    return out


def from_trace(folder: str | Path, declared: dict[str, str] | None = None) -> dict:
    """The workflow of the run traced in ``folder``; ``declared`` parameters as given to
    ``webagent run --param`` (also read from the folder's ``params.json``)."""
    folder = Path(folder)
    records = _read_steps(folder)
    run = json.loads((folder / "run.json").read_text(encoding="utf-8")) if (folder / "run.json").is_file() else {}
    if run.get("status") != "done":
        raise UserError(
            f"the run in {folder} ended {run.get('status') or 'without run.json'!r}, not 'done': "
            "only a finished run can be replayed"
        )
    saved = folder / "params.json"
    declared = {**(json.loads(saved.read_text(encoding="utf-8")) if saved.is_file() else {}), **(declared or {})}
    steps: list[dict] = []
    for rec in _expanded(records):
        action = rec.get("action")
        if not action or not rec.get("ok"):
            continue
        if rec.get("dry_run"):
            raise UserError(f"the run in {folder} was a dry run: nothing was done, nothing to replay")
        op = action.get("operation")
        if op not in REPLAYABLE:  # steps that "changed nothing" stay: a password typed looks like nothing
            continue
        step = {
            "op": op,
            "value": action.get("value") or "",
            "press_enter": bool(action.get("press_enter")),
            "page": {
                "url": rec.get("url") or "",
                "pattern": url_pattern(rec.get("url") or ""),
                "title": rec.get("title") or "",
            },
            "text": rec.get("action_text") or "",
        }
        if op in ELEMENT_OPS or (op == "SCROLL" and action.get("element_id")):
            target = rec.get("target")
            if not target:
                raise UserError(
                    f"step {rec.get('step')} of {folder} has no element fingerprint (the run was "
                    "recorded before replay existed, or its element was gone): run it again"
                )
            step["target"] = target
        if op == "TYPE" and step["value"] == REDACTED:
            step["secret"] = True
        steps.append(step)
    if steps and steps[-1]["op"] != "DONE" and run.get("final_url"):
        # The site ended the run (a shop's confirmation, MiniWoB's reward), not the model's
        # DONE: the replay ends on the page the run ended on.
        final = run["final_url"]
        steps.append(
            {
                "op": "DONE",
                "value": "",
                "press_enter": False,
                "text": "DONE (the site showed the result)",
                "page": {"url": final, "pattern": url_pattern(final), "title": run.get("final_title") or ""},
            }
        )
    if not steps or steps[-1]["op"] != "DONE":
        raise UserError(f"the run in {folder} has no DONE step to end on")
    task = run.get("task") or ""
    params = P.assign(steps, task, declared)
    return {
        "version": VERSION,
        "task": task,
        "start_url": steps[0]["page"]["url"],
        "allow_domains": list(run.get("allow_domains") or []),
        "params": params,
        "steps": steps,
        "source": {"trace": str(folder), "answer": run.get("answer")},
    }


def load(folder: str | Path, declared: dict[str, str] | None = None) -> dict:
    """``folder/workflow.json`` when there is one (a saved workflow, a replay's trace),
    else the workflow built from the run traced in ``folder``."""
    folder = Path(folder)
    path = folder / FILE
    if path.is_file():
        workflow = json.loads(path.read_text(encoding="utf-8"))
        if workflow.get("version") != VERSION:
            raise UserError(f"{path}: workflow version {workflow.get('version')!r}, this webagent reads {VERSION}")
        return workflow
    return from_trace(folder, declared)


def save(workflow: dict, folder: str | Path) -> Path:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(workflow, indent=1, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)
    return path


def describe_step(step: dict) -> str:
    """``TYPE "Night Trains" {search_books} into [searchbox] "Search books"`` (for hints and listings)."""
    from webagent.replay.fingerprint import short

    op, value = step["op"], step.get("value") or ""
    shown = f' "{value}"' if value and op not in ("CLICK", "BACK") else ""
    param = f" {{{step['param']}}}" if step.get("param") else ""
    if op == "TYPE":
        return f"TYPE{shown}{param} into {short(step.get('target'))}" + (" + Enter" if step.get("press_enter") else "")
    if op == "SELECT":
        return f"SELECT{shown}{param} in {short(step.get('target'))}"
    if op == "CLICK":
        return f"CLICK {short(step.get('target'))}"
    if op == "DONE":
        return f"DONE{shown}"
    return f"{op}{shown}"
