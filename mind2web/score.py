"""Score a predictions file against Mind2Web tasks.

A predictions file is JSONL, one step per line::

    {"annotation_id": "...", "action_uid": "...", "element_id": "123", "op": "TYPE", "value": "new york"}

``element_id`` may be a string, an int or null (no element chosen); ``op`` is CLICK, TYPE
or SELECT (any case) or null/"" (no valid action); ``value`` is optional. Other keys are
kept as the step's ``extra``. Gold steps with no line count as failures
(``missing_predictions``); lines for steps not in the data are counted
(``unknown_predictions``) and the first few listed (``unknown_examples``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mind2web.data import Task
from mind2web.metrics import StepResult, aggregate, missing_step, score_step
from webagent.errors import DataError, UserError

__all__ = ["Prediction", "read_predictions", "score_steps", "score_predictions"]

OPS = ("CLICK", "TYPE", "SELECT")
MAX_EXAMPLES = 5


@dataclass
class Prediction:
    annotation_id: str
    action_uid: str
    element_id: str | None
    op: str | None
    value: str
    line: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return (self.annotation_id, self.action_uid)


def _parse_line(obj: Any, file: str, lineno: int) -> Prediction:
    rec = f"line {lineno}"
    if not isinstance(obj, dict):
        raise DataError(file, f"each line must be a JSON object, got {type(obj).__name__}", record=rec)
    for key in ("annotation_id", "action_uid"):
        if key not in obj:
            raise DataError(file, "required field is missing", record=rec, field=key)
        if not isinstance(obj[key], str) or not obj[key]:
            raise DataError(file, f"must be a non-empty string, got {obj[key]!r}", record=rec, field=key)
    for key in ("element_id", "op"):
        if key not in obj:
            raise DataError(file, "required field is missing (use null for no prediction)", record=rec, field=key)
    el = obj["element_id"]
    if isinstance(el, bool) or not (el is None or isinstance(el, (str, int))):
        raise DataError(file, f"must be a string, an int or null, got {el!r}", record=rec, field="element_id")
    op = (obj["op"].strip().upper() or None) if isinstance(obj["op"], str) else obj["op"]
    if op is not None and op not in OPS:  # a name other than the three, or not a string
        raise DataError(file, f"must be one of {', '.join(OPS)} or null, got {obj['op']!r}", record=rec, field="op")
    value = obj.get("value")
    if isinstance(value, bool) or not (value is None or isinstance(value, (str, int, float))):
        raise DataError(file, f"must be a string or null, got {value!r}", record=rec, field="value")
    extra = {k: v for k, v in obj.items() if k not in ("annotation_id", "action_uid", "element_id", "op", "value")}
    return Prediction(
        annotation_id=obj["annotation_id"],
        action_uid=obj["action_uid"],
        element_id=None if el is None else str(el),
        op=op,
        value="" if value is None else str(value),
        line=lineno,
        extra=extra,
    )


def read_predictions(path: str | Path) -> dict[tuple[str, str], Prediction]:
    """Read a predictions JSONL into ``{(annotation_id, action_uid): Prediction}``.
    A malformed line or a duplicate step raises DataError naming the line and field."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"predictions file not found: {p}")
    file = str(p)
    out: dict[tuple[str, str], Prediction] = {}
    with p.open("rb") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line.strip())
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                msg = (
                    f"invalid JSON: {e.msg} (column {e.colno})"
                    if isinstance(e, json.JSONDecodeError)
                    else f"not UTF-8: {e}"
                )
                raise DataError(file, msg, record=f"line {lineno}") from None
            pred = _parse_line(obj, file, lineno)
            if pred.key in out:
                raise DataError(
                    file,
                    f"second prediction for step {pred.annotation_id}/{pred.action_uid} (first on line {out[pred.key].line})",
                    record=f"line {lineno}",
                    field="action_uid",
                )
            out[pred.key] = pred
    return out


def score_steps(
    tasks: Iterable[Task], predictions: dict[tuple[str, str], Prediction]
) -> tuple[list[StepResult], int, list[Prediction]]:
    """Score every gold step; returns (results, number of missing predictions, the
    predictions that match no gold step)."""
    results: list[StepResult] = []
    missing = 0
    used: set[tuple[str, str]] = set()
    for task in tasks:
        for action in task.actions:
            key = (task.annotation_id, action.action_uid)
            pred = predictions.get(key)
            if pred is None:
                missing += 1
                results.append(missing_step(task.annotation_id, action.action_uid, task.split))
                continue
            used.add(key)
            results.append(
                score_step(
                    action,
                    pred.element_id,
                    pred.op,
                    pred.value,
                    annotation_id=task.annotation_id,
                    split=task.split,
                    extra=pred.extra,
                )
            )
    unknown = [p for k, p in predictions.items() if k not in used]
    unknown.sort(key=lambda p: p.line)
    return results, missing, unknown


def score_predictions(tasks: Iterable[Task], predictions_path: str | Path, *, by_split: bool = False) -> dict[str, Any]:
    """Score a predictions JSONL against ``tasks``. Returns the metrics of
    :func:`mind2web.metrics.aggregate` (macro ``element_acc, op_f1, step_sr, task_sr`` in
    percent, their ``micro_`` twins, ``num_tasks, num_steps``) plus
    ``missing_predictions, unknown_predictions, unknown_examples`` and, with ``by_split``,
    a ``by_split`` breakdown."""
    tasks = list(tasks)
    preds = read_predictions(predictions_path)
    results, missing, unknown = score_steps(tasks, preds)
    out = aggregate(results, by_split=by_split)
    out["missing_predictions"] = missing
    out["unknown_predictions"] = len(unknown)
    out["unknown_examples"] = [
        {"line": p.line, "annotation_id": p.annotation_id, "action_uid": p.action_uid} for p in unknown[:MAX_EXAMPLES]
    ]
    return out
