"""One episode, the same for every evaluator (issue 35, item 1): a task that sets itself up,
gives the agent its goal, says after each step whether the site shows it done, and gives the
site's final word; the agent runs between (``run_episode``). BrowserGym's
``AbstractBrowserTask`` (setup / validate / cheat) is the model: an app instance's task, a
MiniWoB++ episode and the demo shop each serve this protocol, and a task's ``cheat`` (the gold
path as a model) is the ceiling's perfect model.

The evaluator keeps what is its own: which tasks, the browser it opens, the row it writes
(``webagent.harness``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from webagent.agent.loop import AgentResult
from webagent.trace.record import StepRecord


@dataclass
class Verdict:
    """The site's word on an episode: ``success``; ``why`` in words; ``judged`` False when the
    site gave none (a MiniWoB++ episode the agent left before its task judged it)."""

    success: bool
    why: str = ""
    judged: bool = True
    details: dict[str, Any] | None = None  # the evaluator's own figures (MiniWoB's rewards)


class EpisodeTask(Protocol):
    async def setup(self, browser) -> str:
        """A fresh state and the start page open in ``browser``; returns the goal the agent is given."""
        ...

    async def done(self, step: int) -> str | None:
        """After step ``step``'s action: why the site shows the task done (the run ends), else None."""
        ...

    async def validate(self, answer: str | None) -> Verdict:
        """The site's final word, given the agent's answer (for a task that asks a question)."""
        ...


@dataclass
class Episode:
    """What ``run_episode`` gives back: the goal, the run, the site's verdict, the steps."""

    goal: str
    result: AgentResult
    verdict: Verdict
    steps: list[StepRecord]


async def run_episode(
    task: EpisodeTask,
    browser,
    client,
    options,
    trace_dir: Path | None,
    *,
    skills: list | None = None,
    progress: Callable[[str], None] | None = None,
) -> Episode:
    """Set ``task`` up in ``browser``, run the agent on its goal until the site shows it done
    (``task.done``), DONE, stuck or the step limit, then ask the site (``task.validate``). The
    trace (when ``trace_dir``) gets its report.html. Errors of setup and of the run propagate:
    the evaluator writes them as an error row, run again on resume."""
    from webagent.agent.live import uncached
    from webagent.agent.loop import run_agent
    from webagent.agent.report import write_report
    from webagent.trace.writer import TraceWriter

    goal = await task.setup(browser)
    trace = TraceWriter(trace_dir) if trace_dir else None
    try:
        result = await run_agent(
            browser,
            uncached(client),
            goal,
            options=options,
            trace=trace,
            after_step=task.done,
            progress=progress,
            skills=skills or [],
        )
    finally:
        if trace is not None:
            write_report(trace.folder)
    verdict = await task.validate(result.answer)
    steps = trace.steps() if trace is not None else []
    return Episode(goal, result, verdict, steps)
