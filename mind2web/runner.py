"""`mind2web eval`: run methods over Mind2Web steps with bounded concurrency.

Every finished step is appended to OUT/steps.jsonl at once, so a killed run resumes
without redoing finished steps; a step that failed because the endpoint was down is run
again on resume (its new row replaces the old). OUT/config.json pins what the numbers
depend on (a changed configuration refuses to resume into the folder) and
OUT/manifest.json lists the planned tasks. `--shard i/n` takes every n-th task so shards
can run on several machines sharing one model server, and `merge` joins their outputs.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Hashable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict
from rich.console import Console

import webagent.results_folder as results_folder
from mind2web.data import Step, Task
from mind2web.methods import StepInput, StepPrediction, Variant, predict
from mind2web.metrics import StepResult, missing_step, score_step
from mind2web.rows import (
    STEPS_FILE,
    PlannedTask,
    RowKey,
    StepRow,
    read_manifest,
    read_rows,
    write_manifest,
)
from webagent.errors import UserError
from webagent.evaluation import Evaluator, Item, backend, evaluate
from webagent.html import Snippet, split_snippets
from webagent.llm.client import EndpointUnavailable, LLMClient
from webagent.llm.usage import Counter
from webagent.memory import compression_rate
from webagent.prompts import prompt_hash
from webagent.results_folder import ResultsFolder, cut_torn_tail

# Every prompt file the Mind2Web methods render: their hashes are part of the run's
# configuration, so editing one refuses to resume into results made with the old text.
PROMPTS_USED = ("web_gist", "web_lookup", "web_action")
# This many method-steps in a row failing on the endpoint (each after every retry) means it
# is down, not flaky: stop starting steps rather than record the rest of the run as failed.
ENDPOINT_DOWN_AFTER = 20


class EvalConfig(BaseModel):
    """What the numbers of a run depend on (the methods are per row and may differ)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    data: str
    split: str | None
    depth: int | str
    budget_words: int
    context_tokens: int
    model: str
    endpoint: str  # the backend's identity (model at which server), not just its name
    structured: bool
    prompts: dict[str, str]  # prompt name → hash of its file
    previous_k: int
    act_on: str
    # --typed-actions: each operation only on the ids of the kind it fits (webagent.web.typed_action)
    typed_actions: bool = False

    @classmethod
    def for_client(cls, client: LLMClient, **fields) -> EvalConfig:
        return cls(
            model=client.model_name,
            endpoint=str(getattr(client.backend, "identity", client.model_name)),
            structured=client.structured,
            prompts={name: prompt_hash(name) for name in PROMPTS_USED},
            **fields,
        )


def results(out: Path) -> ResultsFolder[EvalConfig]:
    """A Mind2Web results folder (``webagent.results_folder``) for its configuration; its rows are
    typed (``mind2web.rows``), one per (task, step, method), with the planned tasks' manifest."""
    return ResultsFolder(
        out,
        EvalConfig,
        StepRow,
        key=lambda row: row.key,
        rows_file=STEPS_FILE,
        what="a Mind2Web eval run",
        finished=lambda row: not row.endpoint_failed,  # a step whose endpoint failed runs again
    )


def prepare_out_dir(out: Path, config: EvalConfig, planned: list[Task]) -> dict[RowKey, StepRow]:
    """Check the folder holds this configuration (or nothing), record the planned tasks,
    and return the rows already there (the last per key)."""
    results(out).pin(config)
    manifest = read_manifest(out).union([PlannedTask.model_validate(t, from_attributes=True) for t in planned])
    write_manifest(out, manifest)
    cut_torn_tail(out / STEPS_FILE)
    return {row.key: row for row in read_rows(out / STEPS_FILE)}


def _base(step: Step) -> dict:
    task = step.task
    return {
        "split": step.split,
        "annotation_id": step.annotation_id,
        "action_uid": step.action_uid,
        "step_index": step.index,
        "task_steps": len(task.actions),
        "website": task.website,
    }


# A row's cost: the step's model use (``llm.usage.Counter``).
_COST_FIELDS = (
    "calls cached_calls prompt_tokens completion_tokens needed_prompt_tokens needed_completion_tokens".split()
)


