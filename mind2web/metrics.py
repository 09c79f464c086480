"""Mind2Web's own step and task metrics.

Followed: ``src/action_prediction/metric.py`` (``ActionEvaluatorMultiChoice``: ``calculate_f1``,
``postprocess_action``, ``evaluate_dataset``/``evaluate_dataset_llm``) and
``src/action_prediction/dataloader.py`` (``format_input_multichoice``) of the Mind2Web
repository (OSU-NLP-Group/Mind2Web; read from a public fork with the same files). In detail:

* **Element accuracy** — the predicted element is correct iff its ``backend_node_id`` is in
  the step's positive candidates (``final_prediction[0] in pos_ids``). Upstream, a step
  with no positive candidate (after the ranker's top-k cut) scores 0 for element, op F1
  *and* step success without asking the model; we do the same (the ranker cut is not
  applied here: the positives are the record's ``pos_candidates``).
* **Operation F1** — token-set F1 between ``"OP VALUE"`` strings. The gold string is built
  from ``operation.op`` and, for TYPE/SELECT only, ``operation.value`` (a CLICK target has
  no ``Value:`` line, so it is just ``"CLICK"``). The prediction string is
  ``op.strip() + " " + value.strip()`` whatever the op (upstream keeps a value predicted
  alongside CLICK). Tokens are ``str.split()`` sets — no lowercasing, no punctuation
  stripping (that variant belongs to the generation evaluator, not the paper's
  multi-choice one). Both empty → 1, one empty → 0, no overlap → 0.
* **Step success** — element correct and op F1 == 1.
* **Macro averages** — upstream's ``marco_*`` numbers: mean per task (keyed by
  ``annotation_id``), then mean over tasks; these are the paper's numbers. The plain
  ``element_acc``/``action_f1``/``step_acc`` upstream are means over all steps: our
  ``micro_*``.
* **Task success** — a task whose every step succeeded (upstream's ``error_ratio[0]``: the
  share of tasks with zero failed steps). A task with a missing step fails.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from mind2web.data import Action, Task
    from mind2web.rows import PlannedTask

__all__ = [
    "StepResult",
    "element_correct",
    "gold_op_string",
    "pred_op_string",
    "token_f1",
    "op_f1",
    "score_step",
    "missing_step",
    "task_success",
    "aggregate",
]


class StepResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    annotation_id: str
    action_uid: str
    split: str = ""
    element_correct: bool
    op_f1: float
    step_success: bool
    extra: dict[str, Any] = Field(default_factory=dict)


def element_correct(pred_id: str | int | None, pos_ids: Iterable[str | int]) -> bool:
    """``pred_id`` is one of the positive candidates' ``backend_node_id`` (compared as str).
    No prediction, or no positives, is never correct."""
    if pred_id is None:
        return False
    return str(pred_id) in {str(p) for p in pos_ids}


def gold_op_string(op: str, value: str | None) -> str:
    """``"CLICK"`` for a click (its value is ignored), ``"TYPE value"`` / ``"SELECT value"``."""
    op = op.strip()
    if op == "CLICK":
        return op
    return (op + " " + (value or "").strip()).strip()


def pred_op_string(op: str | None, value: str | None) -> str:
    """The predicted ``"OP VALUE"`` exactly as upstream assembles it."""
    return ((op or "").strip() + " " + (value or "").strip()).strip()


def token_f1(pred: str, gold: str) -> float:
    """Token-set F1 of two strings split on whitespace (upstream ``calculate_f1``)."""
    p, g = set(pred.split()), set(gold.split())
    if not p and not g:
        return 1.0
    if not p or not g:
        return 0.0
    tp = len(p & g)
    if tp == 0:
        return 0.0
    precision, recall = tp / len(p), tp / len(g)
    return 2 * precision * recall / (precision + recall)


def op_f1(pred_op: str | None, pred_value: str | None, gold_op: str, gold_value: str | None) -> float:
    return token_f1(pred_op_string(pred_op, pred_value), gold_op_string(gold_op, gold_value))


def score_step(
    action: Action,
    pred_element: str | int | None,
    pred_op: str | None,
    pred_value: str | None,
    *,
    annotation_id: str,
    split: str = "",
    extra: dict[str, Any] | None = None,
) -> StepResult:
    """Score one prediction against one gold action."""
    pos = action.pos_ids
    if not pos:
        # Upstream: no positive candidate → 0 / 0 / 0 without looking at the prediction.
        el, f1 = False, 0.0
    else:
        el = element_correct(pred_element, pos)
        f1 = op_f1(pred_op, pred_value, action.operation.op, action.operation.value)
    return StepResult(
        annotation_id=annotation_id,
        action_uid=action.action_uid,
        split=split,
        element_correct=el,
        op_f1=f1,
        step_success=el and f1 == 1.0,
        extra=dict(extra or {}),
    )


def missing_step(annotation_id: str, action_uid: str, split: str = "", **extra: Any) -> StepResult:
    """A step with no prediction: a failure on every count."""
    return StepResult(
        annotation_id=annotation_id,
        action_uid=action_uid,
        split=split,
        element_correct=False,
        op_f1=0.0,
        step_success=False,
        extra={"missing": True, **extra},
    )


def _by_task(results: Iterable[StepResult]) -> dict[str, list[StepResult]]:
    groups: dict[str, list[StepResult]] = defaultdict(list)
    for r in results:
        groups[r.annotation_id].append(r)
    return groups


def task_success(results: Iterable[StepResult]) -> dict[str, bool]:
    """annotation_id → every one of its steps succeeded."""
    return {aid: all(r.step_success for r in rs) for aid, rs in _by_task(results).items()}


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def _summary(results: list[StepResult]) -> dict[str, Any]:
    groups = _by_task(results)
    per_task = [
        (
            _mean([float(r.element_correct) for r in rs]),
            _mean([r.op_f1 for r in rs]),
            _mean([float(r.step_success) for r in rs]),
            float(all(r.step_success for r in rs)),
        )
        for rs in groups.values()
    ]
    task_sr = 100 * _mean([t[3] for t in per_task])
    return {
        "element_acc": 100 * _mean([t[0] for t in per_task]),
        "op_f1": 100 * _mean([t[1] for t in per_task]),
        "step_sr": 100 * _mean([t[2] for t in per_task]),
        "task_sr": task_sr,
        "micro_element_acc": 100 * _mean([float(r.element_correct) for r in results]),
        "micro_op_f1": 100 * _mean([r.op_f1 for r in results]),
        "micro_step_sr": 100 * _mean([float(r.step_success) for r in results]),
        "micro_task_sr": task_sr,
        "num_tasks": len(groups),
        "num_steps": len(results),
    }


def aggregate(
    results: Iterable[StepResult],
    *,
    by_split: bool = False,
    tasks: Iterable[Task | PlannedTask] | None = None,
) -> dict[str, Any]:
    """Percentages: macro ``element_acc, op_f1, step_sr, task_sr`` (per task, then over
    tasks), ``micro_*`` over all steps (``micro_task_sr`` equals ``task_sr``), and
    ``num_tasks, num_steps``. Empty input gives zeros.

    ``tasks``: the gold tasks (anything with ``annotation_id``, ``split`` and
    ``action_uids``: a Task, or a run's PlannedTask); steps with no result are added as
    failures and counted in ``missing_steps``, so a task with a step never run is not a
    success. ``by_split``: adds ``"by_split": {split: same keys}``.
    """
    results = list(results)
    missing = 0
    if tasks is not None:
        seen = {(r.annotation_id, r.action_uid) for r in results}
        for t in tasks:
            for uid in t.action_uids:
                if (t.annotation_id, uid) not in seen:
                    results.append(missing_step(t.annotation_id, uid, t.split))
                    missing += 1
    out = _summary(results)
    if tasks is not None:
        out["missing_steps"] = missing
    if by_split:
        splits: dict[str, list[StepResult]] = defaultdict(list)
        for r in results:
            splits[r.split].append(r)
        out["by_split"] = {name: _summary(rs) for name, rs in sorted(splits.items())}
    return out
