"""The tools of ``webagent mcp``, each a call of the package's API (``webagent.api``: Agent,
replay, ask; ``view_page``; the skills, workflows and runs on disk) after the server's rules
(``policy.Policy``). What each returns is a typed reply (``extra="forbid"``); the server masks
every secret in it before it leaves (``server``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from webagent.api import default_trace_dir
from webagent.browser.guard import PLACEHOLDER
from webagent.mcp_server.policy import Policy, Refused
from webagent.runs_index import RunEntry, find_run, recent_runs
from webagent.trace.record import FILE as STEPS_FILE
from webagent.trace.record import StepLine, read_steps

if TYPE_CHECKING:  # pragma: no cover
    from webagent.llm.client import LLMClient
    from webagent.llm.endpoint import EndpointOptions

Say = Callable[[str], Awaitable[None]]  # a line for the caller (masked and sent by the server)
StepSay = Callable[[int, int, str], Awaitable[None]]  # (step, of at most, line): one progress notification


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunReply(_Reply):
    """How a run or a replay ended."""

    status: str  # done | max_steps | stuck | error
    answer: str | None
    steps: str  # a line per step: number, page, action -> result
    step_count: int
    failed_steps: int
    error: str | None
    final_url: str
    trace_dir: str | None
    report: str | None  # report.html of the run, for a person to open
    model_calls: int
    replayed: int | None = None  # a replay: steps done as recorded
    repaired: int | None = None  # a replay: steps the model redid


class WorkflowRow(_Reply):
    name: str
    task: str = ""
    steps: int = 0
    params: list[str] = []
    start_url: str = ""
    error: str | None = None  # why it cannot be read


class Workflows(_Reply):
    workflows: list[WorkflowRow]


class SkillRow(_Reply):
    site: str
    id: str
    name: str
    description: str
    params: list[str]
    steps: int


class Skills(_Reply):
    skills: list[SkillRow]


class SkillParamReply(_Reply):
    name: str
    kind: str
    source: str
    example: str | None


class SkillReply(_Reply):
    site: str
    id: str
    name: str
    description: str
    starts_on: str  # the start page's pattern
    reachable_from_any_page: bool
    params: list[SkillParamReply]
    steps: list[str]
    learned_from: list[str]


class AskReply(_Reply):
    answer: str
    method: str
    pages_read: list[int]
    num_pages: int


class RunRow(_Reply):
    run: str  # its id, for show_run
    kind: str
    task: str
    status: str
    steps: int
    answer: str | None
    updated: float


def _row_fields(e: RunEntry) -> dict:
    """A run's fields as a listing shows them (``RunRow``; ``RunDetail`` adds to them)."""
    return {
        "run": e.id,
        "kind": e.kind,
        "task": e.task,
        "status": e.status,
        "steps": e.steps,
        "answer": e.answer,
        "updated": e.updated,
    }


class Runs(_Reply):
    runs_dir: str
    runs: list[RunRow]


class RunDetail(RunRow):
    error: str | None
    steps_text: str
    trace_dir: str
    report: str | None


class ModelClient:
    """The server's one model client, opened on the first call that needs it (the embedded
    model starts then, once) and closed with the server."""

    def __init__(self, endpoint: EndpointOptions):
        self.endpoint = endpoint
        self._stack = AsyncExitStack()
        self._client: LLMClient | None = None
        self._lock = asyncio.Lock()

    async def get(self) -> LLMClient:
        async with self._lock:
            if self._client is None:
                from webagent.llm.endpoint import open_client

                self._client = await self._stack.enter_async_context(open_client(self.endpoint))
            return self._client

    @property
    def opened(self) -> LLMClient | None:
        """The client when it is open, else None (a replay then opens the model only for a repair)."""
        return self._client

    async def aclose(self) -> None:
        await self._stack.aclose()
        self._client = None