def step_row(
    variant: Variant,
    base: dict,
    pred: StepPrediction,
    scored: StepResult,
    snippets: list[Snippet],
    usage,
    wall_s: float,
) -> StepRow:
    """One method's row for one step: its prediction, its score, the snippets it read from and what it cost."""
    full_words = sum(s.words for s in snippets)  # StepInput.full_words
    return StepRow(
        variant=variant.name,
        **base,
        **asdict(pred),  # every field of the prediction is one of the row's
        element_correct=scored.element_correct,
        op_f1=scored.op_f1,
        step_success=scored.step_success,
        full_words=full_words,
        compression_rate=round(compression_rate(full_words, pred.context_words), 2),
        num_snippets=len(snippets),
        **{name: getattr(usage or Counter(), name) for name in _COST_FIELDS},  # no usage (None): 0
        wall_s=wall_s,
    )


def failed_row(
    variant: Variant, base: dict, problem: str, *, endpoint_failed: bool = False, usage=None, wall_s: float = 0.0
) -> StepRow:
    """A step that predicted nothing: scored as wrong (as a missing step), its failure kept visible."""
    nothing = StepPrediction(None, None, None, 0, failures=1, problem=problem, endpoint_failed=endpoint_failed)
    return step_row(variant, base, nothing, missing_step(base["annotation_id"], base["action_uid"]), [], usage, wall_s)


@functools.cache  # one subclass per client class
def _watching(cls: type) -> type:
    """`cls` whose complete() notes each EndpointUnavailable in `self.endpoint_errors`."""

    class Watched(cls):
        async def complete(self, *args, **kwargs):
            try:
                return await super().complete(*args, **kwargs)
            except EndpointUnavailable as exc:
                self.endpoint_errors.append(str(exc))
                raise

    return Watched


def _watch_endpoint(client: LLMClient) -> list[str]:
    """Note every EndpointUnavailable a step's calls raise, however the method handles it:
    a step whose result a down endpoint degraded (a lost gist, a lost action) is re-run.
    Views the method scopes from this one share the list."""
    watched: Any = client  # its class is swapped for a subclass that keeps endpoint_errors
    watched.__class__ = _watching(watched.__class__)  # this step's scoped view only
    watched.endpoint_errors = []
    return watched.endpoint_errors


async def run_step(client: LLMClient, step: Step, variants: list[Variant], config: EvalConfig, emit) -> None:
    action = step.action
    base = _base(step)
    try:
        # CPU work (up to ~1 s for a 10 MB page): off the event loop, which keeps serving calls.
        snippets = await asyncio.to_thread(
            split_snippets, action.cleaned_html, depth=config.depth, budget_words=config.budget_words
        )
    except UserError as exc:
        for v in variants:
            emit(failed_row(v, base, f"page could not be split: {exc}"))
        return
    scores = {
        c.backend_node_id: c.score for c in (*action.pos_candidates, *action.neg_candidates) if c.score is not None
    }
    step_input = StepInput(
        step.task.confirmed_task, step.last_previous_actions(config.previous_k), snippets, action.cleaned_html, scores
    )

    async def one(variant: Variant) -> None:
        scoped = client.scoped()
        endpoint_errors = _watch_endpoint(scoped)
        started = time.perf_counter()
        try:
            pred = await predict(
                scoped,
                variant,
                step_input,
                context_tokens=config.context_tokens,
                act_on=config.act_on,
                typed_actions=config.typed_actions,
            )
        except EndpointUnavailable as exc:
            emit(
                failed_row(
                    variant,
                    base,
                    f"endpoint unavailable: {exc}",
                    endpoint_failed=True,
                    usage=scoped.usage.total,
                    wall_s=round(time.perf_counter() - started, 3),
                )
            )
            return
        scored = score_step(
            action, pred.element_id, pred.op, pred.value, annotation_id=step.annotation_id, split=step.split
        )
        if endpoint_errors:
            pred.endpoint_failed = True
            pred.problem = pred.problem or f"endpoint unavailable: {endpoint_errors[0]}"
        wall_s = round(time.perf_counter() - started, 3)
        emit(step_row(variant, base, pred, scored, snippets, scoped.usage.total, wall_s))

    await asyncio.gather(*(one(v) for v in variants))


def choose_tasks(tasks: list[Task], *, limit: int | None, shard: tuple[int, int]) -> list[Task]:
    return results_folder.shard(tasks[:limit] if limit else tasks, *shard)


TaskSteps = Item[list[tuple[Step, list[Variant]]]]  # a task's method-steps (a step, the methods left on it)


