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

import asyncio
from pathlib import Path

from pydantic import BaseModel, ConfigDict

import webagent.harness as harness
from webagent.agent.loop import AgentOptions
from webagent.errors import UserError
from webagent.harness import ResultsFolder
from webagent.miniwob.browser import ReusingEnv, context_session, shared_browser
from webagent.miniwob.episode import error_row, run_episode


class MiniWoBConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    max_steps: int
    lookup: str
    max_lookup: int
    context_tokens: int
    seed: int
    structured: bool = True
    reuse_page: bool = True  # start further episodes of a task on its loaded page, as MiniWoB's own harness does
    form_check: bool = False  # a short model call before a form is sent (the CLI's default is on)


def results(out: Path) -> ResultsFolder[MiniWoBConfig]:
    """A MiniWoB++ results folder (``webagent.harness``): rows keyed by task and seed."""
    return ResultsFolder(out, MiniWoBConfig, key=lambda row: (row["task"], row["seed"]), what="a MiniWoB run")


def read_rows(out: Path) -> dict[tuple[str, int], dict]:
    """The last row of each (task, seed) in ``episodes.jsonl``."""
    return results(out).rows()  # type: ignore[return-value]


def merge(shards: list[Path], out: Path) -> int:
    """Join the rows of shard folders (same configuration) into ``out``; returns the row count."""
    return harness.merge(shards, out, results(out))


async def run_miniwob(
    client,
    *,
    tasks: list[str],
    episodes: int,
    concurrency: int,
    out: Path,
    config: MiniWoBConfig,
    options: AgentOptions,
    cdp_url: str | None = None,
    browser=None,
    traces: bool = True,
    progress=None,
    shard: tuple[int, int] = (0, 1),
    cluster=None,
    endpoint=None,
) -> list[dict]:
    """Run the pending episodes (of ``shard`` i/n: every n-th (task, seed) from the i-th);
    returns every row of the run (old and new). The browser: attached at ``cdp_url``, else
    ``browser`` (a shared Playwright Browser), else one launched here. ``cluster``: a
    connected Ray (``webagent.cluster``) runs each episode instead, in a worker with its own
    browser, on ``endpoint`` (the run's ``EndpointOptions``)."""
    from webagent.browser import BrowserSession
    from webagent.miniwob import list_tasks

    unknown = sorted(set(tasks) - set(list_tasks()))
    if unknown:
        raise UserError(f"unknown MiniWoB task(s): {', '.join(unknown)}")
    folder = results(out)
    folder.pin(config)
    done = read_rows(out)
    finished = folder.done(done)
    keys = harness.shard([(t, config.seed + i) for i in range(episodes) for t in tasks], *shard)
    pending = [k for k in keys if k not in finished]
    if progress and len(pending) < len(keys):
        progress(f"resuming: {len(keys) - len(pending)} of {len(keys)} episodes already done")
    if cluster is not None:
        # Each pending episode a Ray task (the worker side is ``miniwob.remote``), its row
        # appended as it comes back.
        from webagent.cluster import Job, run_jobs, worker_endpoint
        from webagent.miniwob import remote

        model = worker_endpoint(endpoint, client)
        jobs = [
            Job(
                key=(task, seed),
                label=f"{task} seed {seed}",
                run=remote.episode,
                args=(task, seed, options, model),
                trace=str(out / "traces" / f"{task}-{seed}") if traces else None,
            )
            for task, seed in pending
        ]

        def keep(job, row: dict) -> None:
            folder.append(row)
            done[job.key] = row

        run_jobs(
            cluster,
            jobs,
            on_row=keep,
            lost_row=lambda job, why: error_row(job.args[0], job.args[1], job.trace, why),  # task, seed
            describe=_outcome,
            failed=lambda row: not row["success"],
            say=progress or (lambda line: None),
            done_before=len(keys) - len(pending),
        )
        return [done[k] for k in keys if k in done]
    # Seeds waiting per task: a worker stays on its task while it has seeds (its page is loaded).
    waiting: dict[str, list[int]] = {}
    for task, seed in pending:
        waiting.setdefault(task, []).append(seed)

    def next_episode(current: str | None) -> tuple[str, int] | None:
        task = (
            current if current and waiting.get(current) else max(waiting, key=lambda t: len(waiting[t]), default=None)
        )
        if task is None or not waiting[task]:
            return None
        return task, waiting[task].pop(0)

    lock = asyncio.Lock()

    async def worker(shared) -> None:
        episode = next_episode(None)
        if episode is None:
            return
        session = BrowserSession(cdp_url=cdp_url) if shared is None else context_session(shared)
        async with session as browser, ReusingEnv(browser, reuse_page=config.reuse_page) as env:
            while episode is not None:
                task, seed = episode
                trace_dir = out / "traces" / f"{task}-{seed}" if traces else None
                row = await run_episode(browser, env, client, task, seed, options, trace_dir)
                async with lock:
                    folder.append(row)
                    done[(task, seed)] = row
                if progress:
                    progress(f"{task} seed {seed}: {_outcome(row)}")
                episode = next_episode(task)

    async def workers(shared) -> None:
        """Every worker to its end; the first failure cancels the others (awaited) and goes on."""
        tasks = [asyncio.ensure_future(worker(shared)) for _ in range(concurrency)]
        try:
            finished, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        finally:  # a failure, or this run cancelled (Ctrl-C): nobody is left running
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        for task in tasks:
            if task in finished and not task.cancelled() and (exc := task.exception()) is not None:
                raise exc

    try:
        if pending:
            if cdp_url or browser is not None:
                await workers(None if cdp_url else browser)
            else:
                async with shared_browser() as shared:
                    await workers(shared)
    except Exception:
        rows = [done[k] for k in keys if k in done]
        if rows:  # the episodes that finished are reported; the caller reports the error
            from webagent.miniwob.report import write_reports

            write_reports(out, rows, list(tasks), config.model_dump())
        raise
    return [done[k] for k in keys if k in done]


def _outcome(row: dict) -> str:
    """An episode's progress line after its name."""
    return f"{row['status']}, raw reward {row['raw_reward']:g}, {row['steps']} steps, {row.get('time_s', 0):.1f}s" + (
        f" ({row['error']})" if row["error"] else ""
    )


__all__ = ["MiniWoBConfig", "merge", "run_miniwob", "shared_browser", "read_rows"]
