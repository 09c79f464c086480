"""One episode, the same for every evaluator (issue 35, item 1) and for ``webagent run``: a
task that sets itself up, gives the agent its goal, says after each step whether the site
shows it done, and gives the site's final word; the agent runs between (``run_episode``).
BrowserGym's ``AbstractBrowserTask`` (setup / validate / cheat) is the model: an app
instance's task, a MiniWoB++ episode, the demo shop and any page (``PageEpisode``) each serve
this protocol, and a task's ``cheat`` (the gold path as a model) is the ceiling's perfect model.

The evaluator keeps what is its own: which tasks, the browser it opens, the row it writes
(``webagent.results_folder``); ``webagent run`` keeps its browser, trace and report
(``webagent.api.Agent``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

from webagent.agent.loop import AgentResult
from webagent.agent.mind2web_export import Mind2WebRecorder
from webagent.agent.report import write_report
from webagent.errors import UserError
from webagent.llm.client import LLMClient
from webagent.llm.endpoint import EndpointOptions, open_client
from webagent.trace.record import StepRecord, read_steps
from webagent.trace.writer import TraceWriter


def check_url(url: str, flag: str = "--url ", example: str = "") -> str:
    """``url`` when it is an http(s) or file URL; else a ``UserError`` naming ``flag`` (and ``example``)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https", "file") or (parts.scheme != "file" and not parts.hostname):
        raise UserError(f"{flag}{url!r} is not an http(s) or file URL{example}")
    return url


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


class PageEpisode:
    """Any page as an episode (``webagent run --url``): it opens ``url`` (a ``UserError`` when
    it does not open; ``opened`` is told the page it landed on) and its goal is ``task``. The
    site has no word of its own: the run ends on DONE, stuck or the step limit, unjudged."""

    def __init__(self, task: str, url: str, opened: Callable[[str], None] | None = None):
        self.task, self.url, self.opened = task, url, opened

    async def setup(self, browser) -> str:
        opened = await browser.open(self.url)
        if not opened.ok:
            raise UserError(f"cannot open {self.url}: {opened.error}")
        if self.opened is not None:
            self.opened(browser.page.url)
        return self.task

    async def done(self, step: int) -> str | None:
        return None

    async def validate(self, answer: str | None) -> Verdict:
        return Verdict(False, judged=False)


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
    client: LLMClient | EndpointOptions,
    options,
    trace: Path | TraceWriter | None,
    *,
    skills: list | Literal["learned"] | None = None,
    progress: Callable[[str], None] | None = None,
    recorder: Mind2WebRecorder | None = None,
    secrets: dict[str, str] | None = None,
) -> Episode:
    """Set ``task`` up in ``browser``, run the agent on its goal until the site shows it done
    (``task.done``), DONE, stuck or the step limit, then ask the site (``task.validate``).

    ``client``: the model, or the endpoint to open it at once the task is set up (a page that
    does not open loads no model). ``trace``: the trace folder, or its writer when the caller
    made it (``webagent run``: its browser's downloads go there); it gets its report.html.
    ``skills`` offered beside the page's controls: these, none (None), or ``"learned"``: the
    start site's (``webagent skills learn``), as ``webagent run`` offers them. ``recorder``
    gets the steps as Mind2Web records; ``secrets`` (name -> value) reach the model only as
    placeholders. Errors of setup and of the run propagate: the evaluator writes them as an
    error row, run again on resume."""
    from webagent.agent.loop import run_agent  # looked up at each call: a test stands in for the agent

    goal = await task.setup(browser)
    writer = trace if isinstance(trace, TraceWriter) else TraceWriter(trace) if trace else None
    model = open_client(client) if isinstance(client, EndpointOptions) else nullcontext(client)
    try:
        async with model as opened:
            result = await run_agent(
                browser,
                opened if opened is None else opened.uncached(),  # None: a test's stand-in agent, no model
                goal,
                options=options,
                trace=writer,
                recorder=recorder,
                after_step=task.done,
                progress=progress,
                secrets=secrets,
                skills=None if skills == "learned" else skills or [],
            )
    finally:
        if writer is not None:
            write_report(writer.folder)
    return Episode(goal, result, await task.validate(result.answer), writer.steps() if writer is not None else [])


@dataclass
class TraceCounts:
    """What a run's trace holds of its cost: the steps it took and its model usage
    (``Usage.to_dict``: calls, prompt and completion tokens, ...)."""

    steps: int = 0
    usage: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt_tokens(self) -> int:
        return int(self.usage.get("prompt_tokens", 0))


def trace_counts(folder: str | Path | None) -> TraceCounts:
    """The counts a trace folder holds, for a run that raised (its row keeps what the run
    cost, not 0 steps and 0 tokens): ``run.json``'s (the loop writes it as the error goes
    on), else the sum of the steps written. Nothing readable there: zero."""
    if folder is None:
        return TraceCounts()
    folder = Path(folder)
    try:
        steps = read_steps(folder / "steps.jsonl") if (folder / "steps.jsonl").is_file() else []
    except (UserError, ValueError):
        steps = []
    try:
        run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        run = {}
    usage = run.get("usage") if isinstance(run, dict) else None
    if not isinstance(usage, dict) or not usage:
        usage = {}
        for step in steps:  # each step's own usage
            for key, value in step.usage.items():
                if isinstance(value, int) and not isinstance(value, bool):
                    usage[key] = usage.get(key, 0) + value
    ran = run.get("steps") if isinstance(run, dict) else None
    return TraceCounts(max(len(steps), ran if isinstance(ran, int) else 0), usage)
