"""One ``webagent run``: start the browser (and the demo shop), run the episode (the demo
shop's, or any page's: ``webagent.agent.episode.run_episode``, as the evaluators run theirs),
and always leave the trace and report behind — also after an error or Ctrl-C, which closes
the browser. A run that fails before its first step (a browser or guard that cannot start, a
URL that does not open, a model that does not load) still writes ``run.json`` with status
``error`` and why."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from webagent.agent.demo_episode import DemoEpisode
from webagent.agent.episode import PageEpisode, run_episode
from webagent.agent.loop import AgentOptions, AgentResult
from webagent.agent.record import Recorder
from webagent.agent.report import write_report
from webagent.demo_site import DemoShop
from webagent.errors import UserError, first_line
from webagent.llm.client import LLMClient
from webagent.llm.endpoint import EndpointOptions
from webagent.trace.writer import TraceWriter


def check_url(url: str, flag: str = "--url ", example: str = "") -> str:
    """``url`` when it is an http(s) or file URL; else a ``UserError`` naming ``flag`` (and ``example``)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https", "file") or (parts.scheme != "file" and not parts.hostname):
        raise UserError(f"{flag}{url!r} is not an http(s) or file URL{example}")
    return url


@dataclass
class LiveRun:
    task: str
    url: str | None
    trace_dir: Path
    options: AgentOptions
    endpoint: EndpointOptions
    demo: bool = False
    allow_domains: list[str] = field(default_factory=list)
    headed: bool = False
    cdp_url: str | None = None
    record_dir: Path | None = None
    recorder: Recorder | None = None
    demo_done: bool | None = None  # --demo with one of its tasks: did the shop confirm that order?
    demo_orders: str | None = None  # --demo: what the shop recorded
    client: LLMClient | None = None  # to use instead of opening one (the Python API, tests)
    accept_dialogs: bool = (
        False  # confirm/prompt/beforeunload: accepted at once (else the model answers an action's confirm)
    )
    secrets: dict = field(default_factory=dict)  # name -> value, typed from <secret:name> (never shown)

    async def run(self, progress=None) -> AgentResult:
        from webagent.browser import BrowserSession

        shop = DemoShop.start() if self.demo else None
        if shop is not None:
            self.url = self.url or shop.base + "index.html"
        if not self.url:
            raise UserError("give a URL where the run starts, or demo=True")
        url = check_url(self.url)
        trace = TraceWriter(self.trace_dir)
        opened = (lambda page: progress(f"opened {page}; trace in {trace.folder}")) if progress else None
        episode = DemoEpisode(shop, self.task, url, opened) if shop else PageEpisode(self.task, url, opened)
        try:
            if self.record_dir is not None:
                self.recorder = Recorder(
                    self.record_dir, self.task, url, run_id=trace.folder.name, secrets=trace.secrets
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
                    self.client if self.client is not None else self.endpoint,
                    self.options,
                    trace,
                    skills="learned",
                    progress=progress,
                    recorder=self.recorder,
                    secrets=self.secrets,
                )
                result = ran.result  # ended on the page the browser shows now
                result.final_url, result.final_title = browser.page.url, await browser.page.title()
            # the shop's own record, whatever the model said (None: no demo task to judge)
            self.demo_done = ran.verdict.success if ran.verdict.judged else None
            self.demo_orders = ran.verdict.why or None
            return result
        except BaseException as exc:
            if isinstance(exc, Exception) and not (trace.folder / "run.json").is_file():
                trace.write_run(  # it ended before the loop: say so in the trace too
                    {
                        "task": self.task,
                        "status": "error",
                        "error": first_line(exc),
                        "steps": 0,
                        "start_url": url,
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
