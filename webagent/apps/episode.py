"""One app task as an episode: ``AppEpisode`` (the instance reset, the app's check after each
step and at the end) run by ``webagent.agent.episode.run_episode``, and the row ``apps eval``
writes for it (``run_task``), with how the run ended as a kind the report counts. Used by the
serial runner and by a Ray worker (``webagent.cluster.OnRay``) alike."""

from __future__ import annotations

import shutil
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from webagent.agent.episode import Verdict, run_episode, trace_counts
from webagent.apps.ceiling import GoldModel
from webagent.apps.instance import AppError, AppInstance
from webagent.apps.spec import Task
from webagent.errors import UserError, first_line
from webagent.problems import CALL_FAILED, REFUSED
from webagent.results_folder import Row
from webagent.trace.record import StepRecord

Ending = Literal["site_confirmed", "said_done", "stuck", "step_limit", "model_error", "error", "interrupted"]
# An ending in the report's words ("said_done": the model said DONE and the app disagrees)
ENDINGS: dict[str, str] = {
    "site_confirmed": "site confirmed",
    "said_done": "wrong action (said DONE; the app disagrees)",
    "stuck": "stuck",
    "step_limit": "step limit",
    "model_error": "model error",
    "error": "error",
    "interrupted": "interrupted",
}


def ending(status: str, success: bool, steps: list[StepRecord]) -> Ending:
    """How a task's run ended, as a kind the report counts: the app's check first, then the
    run's status (``AgentResult.status``)."""
    if success:
        return "site_confirmed"
    if status == "error":
        return "model_error" if any(s.problem_kind in CALL_FAILED for s in steps) else "error"
    return {"stuck": "stuck", "max_steps": "step_limit", "done": "said_done"}.get(status, "interrupted")  # type: ignore[return-value]


def failure_cause(status: str, success: bool, steps: list[StepRecord]) -> str | None:
    """How a failed task ended, in the report's words (``ENDINGS``; "after refusals" when the
    agent refused a reply on the way)."""
    if success:
        return None
    kind = ending(status, success, steps)
    refused = kind in ("stuck", "step_limit") and any(_refused(s) for s in steps)
    return ENDINGS[kind] + (" (after refusals)" if refused else "")


def _refused(step: StepRecord) -> bool:
    """Whether the agent refused the step's answer: one it could read that named something the
    page does not allow (``webagent.problems.REFUSED``; counted by kind, never by wording)."""
    return step.problem_kind in REFUSED


class AppEpisode:
    """An app task as an episode (``webagent.agent.episode.EpisodeTask``): the instance reset and the
    task's start page opened; after each step the app's check (unless the task asks a question,
    judged on the answer at the end); the app's check on the final state, with the answer."""

    def __init__(self, instance: AppInstance, task: Task, stop_at_goal: bool = True, gold: GoldModel | None = None):
        self.instance, self.task, self.stop_at_goal, self.gold = instance, task, stop_at_goal, gold
        self.goal_step: int | None = None  # the step after which the app's check first passed
        self.reset_s = 0.0

    async def setup(self, browser) -> str:
        self.reset_s = self.instance.reset()
        opened = await browser.open(self.instance.url(self.task.start))
        if not opened.ok:
            raise AppError(f"cannot open {self.instance.url(self.task.start)}: {opened.error}")
        if self.gold is not None:
            self.gold.attach(browser)  # the perfect model finds each element in the live page
        return self.task.task

    async def done(self, step: int) -> str | None:
        if self.task.answer is not None:  # judged on the answer, at DONE
            return None
        ok, why = self.instance.check(self.task.id)
        if ok and self.goal_step is None:
            self.goal_step = step
        return f"the app's database shows the task done ({why})" if ok and self.stop_at_goal else None

    async def validate(self, answer: str | None) -> Verdict:
        ok, why = self.instance.check(self.task.id, (answer or "") if self.task.answer is not None else None)
        return Verdict(ok, why)