class Relay:
    """The run's progress lines (``webagent.api.Progress``, called in the event loop) sent in
    order: a step's line as a progress notification (``step_say``), any other as a message."""

    def __init__(self, step_say: StepSay, say: Say, total: int):
        self.step_say, self.say, self.total = step_say, say, total
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()

    def __call__(self, line: str) -> None:
        self.queue.put_nowait(line)

    async def pump(self) -> None:
        while (line := await self.queue.get()) is not None:
            if isinstance(line, StepLine):  # (``agent.loop.run_agent`` reports each step so)
                await self.step_say(line.record.step, self.total, line)
            else:
                await self.say(line)

    async def around(self, work: Awaitable):
        """``work``'s result, with every line it reported sent before this returns."""
        pump = asyncio.create_task(self.pump())
        try:
            return await work
        finally:
            self.queue.put_nowait(None)
            await pump


def step_lines(folder: str | Path) -> list[str]:
    """A line per step of the run in ``folder``: its number, page, action and result."""
    path = Path(folder) / STEPS_FILE
    if not path.is_file():
        return []
    return [f"{r.step}. {r.url}  {r.action_text or '(no action)'}  -> {r.result_text}" for r in read_steps(path)]


def _trace_dir(runs_dir: Path, task: str, kind: str) -> Path:
    """A new folder under ``runs_dir`` named as the CLI names its runs (time, then the task)."""
    folder = runs_dir.joinpath(*default_trace_dir(task, kind).parts[1:])  # (its first part is "runs")
    n = 2
    while folder.exists():  # two calls in the same second with the same task
        folder = folder.with_name(f"{folder.name.rsplit('~', 1)[0]}~{n}")
        n += 1
    return folder


def _reply(result, replay: bool = False) -> RunReply:
    trace = result.trace_dir
    report = trace / "report.html" if trace is not None and (trace / "report.html").is_file() else None
    return RunReply(
        status=result.status,
        answer=result.answer,
        steps="\n".join(step_lines(trace)) if trace is not None else "",
        step_count=result.steps,
        failed_steps=result.failed_steps,
        error=result.error,
        final_url=result.final_url,
        trace_dir=str(trace) if trace is not None else None,
        report=str(report) if report else None,
        model_calls=result.model_calls,
        replayed=result.replayed if replay else None,
        repaired=result.repaired if replay else None,
    )


