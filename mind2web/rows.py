"""What a Mind2Web run folder holds, as typed records shared by runner, report and merge.

OUT/steps.jsonl   one StepRow per line, appended as steps finish; a key (variant, task,
                  step) may appear again when a step is re-run (an endpoint failure on
                  resume): the last row wins.
OUT/manifest.json the planned tasks with their splits and step uids, so the report scores
                  over the gold steps (a step never run is a failure) without the data.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from webagent.errors import DataError, UserError

STEPS_FILE = "steps.jsonl"
MANIFEST_FILE = "manifest.json"

RowKey = tuple[str, str, str]  # variant, annotation_id, action_uid


class StepRow(BaseModel):
    """One method on one step: its prediction, its score and what it cost."""

    model_config = ConfigDict(extra="forbid")

    variant: str
    split: str
    annotation_id: str
    action_uid: str
    step_index: int
    task_steps: int
    website: str
    # prediction and score (mind2web.metrics.score_step)
    element_id: str | None
    op: str | None
    value: str | None
    element_correct: bool
    op_f1: float
    step_success: bool
    # context the method built
    full_words: int
    context_words: int
    compression_rate: float
    num_snippets: int
    gist_memory_words: int | None
    lookups: list[int]
    lookup_calls: int
    act_on: str | None  # readagent-p: which ids the action could pick
    # what went wrong
    failures: int  # unusable replies (after the re-ask) and failed calls
    lookup_failures: int
    endpoint_failed: bool  # the endpoint, not the model's reply, failed: re-run on resume
    problem: str | None
    # cost: "spent" reached the model in this run; "needed" counts cached replies too
    calls: int
    cached_calls: int
    prompt_tokens: int
    completion_tokens: int
    needed_prompt_tokens: int
    needed_completion_tokens: int
    wall_s: float

    @property
    def key(self) -> RowKey:
        return self.variant, self.annotation_id, self.action_uid

    def to_line(self) -> str:
        return self.model_dump_json() + "\n"


class PlannedTask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    annotation_id: str
    split: str
    website: str
    action_uids: list[str]


class Manifest(BaseModel):
    """Every task planned into a run folder (the union over resumes and merged shards)."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[PlannedTask] = []

    def union(self, more: list[PlannedTask], *, source: str = "") -> Manifest:
        known = {t.annotation_id: t for t in self.tasks}
        merged = list(self.tasks)
        for t in more:
            old = known.get(t.annotation_id)
            if old is None:
                known[t.annotation_id] = t
                merged.append(t)
            elif (old.split, old.action_uids) != (t.split, t.action_uids):
                raise UserError(
                    f"task {t.annotation_id} has other steps or another split than {source or 'the run'} recorded "
                    f"in {MANIFEST_FILE}: the data changed; use another --out"
                )
        return Manifest(tasks=merged)


def read_manifest(folder: Path) -> Manifest:
    path = folder / MANIFEST_FILE
    if not path.exists():
        return Manifest()
    try:
        return Manifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        err = exc.errors()[0]
        raise DataError(
            str(path), f"{err['msg']} (written by another version? start a new --out)", field=_field(err["loc"])
        ) from None


def write_manifest(folder: Path, manifest: Manifest) -> None:
    path = folder / MANIFEST_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(manifest.model_dump_json(indent=1), encoding="utf-8")
    os.replace(tmp, path)  # a run killed here keeps the old manifest, never half of one


def _field(loc: tuple) -> str:
    return ".".join(str(part) for part in loc) or "(row)"


def _row_problem(err: Mapping[str, Any]) -> str:
    if err["type"] == "missing":
        return (
            "required field is missing (written by an older version? score it with that version or start a new --out)"
        )
    if err["type"] == "extra_forbidden":
        return "unknown field (written by another version? start a new --out)"
    return err["msg"]


def read_rows(path: Path) -> list[StepRow]:
    """The rows of a steps.jsonl, the last one per key. A torn last line (a run killed
    mid-write) is dropped; any other bad line is a DataError naming file and line."""
    if not path.exists():
        return []
    data = path.read_bytes()
    lines = data.split(b"\n")
    rows: dict[RowKey, StepRow] = {}
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            if lineno == len(lines):  # no newline after it: the write was cut short
                break
            raise DataError(str(path), f"not a JSON line ({exc})", record=f"line {lineno}") from None
        try:
            row = StepRow.model_validate(obj)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise DataError(str(path), _row_problem(err), record=f"line {lineno}", field=_field(err["loc"])) from None
        rows.pop(row.key, None)  # a re-run's row replaces the old one, and goes last
        rows[row.key] = row
    return list(rows.values())
