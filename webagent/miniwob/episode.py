"""One MiniWoB++ episode (a task and a seed) and the row ``miniwob`` writes for it: the task
reset with its seed, the agent run by ``webagent.agent.episode.run_episode`` until the task
judges it, its reward read through MiniWoB's own API. Used by the runner and by a Ray worker
(``webagent.cluster.OnRay``) alike; ``model_client`` opens the run's model (the scripted one too)."""

from __future__ import annotations

import time
from pathlib import Path

from webagent.agent.episode import Verdict, trace_counts
from webagent.agent.episode import run_episode as episode_run
from webagent.agent.loop import AgentOptions
from webagent.errors import RuntimeFailure, first_line
from webagent.results_folder import Row

UNJUDGED_RAW_REWARD = -1.0  # MiniWoB's own score for an episode that ends unjudged (its timeout)


def model_client(endpoint):
    """The run's model: ``fake:scripted`` (the scripted model of ``miniwob.scripted``), else the endpoint's."""
    from contextlib import nullcontext

    from webagent.llm.endpoint import open_client

    if endpoint.model == "fake:scripted":
        from webagent.llm.testing import FunctionBackend, fake_client
        from webagent.miniwob.scripted import scripted_reply

        scripted = FunctionBackend(scripted_reply, name="fake:scripted", record=False)
        return nullcontext(fake_client(scripted, concurrency=endpoint.concurrency))
    return open_client(endpoint)


class MiniWoBEpisode:
    """A MiniWoB++ task and seed as an episode (``webagent.agent.episode.EpisodeTask``): the task
    reset with its seed (its utterance is the goal); after each step, whether the task judged
    the episode over; at the end, its reward (an episode left unjudged scores -1, as MiniWoB's
    own timeout does)."""

    def __init__(self, env, task: str, seed: int):
        self.env, self.task, self.seed = env, task, seed

    async def setup(self, browser) -> str:
        try:
            episode = await self.env.reset(self.task, seed=self.seed)
        except Exception as exc:  # noqa: BLE001 - said as the episode that did not start
            raise EpisodeNotStarted(first_line(exc)) from None
        return episode.utterance

    async def done(self, step: int) -> str | None:
        try:
            status = await self.env.status()
        except Exception:  # noqa: BLE001 - mid-navigation: judged again after the next step
            return None
        return f"episode over (raw reward {status.raw_reward:g})" if status.done else None

    async def validate(self, answer: str | None) -> Verdict:
        status = await self.env.status()
        figures = {"raw_reward": status.raw_reward, "reward": status.reward, "reason": status.reason}
        return Verdict(status.success, str(status.reason or ""), judged=status.done, details=figures)


class EpisodeNotStarted(RuntimeFailure):
    pass


class MiniWoBRow(Row):
    """An episode's row in ``episodes.jsonl``."""

    task: str
    seed: int
    status: str
    success: bool
    raw_reward: float
    reward: float
    reason: str | None
    judged: bool = True  # False: the task never judged the episode (scored -1)
    steps: int
    failed_steps: int
    utterance: str | None
    error: str | None
    usage: dict
    trace_dir: str | None
    time_s: float = 0.0
    retried: str | None = None  # run again after its worker was lost (``webagent.cluster``)


def error_row(task: str, seed: int, trace_dir: str | None, error: str | None = None) -> MiniWoBRow:
    """An episode's row before it ran: an error, run again on resume (until it is filled)."""
    return MiniWoBRow(
        task=task,
        seed=seed,
        status="error",
        success=False,
        raw_reward=0.0,
        reward=0.0,
        reason=None,
        judged=False,
        steps=0,
        failed_steps=0,
        utterance=None,
        error=error,
        usage={},
        trace_dir=trace_dir,
    )


async def run_episode(
    browser, env, client, task: str, seed: int, options: AgentOptions, trace_dir: Path | None
) -> MiniWoBRow:
    """One seed of ``task`` (``MiniWoBEpisode`` through ``webagent.agent.episode.run_episode``); the
    row for ``episodes.jsonl``."""
    t0 = time.perf_counter()
    row = error_row(task, seed, str(trace_dir) if trace_dir else None)
    try:
        ran = await episode_run(MiniWoBEpisode(env, task, seed), browser, client, options, trace_dir)
    except EpisodeNotStarted as exc:  # an error row, run again on resume
        row.error, row.time_s = f"episode did not start: {exc}", round(time.perf_counter() - t0, 3)
        return row
    except Exception as exc:  # noqa: BLE001 - one broken episode must not end the benchmark
        spent = trace_counts(trace_dir)  # what the run did before it raised, as its trace holds it
        row.error, row.time_s = f"{type(exc).__name__}: {first_line(exc)}", round(time.perf_counter() - t0, 3)
        row.steps, row.usage = spent.steps, spent.usage
        return row
    result, verdict = ran.result, ran.verdict
    row.utterance = ran.goal
    row = row.model_copy(update={**(verdict.details or {}), "success": verdict.success, "judged": verdict.judged})
    if not verdict.judged and result.status != "error":
        why = {
            "done": "the agent said DONE",
            "max_steps": f"out of steps ({result.steps})",
            "stuck": "the agent was stuck",
        }.get(result.status, f"the run ended ({result.status})")
        row.raw_reward = row.reward = UNJUDGED_RAW_REWARD
        row.success, row.reason = False, f"unjudged: {why} before the task judged the episode"
    return row.model_copy(
        update=dict(
            status=result.status,
            steps=result.steps,
            failed_steps=result.failed_steps,
            error=result.error,
            usage=result.usage,
            time_s=round(time.perf_counter() - t0, 3),
        )
    )