class Tools:
    """The tools, with the server's rules, model and runs folder."""

    def __init__(self, policy: Policy, model: ModelClient, runs_dir: Path):
        self.policy, self.model, self.runs_dir = policy, model, runs_dir

    async def run_task(
        self,
        url: str,
        task: str,
        allowed_sites: list[str] | None,
        secrets: list[str] | None,
        max_steps: int | None,
        step_say: StepSay,
        say: Say,
    ) -> RunReply:
        from webagent.api import Agent

        if not task.strip():
            raise Refused("task is empty")
        self.policy.check_text("task", task)
        self.policy.check_text("url", url)
        sites = self.policy.sites_for(url, allowed_sites)
        chosen = self.policy.chosen_secrets(secrets)
        steps = self.policy.steps(max_steps)
        agent = Agent(
            task,
            url=url,
            llm=await self.model.get(),
            allow_domains=sites,
            max_steps=steps,
            trace_dir=_trace_dir(self.runs_dir, task, "agent"),
            secrets=chosen,
        )
        relay = Relay(step_say, say, steps)
        return _reply(await relay.around(agent.run(progress=relay)))

    async def replay_workflow(
        self,
        name: str,
        params: dict[str, str] | None,
        url: str | None,
        allowed_sites: list[str] | None,
        secrets: list[str] | None,
        step_say: StepSay,
        say: Say,
    ) -> RunReply:
        from webagent.agent.options import AgentOptions
        from webagent.agent.secrets import reveal
        from webagent.api import replay
        from webagent.replay import store

        workflow = store.load(store.check_name(name))  # a saved name only, never a folder of the disk
        self.policy.check_text("url", url)
        sites = self.policy.sites_for(url or workflow.start_url, allowed_sites)
        chosen = self.policy.chosen_secrets(secrets)
        values: dict[str, str] = {}
        for key, value in (params or {}).items():  # a secret parameter as <secret:NAME>, its value the server's
            self.policy.check_text(f"params.{key}", value)
            values[key] = reveal(value, chosen)
            if PLACEHOLDER.search(values[key]):
                raise Refused(f"params.{key}: name the secret it uses in secrets (the server holds its value)")
        options = AgentOptions(max_steps=self.policy.max_steps)  # the model's repairs, at most
        relay = Relay(step_say, say, len(workflow.steps))
        result = await relay.around(
            replay(
                name,
                values,
                url=url,
                llm=self.model.opened,  # not opened for a replay that needs no repair
                endpoint=self.model.endpoint,
                allow_domains=sites,
                trace_dir=_trace_dir(self.runs_dir, name, "replay"),
                options=options,
                progress=relay,
            )
        )
        return _reply(result, replay=True)

    def list_workflows(self) -> Workflows:
        from webagent.replay import store

        rows = [
            WorkflowRow(**{k: row[k] for k in WorkflowRow.model_fields if k in row and row[k] is not None})
            for row in store.listing()
        ]
        return Workflows(workflows=rows)

    async def view_page(self, url: str, allowed_sites: list[str] | None, wait_for_text: str | None) -> str:
        from webagent.agent.view_page import view_page

        sites = self.policy.sites_for(url, allowed_sites)
        return (await view_page(url, sites, wait_for_text)).report()

    def list_skills(self, site: str | None) -> Skills:
        from webagent.skills import store

        found = store.load(site) if site else store.every_skill()
        return Skills(
            skills=[
                SkillRow(
                    site=s.site,
                    id=s.id,
                    name=s.name,
                    description=s.description,
                    params=[p.name for p in s.params],
                    steps=len(s.steps),
                )
                for s in found
            ]
        )

    def show_skill(self, site: str, skill_id: str) -> SkillReply:
        from webagent.skills import store

        skill = next((s for s in store.load(site) if s.id == skill_id), None)
        if skill is None:
            raise Refused(f"no skill {skill_id!r} for {site} (list_skills names them)")
        return SkillReply(
            site=skill.site,
            id=skill.id,
            name=skill.name,
            description=skill.description,
            starts_on=skill.start.pattern,
            reachable_from_any_page=skill.start.reachable,
            params=[
                SkillParamReply(name=p.name, kind=p.kind, source=p.source, example=p.example) for p in skill.params
            ],
            steps=[step.text + (f"  {{{step.param}}}" if step.param else "") for step in skill.steps],
            learned_from=list(skill.sources),
        )

    async def ask_document(self, path: str, question: str, method: str, max_pages: int) -> AskReply:
        from webagent.api import ask

        if not question.strip():
            raise Refused("question is empty")
        document = self.policy.document(path)
        found = await ask(document, question, method=method, max_pages=max_pages, llm=await self.model.get())
        pages = getattr(found, "pages_looked_up", None)
        return AskReply(
            answer=found.answer,
            method=method,
            pages_read=list(pages if pages is not None else getattr(found, "pages_read", [])),
            num_pages=found.num_pages,
        )

    def list_runs(self, limit: int) -> Runs:
        return Runs(
            runs_dir=str(self.runs_dir),
            runs=[RunRow(**_row_fields(e)) for e in recent_runs(self.runs_dir, limit)],
        )

    def show_run(self, run: str) -> RunDetail:
        e = find_run(self.runs_dir, run)
        return RunDetail(
            **_row_fields(e),
            error=e.error,
            steps_text="\n".join(step_lines(e.folder)),
            trace_dir=str(e.folder),
            report=str(e.report) if e.report else None,
        )
