"""The Python API: ``Agent`` (one task in a browser), ``replay`` (a saved run again, without
the model) and ``ask`` (a question about a document), each with a ``*_sync`` twin, and the
``RunResult`` they return. Re-exported by ``webagent``: use ``from webagent import Agent``
(see its docstring for an example). Importing this module loads nothing heavy: the browser,
the model client and the readers are imported on use.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from webagent.agent.episode import Episode
    from webagent.agent.loop import AgentOptions, AgentResult
    from webagent.agent.mind2web_export import Mind2WebRecorder
    from webagent.llm.client import LLMClient
    from webagent.llm.endpoint import EndpointOptions

__all__ = ["Agent", "Progress", "RunResult", "ask", "ask_sync", "default_trace_dir", "replay", "replay_sync"]

Progress = Callable[[str], None]


@dataclass
class RunResult:
    """How a run or a replay ended.

    ``status``: ``done`` | ``max_steps`` | ``stuck`` | ``error`` (``interrupted`` in the
    trace after Ctrl-C); ``answer``: the DONE value; ``final_url``: the page the run
    ended on; ``steps``: steps taken; ``usage``: model calls and tokens; ``trace_dir``:
    the folder with ``steps.jsonl``, screenshots, ``report.html`` and ``run.json``.
    A replay also fills ``replayed`` / ``repaired`` (steps) and ``misses`` (why a step
    could not be replayed as recorded).
    """

    status: str
    answer: str | None = None
    final_url: str = ""
    final_title: str = ""
    steps: int = 0
    usage: dict = field(default_factory=dict)
    error: str | None = None
    failed_steps: int = 0
    wall_s: float = 0.0
    replayed: int = 0
    repaired: int = 0
    misses: list[dict] = field(default_factory=list)
    saved_as: str | None = None  # the workflow name this run was saved under
    save_error: str | None = None  # why --save-as did not save
    demo_order_placed: bool | None = None
    trace_dir: Path | None = None  # last: to_json's keys are the fields in this order

    @property
    def ok(self) -> bool:
        return self.status == "done"

    @property
    def model_calls(self) -> int:
        return int(self.usage.get("calls", 0))

    @classmethod
    def of(cls, done: AgentResult, **more: Any) -> RunResult:
        """What ``done`` (a run's ``AgentResult``, or a replay's, which is one) says, field by
        field of the same name, with ``more``: the fields only the caller knows (the time, the
        saved name, the demo)."""
        kept = {f.name: getattr(done, f.name) for f in fields(cls) if hasattr(done, f.name)}
        return cls(**kept | {"trace_dir": Path(done.trace_dir) if done.trace_dir else None} | more)

    def to_json(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["trace_dir"] = str(self.trace_dir) if self.trace_dir else None
        out["model_calls"] = self.model_calls
        return out


def _endpoint(endpoint, model, base_url, api_key, gguf) -> EndpointOptions:
    from webagent.llm.endpoint import EndpointOptions

    if endpoint is not None:
        return endpoint
    return EndpointOptions(base_url=base_url, model=model, api_key=api_key, gguf=gguf)


def default_trace_dir(task: str, kind: str = "agent") -> Path:
    slug = re.sub(r"[^a-z0-9]+", "-", task.lower()).strip("-")[:40] or "run"
    return Path("runs") / kind / f"{time.strftime('%Y%m%d-%H%M%S')}-{slug}"


class Agent:
    """One task in a browser: ``await Agent(task, url=...).run()`` → ``RunResult``.

    ``allow_domains``: other sites top-level navigation may go to, ``host`` (any port) or
    ``host:port`` (default: the start URL's host and port only). ``accept_dialogs``:
    accept confirm/prompt/beforeunload dialogs at once (by default a confirm or prompt the
    model's action raises is shown to the model to answer, and others are dismissed). ``secrets``: values
    the model may type but never sees (it reads and types ``<secret:NAME>``; a password in
    the task is one too). ``save_as``: keep the run, when it ends ``done``, as a workflow
    for ``replay(name)``. ``params``: typed values to save as named parameters
    (``{"name": "Ada Lovelace"}``); values that appear in the task are found anyway.
    ``demo=True`` serves the bundled demo shop and starts there. ``options`` and
    ``endpoint`` take the full ``AgentOptions`` / ``EndpointOptions`` (what the CLI uses).
    """

    def __init__(
        self,
        task: str,
        *,
        url: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        gguf: str | None = None,
        llm: LLMClient | None = None,
        allow_domains: Sequence[str] = (),
        max_steps: int | None = None,
        trace_dir: str | Path | None = None,
        save_as: str | None = None,
        params: Mapping[str, str] | None = None,
        demo: bool = False,
        headed: bool = False,
        cdp_url: str | None = None,
        record_dir: str | Path | None = None,
        options: AgentOptions | None = None,
        endpoint: EndpointOptions | None = None,
        accept_dialogs: bool = False,
        secrets: Mapping[str, str] | None = None,
    ):
        self.task, self.url, self.demo = task, url, demo
        self.secrets = dict(secrets or {})  # name -> value: the model sees <secret:name> only
        self.accept_dialogs = accept_dialogs  # confirm/prompt/beforeunload: accepted at once
        self.llm = llm
        self.endpoint = _endpoint(endpoint, model, base_url, api_key, gguf)
        self.allow_domains = list(allow_domains)
        self.max_steps = max_steps
        self.options = options
        self.trace_dir = Path(trace_dir) if trace_dir else default_trace_dir(task or "demo")
        self.save_as, self.params = save_as, dict(params or {})
        self.headed, self.cdp_url = headed, cdp_url
        self.record_dir = Path(record_dir) if record_dir else None
        self.recorder: Mind2WebRecorder | None = None  # after run() with record_dir: the Mind2Web records
        self.demo_orders: str | None = None  # after run() with demo=True: what the shop recorded

    def agent_options(self) -> AgentOptions:
        """The options the run uses: ``options`` if given, else ``AgentOptions``' own defaults
        (``webagent.agent.options``, those of ``webagent run``) with ``max_steps`` if given."""
        from webagent.agent.options import AgentOptions

        if self.options is not None:
            return self.options
        return AgentOptions() if self.max_steps is None else AgentOptions(max_steps=self.max_steps)

    async def run(self, progress: Progress | None = None) -> RunResult:
        from webagent.agent.episode import check_url
        from webagent.demo_site import DEMO_TASK
        from webagent.errors import UserError

        task = self.task or (DEMO_TASK if self.demo else "")
        if not task.strip():
            raise UserError("the task is empty")
        if not self.url and not self.demo:
            raise UserError("give url= (where the run starts), or demo=True")
        if self.save_as:
            from webagent.replay.store import check_name

            check_name(self.save_as)
        if self.url:  # a run refused before it starts leaves no trace folder behind
            check_url(self.url)
        options = self.agent_options()
        self.trace_dir.mkdir(parents=True, exist_ok=True)
        if self.params:  # declared parameters, read when the trace becomes a workflow
            (self.trace_dir / "params.json").write_text(json.dumps(self.params, ensure_ascii=False), encoding="utf-8")
        started = time.perf_counter()
        ran = await self._episode(task, options, progress)
        verdict = ran.verdict  # the shop's own record, whatever the model said (unjudged: not the demo's task)
        self.demo_orders = verdict.why or None
        placed = verdict.success if verdict.judged else None
        result = RunResult.of(ran.result, wall_s=time.perf_counter() - started, demo_order_placed=placed)
        if self.save_as:
            self._save(self.save_as, result, options)
        return result

    async def _episode(self, task: str, options: AgentOptions, progress: Progress | None) -> Episode:
        """The run as an episode, as the evaluators run theirs (``run_episode``): the demo
        shop's or the page's, in a browser of its own, leaving the trace and report behind
        also after an error or Ctrl-C (which closes the browser). A run that fails before its
        first step (a browser or guard that cannot start, a URL that does not open, a model
        that does not load) still writes ``run.json`` with status ``error`` and why."""
        from webagent.agent.demo_episode import DemoEpisode
        from webagent.agent.episode import PageEpisode, run_episode
        from webagent.agent.mind2web_export import Mind2WebRecorder
        from webagent.agent.report import write_report
        from webagent.browser import BrowserSession
        from webagent.demo_site import DemoShop
        from webagent.errors import first_line
        from webagent.trace.writer import TraceWriter

        shop = DemoShop.start() if self.demo else None
        trace = TraceWriter(self.trace_dir)
        opened = (lambda page: progress(f"opened {page}; trace in {trace.folder}")) if progress else None
        # (run() made sure there is a URL unless it is the demo)
        episode = DemoEpisode(shop, task, self.url, opened) if shop else PageEpisode(task, self.url or "", opened)
        try:
            if self.record_dir is not None:
                self.recorder = Mind2WebRecorder(
                    self.record_dir, task, episode.url, run_id=trace.folder.name, secrets=trace.secrets
                )
            async with BrowserSession(
                headed=self.headed,
                cdp_url=self.cdp_url,
                allowed_domains=self.allow_domains,
                accept_dialogs=self.accept_dialogs,
                downloads_dir=trace.folder / "downloads",
            ) as browser:
                ran = await run_episode(
                    episode,
                    browser,
                    self.llm if self.llm is not None else self.endpoint,
                    options,
                    trace,
                    skills="learned",
                    progress=progress,
                    recorder=self.recorder,
                    secrets=self.secrets,
                )
                # the run ended on the page the browser shows now
                ran.result.final_url, ran.result.final_title = browser.page.url, await browser.page.title()
            return ran
        except BaseException as exc:
            if isinstance(exc, Exception) and not (trace.folder / "run.json").is_file():
                trace.write_run(  # it ended before the loop: say so in the trace too
                    {
                        "task": task,
                        "status": "error",
                        "error": first_line(exc),
                        "steps": 0,
                        "start_url": episode.url,
                        "trace_dir": str(trace.folder),
                    }
                )
            write_report(trace.folder)  # (an episode that started wrote one, without this error)
            raise
        finally:
            if self.recorder is not None and self.recorder.steps:
                self.recorder.write()  # scrubbed for every secret the run learnt, also after its last record
            if shop is not None:
                shop.stop()

    def run_sync(self, progress: Progress | None = None) -> RunResult:
        import asyncio

        return asyncio.run(self.run(progress))

    def _save(self, name: str, result: RunResult, options) -> None:
        from webagent.errors import UserError
        from webagent.replay import store
        from webagent.trace import workflow

        if result.status != "done" or options.dry_run:
            result.save_error = f"not saved as {name!r}: the run ended {result.status!r}" + (
                " (dry run)" if options.dry_run else ""
            )
            return
        try:
            store.save(name, workflow.from_trace(self.trace_dir, self.params))
            result.saved_as = name
        except UserError as exc:
            result.save_error = f"not saved as {name!r}: {exc}"


async def replay(
    trace_or_name: str | Path,
    params: Mapping[str, str] | None = None,
    *,
    url: str | None = None,
    demo: bool = False,
    no_model: bool = False,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    gguf: str | None = None,
    llm: LLMClient | None = None,
    allow_domains: Sequence[str] | None = None,
    trace_dir: str | Path | None = None,
    headed: bool = False,
    cdp_url: str | None = None,
    options: AgentOptions | None = None,
    endpoint: EndpointOptions | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """Replay a finished run (a trace folder, or a workflow saved with ``save_as``) in a
    fresh browser without the model; a step whose page or element changed goes to the
    model alone (``no_model=True``: the replay fails there instead, naming the step).
    ``params`` replace the recorded values of the workflow's parameters; ``url`` starts
    elsewhere (another host or port of the same site); ``demo=True`` serves the bundled
    demo shop and starts there (for runs made with ``demo=True``)."""
    from webagent.replay.runner import Replay
    from webagent.replay.store import resolve

    workflow, name = resolve(trace_or_name)
    folder = Path(trace_dir) if trace_dir else default_trace_dir(name or Path(trace_or_name).name, "replay")
    shop = None
    if demo:
        from webagent.demo_site import DemoShop

        shop = DemoShop.start()
        url = url or shop.base + "index.html"
    try:
        runner = Replay(
            workflow,
            trace_dir=folder,
            params=dict(params or {}),
            url=url,
            endpoint=_endpoint(endpoint, model, base_url, api_key, gguf),
            client=llm,
            no_model=no_model,
            allow_domains=list(allow_domains) if allow_domains else None,
            headed=headed,
            cdp_url=cdp_url,
            options=options,
            store_name=name,
            progress=progress,
        )
        done = await runner.run()
    finally:
        if shop is not None:
            shop.stop()
    # The shop's own record of the order its task asks for, as for a run (None: not the demo).
    placed = shop.confirms(runner.task) if shop is not None else None
    return RunResult.of(done, saved_as=name if done.saved_to else None, demo_order_placed=placed)


def replay_sync(trace_or_name: str | Path, params: Mapping[str, str] | None = None, **kwargs: Any) -> RunResult:
    import asyncio

    return asyncio.run(replay(trace_or_name, params, **kwargs))


async def ask(
    path: str | Path,
    question: str,
    *,
    method: str = "readagent-p",
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    gguf: str | None = None,
    llm: LLMClient | None = None,
    endpoint: EndpointOptions | None = None,
    **options: Any,
):
    """Answer ``question`` about the document at ``path`` (.txt, .md, .html) with a
    reading method: ``readagent-p`` / ``readagent-s`` (gist memory, parallel or
    sequential look-up) or any of ``webagent qa-eval``'s (``full``, ``bm25@k``,
    ``memwalker``, ...). Returns the answer record (``.answer``, pages read, usage).
    ``options`` are ``webagent ask``'s, by their ``QAOptions`` names and with their defaults
    (``webagent.docqa.options``): ``max_pages``, ``context_tokens``, ``single_pass``,
    ``gist_model``, ``min_words``, ``max_words``, ``pagination``, ``conditional_gist``."""
    from contextlib import nullcontext

    from webagent.docqa.ask import ask as ask_gist
    from webagent.docqa.ask_method import ask_method
    from webagent.docqa.options import QAOptions
    from webagent.llm.endpoint import open_client, open_gist_client

    opts = QAOptions(**options)
    readagent = opts.for_readagent(method)
    endpoint = _endpoint(endpoint, model, base_url, api_key, gguf)
    opened = nullcontext(llm) if llm is not None else open_client(endpoint)
    async with opened as client, open_gist_client(endpoint, opts.gist_model, client) as memory_client:
        if readagent is not None:
            return await ask_gist(client, path, question, readagent, memory_client=memory_client)
        return await ask_method(client, path, question, method, options=opts, memory_client=memory_client)


def ask_sync(path: str | Path, question: str, **kwargs: Any):
    import asyncio

    return asyncio.run(ask(path, question, **kwargs))