class AppsRow(Row):
    """A task's row in ``episodes.jsonl``; the fields after ``trace_dir`` are there once the task
    ran (``ended`` with an error too; ``losses`` to ``loss``: the ceiling's)."""

    app: str
    task: str
    kinds: list[str]
    gold_steps: int
    success: bool
    status: str
    steps: int
    cause: str | None
    check: str
    answer: str | None
    error: str | None
    usage: dict
    trace_dir: str | None
    ended: Ending | None = None
    refusals: int = 0
    problems: dict[str, int] = {}  # unusable replies, by kind
    goal_step: int | None = None
    went_on: int | None = None  # the actions the run took after the step that reached its goal (a DONE is no action)
    prompt_tokens: int = 0
    reset_s: float = 0
    losses: list[dict] = []
    naming: list[dict] = []
    found_by: dict[str, int] = {}
    loss: str | None = None  # how the agent kept the gold step (ceiling.LossKind)
    time_s: float = 0  # 0 (not 0.0) in a report of a row without it, as before rows were typed
    retried: str | None = None  # run again after its worker was lost (``webagent.cluster``)


def error_row(app: str, task: Task, trace_dir: str | None, error: str | None = None) -> AppsRow:
    """A task's row before it ran: an error, run again on resume (until it is filled)."""
    row = AppsRow(
        app=app,
        task=task.id,
        kinds=task.kinds,
        gold_steps=len(task.gold),
        success=False,
        status="error",
        steps=0,
        cause=None,
        check="",
        answer=None,
        error=error,
        usage={},
        trace_dir=trace_dir,
    )
    if error is not None:
        row.cause, row.ended = "error", "error"
    return row


async def run_task(
    instance: AppInstance,
    task: Task,
    client,
    options,
    trace_dir: Path | None,
    gold: GoldModel | None = None,
    stop_at_goal: bool = True,
    say: Callable[[str], None] | None = None,
    skills: list | None = None,
) -> AppsRow:
    """One task on a reset instance (``AppEpisode`` through ``webagent.agent.episode.run_episode``);
    the row for ``episodes.jsonl``. ``say`` gets a line per step; ``skills`` are offered to the
    model (None: none)."""
    from webagent.browser import BrowserSession

    row = error_row(instance.app.name, task, str(trace_dir) if trace_dir else None)
    t0 = time.perf_counter()
    episode = AppEpisode(instance, task, stop_at_goal, gold)
    if trace_dir is not None:
        shutil.rmtree(trace_dir, ignore_errors=True)  # a task run again (resume after an error) starts clean
    try:
        async with BrowserSession(allowed_domains=["127.0.0.1"]) as browser:
            ran = await run_episode(
                episode,
                browser,
                client,
                options,
                trace_dir,
                skills=skills,
                progress=(lambda line: say(f"{task.id} {line}")) if say else None,
            )
        result, ok, steps, goal_step = ran.result, ran.verdict.success, ran.steps, episode.goal_step
        row = row.model_copy(
            update=dict(
                success=ok,
                status=result.status,
                steps=result.steps,
                check=ran.verdict.why,
                answer=result.answer,
                error=result.error,
                usage=result.usage,
                ended=ending(result.status, ok, steps),
                cause=failure_cause(result.status, ok, steps),
                refusals=sum(_refused(s) for s in steps),
                problems=dict(Counter(s.problem_kind for s in steps if s.problem_kind)),
                goal_step=goal_step,
                went_on=None if goal_step is None else sum(s.step > goal_step and s.operation != "DONE" for s in steps),
                prompt_tokens=result.usage.get("prompt_tokens", 0),
            )
        )
    except Exception as exc:  # noqa: BLE001 - one broken task must not end the run; it is re-run on resume
        why = str(exc) if isinstance(exc, (AppError, UserError)) else f"{type(exc).__name__}: {first_line(exc)}"
        # a raised episode's steps, model usage and prompt tokens, as its trace holds them
        spent = trace_counts(trace_dir)
        row = row.model_copy(update=dict(error=why, cause="error", ended="error"))
        row.steps, row.usage, row.prompt_tokens = spent.steps, spent.usage, spent.prompt_tokens
    row.reset_s = round(episode.reset_s, 4)
    if gold is not None:
        row.losses, row.naming, row.found_by = gold.losses, gold.naming, gold.found
        if not row.success and row.cause != "error":
            first = gold.losses[0] if gold.losses else None
            if first:
                row.cause = f"gold step {first['gold_step']} ({first['step']}): {first['message']}"
            row.loss = first["kind"] if first else None
    row.time_s = round(time.perf_counter() - t0, 2)
    return row