class TaskStepsEval(Evaluator[list[tuple[Step, list[Variant]]], LLMClient, StepRow]):
    """A run's tasks: each task's pending method-steps one item, its steps one after the other,
    a row per method-step as each step finishes. A serial run stops starting steps once
    ``down_after`` method-steps in a row failed on the endpoint (it is down, not flaky), and
    counts what it left in ``not_started``."""

    config: EvalConfig
    noun = "tasks"
    traces = False

    def __init__(self, config: EvalConfig, tasks: list[Task], variants: list[Variant], down_after: int):
        self.config, self.down_after = config, down_after
        self.tasks = [
            TaskSteps(task.annotation_id, f"task {task.annotation_id}", [(step, variants) for step in task.steps()])
            for task in tasks
        ]
        self.in_a_row = self.not_started = 0  # endpoint failures in a row; method-steps not started

    results = staticmethod(results)

    def plan(self) -> list[TaskSteps]:
        return self.tasks

    def pending(self, items: list[TaskSteps], done: set[Hashable]) -> list[TaskSteps]:
        def left(step: Step, variants: list[Variant]) -> list[Variant]:
            return [v for v in variants if (v.name, step.annotation_id, step.action_uid) not in done]

        todo = [(item, [(step, left(step, vs)) for step, vs in item.of]) for item in items]
        return [TaskSteps(item.key, item.label, [(s, vs) for s, vs in steps if vs]) for item, steps in todo]

    async def run_rows(self, worker: LLMClient, item: TaskSteps, trace: Path | None, emit) -> None:
        for step, variants in item.of:
            if self.in_a_row >= self.down_after:
                self.not_started += len(variants)
                continue
            await run_step(worker, step, variants, self.config, emit)

    def error_rows(self, item: TaskSteps, trace: Path | None, why: str) -> list[StepRow]:
        """Scored as wrong, run again on resume (as a down endpoint's)."""
        return [failed_row(v, _base(step), why, endpoint_failed=True) for step, left in item.of for v in left]

    def item_outcome(self, rows: list[StepRow]) -> str:
        failed = sum(row.endpoint_failed for row in rows)
        return f"{len(rows)} method-steps" + (f" ({failed} failed on the endpoint)" if failed else "")

    def failed(self, row: StepRow) -> bool:
        return row.endpoint_failed


async def run_eval(
    client: LLMClient,
    tasks: list[Task],
    variants: list[Variant],
    out: Path,
    config: EvalConfig,
    *,
    shard: tuple[int, int] = (0, 1),
    limit: int | None = None,
    step_concurrency: int = 4,
    say: Callable[[str], None] | None = None,
    endpoint_down_after: int = ENDPOINT_DOWN_AFTER,
    cluster=None,
    endpoint=None,
) -> dict:
    """Run what is left of the plan into `out`. Returns counts: planned, resumed, ran,
    retried_endpoint_failures, endpoint_failures, and not_started (method-steps left when
    the endpoint seemed down: `endpoint_down_after` endpoint failures in a row). `cluster`:
    a connected Ray (``webagent.cluster``) runs each task's pending method-steps instead, in a
    worker, on `endpoint` (the run's ``EndpointOptions``). `say` takes the progress lines (the
    command gives ``cli_common.status``); without it the run is quiet, no bar either."""
    chosen = choose_tasks(tasks, limit=limit, shard=shard)
    before = prepare_out_dir(out, config, chosen)
    evaluator = TaskStepsEval(config, chosen, variants, endpoint_down_after)
    # Kept: every finished step, failures of the model's reply included; re-run: the
    # steps whose endpoint failed.
    pending = evaluator.pending(evaluator.plan(), {key for key, row in before.items() if not row.endpoint_failed})
    left = [(step, v) for item in pending for step, vs in item.of for v in vs]
    total = sum(len(vs) for item in evaluator.plan() for _, vs in item.of)
    skipped = total - len(left)
    retried = sum((v.name, step.annotation_id, step.action_uid) in before for step, v in left)  # endpoint failed
    endpoint_failures = [0]
    with results_folder.progress(  # the bar on stderr (stdout keeps the summary); a Ray run says a line per task
        "mind2web eval", total, skipped, "method-steps", None if cluster else say, Console(stderr=True)
    ) as advance:

        def on_row(row: StepRow) -> bool:
            endpoint_failures[0] += row.endpoint_failed
            evaluator.in_a_row = evaluator.in_a_row + 1 if row.endpoint_failed else 0
            advance()
            return True

        on = backend(client, cluster, endpoint, concurrency=step_concurrency)
        await evaluate(evaluator, out, on, say=say if cluster is not None else None, on_row=on_row)
    return {
        "steps_file": str(out / STEPS_FILE),
        "planned": total,
        "resumed": skipped,
        "ran": total - skipped - evaluator.not_started,
        "retried_endpoint_failures": retried,
        "endpoint_failures": endpoint_failures[0],
        "not_started": evaluator.not_started,
    }
