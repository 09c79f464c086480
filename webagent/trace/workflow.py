"""A finished run as a program (``Workflow``): ``workflow.json``.

    {"version": 1, "task": ..., "start_url": ..., "allow_domains": [...],
     "params": {"name": {"default": "Ada Lovelace", "source": "task"}, ...},
     "steps": [{"op": "TYPE", "value": "Ada Lovelace", "param": "name", "press_enter": false,
                "target": <fingerprint>, "page": {"url", "pattern", "title"}, "text": "..."}, ...,
               {"op": "DONE", "value": "<answer>", "page": {...}}],
     "source": {...}}

Each step is a ``RecordedStep`` (``trace.step``), written with the keys its writer set.
Built from a trace folder (``steps.jsonl`` + ``run.json``, as ``webagent run`` and
``webagent replay`` write them): the executed steps that worked, in order (also those
that seemed to change nothing: a typed password looks like nothing); failed steps and
model replies are left out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from webagent.browser import REDACTED
from webagent.errors import UserError
from webagent.trace import params as P
from webagent.trace.fingerprint import PageRef, url_pattern
from webagent.trace.record import FILE as STEPS
from webagent.trace.record import StepRecord, read_steps
from webagent.trace.step import ELEMENT_OPS, RecordedStep

VERSION = 1
REPLAYABLE = (*ELEMENT_OPS, "SCROLL", "GOTO", "BACK", "DONE")
FILE = "workflow.json"


class Workflow(BaseModel):
    """A finished run as a program (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")
    version: int = VERSION
    task: str = ""
    start_url: str
    allow_domains: list[str] = Field(default_factory=list)
    params: dict[str, dict[str, Any]] = Field(default_factory=dict)  # name -> {default, source[, field]}
    steps: list[RecordedStep]
    source: dict[str, Any] = Field(default_factory=dict)  # the trace it came from, the replay it was repaired by

    def to_json(self) -> dict[str, Any]:
        """As written: each step with the keys its writer set."""
        data = self.model_dump(mode="json")
        data["steps"] = [step.model_dump(mode="json", exclude_unset=True) for step in self.steps]
        return data


def read_records(folder: Path) -> list[StepRecord]:
    """The step records of the run traced in ``folder``."""
    path = folder / STEPS
    if not path.is_file():
        raise UserError(f"{folder} is not a run's trace folder (no {STEPS})")
    return read_steps(path)


def from_trace(folder: str | Path, declared: dict[str, str] | None = None) -> Workflow:
    """The workflow of the run traced in ``folder``; ``declared`` parameters as given to
    ``webagent run --param`` (also read from the folder's ``params.json``)."""
    folder = Path(folder)
    records = read_records(folder)
    run = json.loads((folder / "run.json").read_text(encoding="utf-8")) if (folder / "run.json").is_file() else {}
    if run.get("status") != "done":
        raise UserError(
            f"the run in {folder} ended {run.get('status') or 'without run.json'!r}, not 'done': "
            "only a finished run can be replayed"
        )
    saved = folder / "params.json"
    declared = {**(json.loads(saved.read_text(encoding="utf-8")) if saved.is_file() else {}), **(declared or {})}
    steps: list[RecordedStep] = []
    for rec in (done for record in records for done in record.as_done()):
        action = rec.action
        if action is None or not rec.ok:
            continue
        if rec.dry_run:
            raise UserError(f"the run in {folder} was a dry run: nothing was done, nothing to replay")
        op = action.operation
        if op not in REPLAYABLE:  # steps that "changed nothing" stay: a password typed looks like nothing
            continue
        step = RecordedStep(
            op=op,  # type: ignore[arg-type]
            value=action.value or "",
            press_enter=action.press_enter,
            page=PageRef(url=rec.url, pattern=url_pattern(rec.url), title=rec.title),
            text=rec.action_text,
        )
        if op in ELEMENT_OPS or (op == "SCROLL" and action.element_id):
            if not rec.target:
                raise UserError(
                    f"step {rec.step} of {folder} has no element fingerprint (the run was "
                    "recorded before replay existed, or its element was gone): run it again"
                )
            step.target = rec.target
        if op == "TYPE" and step.value == REDACTED:
            step.secret = True
        steps.append(step)
    if steps and steps[-1].op != "DONE" and run.get("final_url"):
        # The site ended the run (a shop's confirmation, MiniWoB's reward), not the model's
        # DONE: the replay ends on the page the run ended on.
        final = run["final_url"]
        steps.append(
            RecordedStep(
                op="DONE",
                value="",
                press_enter=False,
                text="DONE (the site showed the result)",
                page=PageRef(url=final, pattern=url_pattern(final), title=run.get("final_title") or ""),
            )
        )
    if not steps or steps[-1].op != "DONE":
        raise UserError(f"the run in {folder} has no DONE step to end on")
    task = run.get("task") or ""
    params = P.assign(steps, task, declared)
    return Workflow(
        version=VERSION,
        task=task,
        start_url=steps[0].page.url,
        allow_domains=list(run.get("allow_domains") or []),
        params=params,
        steps=steps,
        source={"trace": str(folder), "answer": run.get("answer")},
    )


def load(folder: str | Path, declared: dict[str, str] | None = None) -> Workflow:
    """``folder/workflow.json`` when there is one (a saved workflow, a replay's trace),
    else the workflow built from the run traced in ``folder``."""
    folder = Path(folder)
    path = folder / FILE
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != VERSION:
            raise UserError(f"{path}: workflow version {data.get('version')!r}, this webagent reads {VERSION}")
        try:
            return Workflow.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise UserError(f"{path}: not a workflow: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
    return from_trace(folder, declared)


def save(workflow: Workflow, folder: str | Path) -> Path:
    return write_json(Path(folder) / FILE, workflow.to_json())


def write_json(path: Path, data) -> Path:
    """``data`` written to ``path`` whole or not at all: a failure halfway loses nothing (a
    workflow, a site's skills)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)
    return path
