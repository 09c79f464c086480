"""One ``webagent run``: start the browser (and the demo site), open the URL, start the
model, run the loop, and always leave the trace and report behind — also after an error
or Ctrl-C, which closes the browser. A run that fails before its first step (a browser or
guard that cannot start, a URL that does not open, a model that does not load) still
writes ``run.json`` with status ``error`` and why."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from webagent.agent.loop import AgentOptions, AgentResult, run_agent
from webagent.agent.record import Recorder
from webagent.agent.report import write_report
from webagent.errors import first_line
from webagent.errors import UserError
from webagent.llm.endpoint import EndpointOptions, open_client
from webagent.trace.writer import TraceWriter


def uncached(client):
    """The live agent's view of ``client``: nothing it asks or is told goes through the
    persistent reply cache. Its prompts carry the task, which may carry a password, and a
    reply (a TYPE value, a look-up's reason, a gist of a page that shows it) may repeat it
    before the loop knows it is one, so no live reply is kept at rest. A re-run
    calls the model again; within a run, gists are still reused (``GistReuse``)."""
    if client is None:
        return None
    view = client.scoped()
    view.cache = None
    return view


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
    client: object | None = None  # an LLMClient to use instead of opening one (the Python API, tests)
    final_url: str | None = None  # the page the run ended on
    final_title: str | None = None
    accept_dialogs: bool = (
        False  # confirm/prompt/beforeunload: accepted at once (else the model answers an action's confirm)
    )
    secrets: dict = field(default_factory=dict)  # name -> value, typed from <secret:name> (never shown)

    async def run(self, progress=None) -> AgentResult:
        from webagent.browser import BrowserSession

        stop_site, shop = None, None
        if self.demo:
            from webagent.demo_site import DemoShop

            shop = DemoShop.start()
            stop_site = shop.stop
            self.url = self.url or shop.base + "index.html"
        if not self.url:
            raise UserError("give a URL where the run starts, or demo=True")
        url = check_url(self.url)
        trace = TraceWriter(self.trace_dir)
        try:
            async with BrowserSession(
                headed=self.headed,
                cdp_url=self.cdp_url,
                allowed_domains=self.allow_domains,
                accept_dialogs=self.accept_dialogs,
                downloads_dir=trace.folder / "downloads",
            ) as browser:
                opened = await browser.open(url)
                if not opened.ok:
                    raise UserError(f"cannot open {url}: {opened.error}")
                if progress:
                    progress(f"opened {browser.page.url}; trace in {trace.folder}")
                if self.record_dir is not None:
                    self.recorder = Recorder(
                        self.record_dir, self.task, url, run_id=trace.folder.name, secrets=trace.secrets
                    )
                model = nullcontext(self.client) if self.client is not None else open_client(self.endpoint)
                async with model as client:
                    result = await run_agent(
                        browser,
                        uncached(client),
                        self.task,
                        options=self.options,
                        trace=trace,
                        recorder=self.recorder,
                        progress=progress,
                        after_step=_shop_check(shop, self.task),
                        secrets=self.secrets,
                    )
                self.final_url = browser.page.url
                self.final_title = await browser.page.title()
                if shop is not None:  # the shop's own record, whatever the model said
                    self.demo_done = shop.confirms(self.task)
                    self.demo_orders = shop.describe()
                return result
        except Exception as exc:
            if not (trace.folder / "run.json").is_file():  # it ended before the loop: say so in the trace too
                trace.write_run(
                    {
                        "task": self.task,
                        "status": "error",
                        "error": first_line(exc),
                        "steps": 0,
                        "start_url": url,
                        "trace_dir": str(trace.folder),
                    }
                )
            raise
        finally:
            if self.recorder is not None and self.recorder.steps:
                self.recorder.write()  # scrubbed for every secret the run learnt, also after its last record
            write_report(trace.folder)
            if stop_site is not None:
                stop_site()


def _shop_check(shop, task: str):
    """On the demo shop, a run ends when the shop confirms the order its task asks for (the
    site's word, as MiniWoB's reward ends an episode; ``DemoEpisode.done``), not when the
    model says so."""
    if shop is None or shop.confirms(task) is None:
        return None
    from webagent.agent.demo_episode import DemoEpisode

    return DemoEpisode(shop, task).done
