"""The MiniWoB++ benchmark: the agent on named tasks and seeds, several episodes in
parallel in one Chromium (one context per worker), reward read through MiniWoB's own
JavaScript API (``webagent.miniwob.env``).

``OUT/config.json`` holds what decides the results (model, steps, look-up, seeds...);
``OUT/episodes.jsonl`` gets one line per finished episode at once, so a killed run
resumes where it stopped; an episode that ended in an error (a page that would not start,
a model endpoint that was down) is run again on resume. Resuming into a folder with
another configuration is refused.

An episode the task never judged (the agent said DONE, got stuck or ran out of steps
while ``WOB_DONE_GLOBAL`` stayed false) is ``judged: false`` and scored raw reward -1,
as MiniWoB's own timeout scores it (``core.endEpisode(-1, false, 'timed out')``), so mean
raw rewards compare with upstream; success stays raw reward > 0.

If a worker fails outside an episode (its browser context would not open...), the other
workers are cancelled and have ended before the shared browser closes; the reports are
written for the episodes that finished, and the error goes on.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from pydantic import BaseModel, ConfigDict

import webagent.results_folder as results_folder
from webagent.agent.options import AgentOptions
from webagent.errors import UserError
from webagent.evaluation import Evaluator, Item, backend, evaluate
from webagent.miniwob.browser import ReusingEnv, context_session, shared_browser
from webagent.miniwob.episode import MiniWoBRow, error_row, model_client, run_episode
from webagent.results_folder import ResultsFolder


class MiniWoBConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    agent: AgentOptions  # the agent's options, whole (the form check as the command line has it)
    seed: int
    structured: bool = True
    reuse_page: bool = True  # start further episodes of a task on its loaded page, as MiniWoB's own harness does


Episode = Item[tuple[str, int]]  # a task and seed


def results(out: Path) -> ResultsFolder[MiniWoBConfig]:
    """A MiniWoB++ results folder (``webagent.results_folder``): rows keyed by task and seed."""
    return ResultsFolder(out, MiniWoBConfig, MiniWoBRow, key=lambda row: (row.task, row.seed), what="a MiniWoB run")


class MiniWoBEval(Evaluator[tuple[str, int], tuple, MiniWoBRow]):
    """The pending episodes (of ``shard`` i/n: every n-th (task, seed) from the i-th). The
    browser of a serial run: attached at ``cdp_url``, else ``browser`` (a shared Playwright
    Browser), else one launched here; a Ray worker launches its own for each episode."""

    config: MiniWoBConfig

    def __init__(
        self,
        tasks: list[str],
        episodes: int,
        config: MiniWoBConfig,
        *,
        shard: tuple[int, int] = (0, 1),
        traces: bool = True,
        cdp_url: str | None = None,
        browser=None,
    ):
        from webagent.miniwob import list_tasks

        if unknown := sorted(set(tasks) - set(list_tasks())):
            raise UserError(f"unknown MiniWoB task(s): {', '.join(unknown)}")
        self.config, self.traces, self.cdp_url, self.browser, self.tasks = config, traces, cdp_url, browser, tasks
        keys = results_folder.shard([(t, config.seed + i) for i in range(episodes) for t in tasks], *shard)
        self.episodes = [Episode((t, s), f"{t} seed {s}", (t, s), folder=f"{t}-{s}") for t, s in keys]

    def __getstate__(self) -> dict:  # a Ray worker gets no browser of the driver's
        return {**self.__dict__, "browser": None}

    results = staticmethod(results)

    def plan(self) -> list[Episode]:
        return self.episodes

    def next_item(self, pending: list[Episode], last: Episode | None) -> Episode:
        """A worker stays on its task while it has seeds (its page is loaded), else takes the
        task with the most seeds waiting."""
        tasks = [task for task, _ in (e.of for e in pending)]
        task = last.of[0] if last and last.of[0] in tasks else max(tasks, key=tasks.count)
        return next(e for e in pending if e.of[0] == task)

    @contextlib.asynccontextmanager
    async def serving(self):
        if self.cdp_url or self.browser is not None:
            yield None if self.cdp_url else self.browser
        else:
            async with shared_browser() as shared:
                self.browser = shared
                try:
                    yield shared
                finally:
                    self.browser = None

    @contextlib.asynccontextmanager
    async def worker(self, client, remote: bool):
        from webagent.browser import BrowserSession

        shared = None if remote or self.cdp_url else self.browser
        session = (
            BrowserSession(cdp_url=None if remote else self.cdp_url) if shared is None else context_session(shared)
        )
        async with session as browser, ReusingEnv(browser, reuse_page=self.config.reuse_page) as env:
            yield browser, env, client

    async def run_item(self, worker: tuple, item: Episode, trace: Path | None) -> MiniWoBRow:
        browser, env, client = worker
        return await run_episode(browser, env, client, *item.of, self.config.agent, trace)

    def error_row(self, item: Episode, trace: Path | None, why: str) -> MiniWoBRow:
        return error_row(*item.of, None if trace is None else str(trace), why)

    def outcome(self, row: MiniWoBRow) -> str:
        """An episode's progress line after its name."""
        return f"{row.status}, raw reward {row.raw_reward:g}, {row.steps} steps, {row.time_s:.1f}s" + (
            f" ({row.error})" if row.error else ""
        )

    open_model = staticmethod(model_client)


async def run_miniwob(
    client,
    episodes: MiniWoBEval,
    out: Path,
    *,
    concurrency: int = 1,
    progress=None,
    cluster=None,
    endpoint=None,
) -> list[MiniWoBRow]:
    """Run the pending episodes into ``out`` (``webagent.evaluation.evaluate``); returns every row
    of the run (old and new). ``cluster``: a connected Ray (``webagent.cluster``) runs each
    episode instead, in a worker with its own browser, on ``endpoint`` (the run's
    ``EndpointOptions``). If the run fails, the reports are written for the episodes that
    finished and the error goes on."""
    try:
        return await evaluate(episodes, out, backend(client, cluster, endpoint, concurrency), say=progress)
    except Exception:
        done = results(out).rows()
        rows = [done[e.key] for e in episodes.plan() if e.key in done]
        if rows:  # the episodes that finished are reported; the caller reports the error
            from webagent.miniwob.report import write_reports

            write_reports(out, rows, list(episodes.tasks), episodes.config.model_dump(mode="json"))
        raise


__all__ = ["MiniWoBConfig", "MiniWoBEval", "run_miniwob", "shared_browser"]
