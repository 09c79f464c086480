"""What the page starts, each as a ``LiveJob`` on the package's API: a run (``Agent.run``), a
replay (``webagent.api.replay``) and a teach session (``webagent.agent.teach.Teach``, then the
skills learned from it). The forms' values are checked here, before anything starts: a bad
value is one ``UserError`` line and leaves nothing behind."""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from webagent.api import Agent, default_trace_dir, replay
from webagent.errors import UserError
from webagent.llm.endpoint import EndpointOptions
from webagent.ui.live import LiveJob

if TYPE_CHECKING:  # pragma: no cover
    from webagent.llm.client import LLMClient

# An embedder's (or a test's) own model client for the endpoint a form asks for; None: the endpoint's.
ClientFor = Callable[[EndpointOptions], "LLMClient | None"]


@dataclass
class UiSettings:
    """What ``webagent ui`` was started with: where runs go, the model, the secrets (by name:
    the page never shows or takes a value), and the sites a run may go to besides its own."""

    runs_dir: Path = Path("runs")
    endpoint: EndpointOptions = field(default_factory=EndpointOptions)
    secrets: dict[str, str] = field(default_factory=dict)
    headed: bool = False  # runs and replays in a visible window
    teach_headless: bool = False  # teach without a window (`webagent teach --headless`: a script drives the page)
    client_for: ClientFor | None = None

    def client(self, endpoint: EndpointOptions) -> LLMClient | None:
        return self.client_for(endpoint) if self.client_for is not None else None

    def folder(self, kind: str, title: str) -> Path:
        return self.runs_dir / kind / default_trace_dir(title, kind).name


def web_url(url: str) -> str:
    """``url`` when it is an http(s) address; else one line saying so."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"URL {url.strip()!r} is not an http(s) address (write it as https://host/...)")
    return url.strip()


def site_list(text: str) -> list[str]:
    """The allowed sites of a form: HOST or HOST:PORT, separated by commas, spaces or lines."""
    sites = [s for s in re.split(r"[\s,]+", text.strip()) if s]
    for site in sites:
        if not re.fullmatch(r"[A-Za-z0-9.\-]+(:\d{1,5})?", site):
            raise UserError(f"allowed site {site!r}: write HOST or HOST:PORT (e.g. example.com or 127.0.0.1:8000)")
    return sites


def step_limit(text: str) -> int | None:
    if not text.strip():
        return None
    if not text.strip().isdigit() or not 1 <= int(text) <= 500:
        raise UserError(f"step limit {text!r}: a whole number from 1 to 500")
    return int(text)


@dataclass
class RunForm:
    """The new-run form (``demo``: serve the bundled demo shop and start there, as ``webagent run --demo``)."""

    task: str
    url: str = ""
    model: str = ""
    allow_domains: list[str] = field(default_factory=list)
    max_steps: int | None = None
    demo: bool = False
    save_as: str | None = None  # keep the run, when it ends done, as a workflow (``webagent run --save-as``)

    @classmethod
    def read(cls, form: dict[str, str]) -> RunForm:
        demo = form.get("demo") == "on"
        url = form.get("url", "").strip()
        if not demo and not url:
            raise UserError("give the URL where the run starts (or tick the demo shop)")
        task = form.get("task", "").strip()
        if not task and not demo:
            raise UserError("the task is empty")
        save_as = form.get("save_as", "").strip() or None
        if save_as:
            from webagent.replay.store import check_name

            check_name(save_as)
        return cls(
            save_as=save_as,
            task=task,
            url=web_url(url) if url else "",
            model=form.get("model", "").strip(),
            allow_domains=site_list(form.get("allow_domains", "")),
            max_steps=step_limit(form.get("max_steps", "")),
            demo=demo,
        )


def _endpoint(settings: UiSettings, model: str) -> EndpointOptions:
    return replace(settings.endpoint, model=model) if model else settings.endpoint


def run_job(form: RunForm, settings: UiSettings) -> LiveJob:
    endpoint = _endpoint(settings, form.model)
    title = form.task or "the demo shop's order"
    folder = settings.folder("agent", form.task or "demo")
    agent = Agent(
        form.task,
        url=form.url or None,
        demo=form.demo,
        llm=settings.client(endpoint),
        endpoint=endpoint,
        allow_domains=form.allow_domains,
        max_steps=form.max_steps,
        trace_dir=folder,
        headed=settings.headed,
        secrets=settings.secrets,
        save_as=form.save_as,
    )

    async def work(job: LiveJob) -> dict[str, Any]:
        result = await agent.run(progress=job.say)
        end = {k: v for k, v in result.to_json().items() if k in ("status", "answer", "steps", "error")}
        if form.save_as:
            end["saved"] = f"saved as workflow {result.saved_as!r}" if result.saved_as else result.save_error
        if result.demo_order_placed is not None:  # the shop's own record, beside the model's word
            shop = "the shop confirmed the order" if result.demo_order_placed else f"not placed: {agent.demo_orders}"
            end["shop"] = f"demo check: {shop}"
        return end

    return LiveJob("run", title, folder, work)


def replay_job(
    name: str, params: dict[str, str], settings: UiSettings, *, url: str = "", model: str = "", demo: bool = False
) -> LiveJob:
    """``webagent replay NAME --param ...`` (``demo``: serve the bundled demo shop, as ``--demo``)."""
    from webagent.replay import store

    store.check_name(name)
    workflow = store.load(name)  # a UserError when there is none of that name
    unknown = sorted(set(params) - set(workflow.params))
    if unknown:
        raise UserError(
            f"workflow {name!r} has no parameter {unknown[0]!r} (it has: {', '.join(workflow.params) or 'none'})"
        )
    endpoint = _endpoint(settings, model)
    folder = settings.folder("replay", name)
    start = web_url(url) if url.strip() else None

    async def work(job: LiveJob) -> dict[str, Any]:
        result = await replay(
            name,
            params,
            url=start,
            demo=demo,
            llm=settings.client(endpoint),
            endpoint=endpoint,
            trace_dir=folder,
            headed=settings.headed,
            progress=job.say,
        )
        end = {k: v for k, v in result.to_json().items() if k in ("status", "answer", "steps", "error")}
        return end | {"replayed": result.replayed, "repaired": result.repaired}

    return LiveJob("replay", f"replay {name}", folder, work)


def teach_job(
    url: str, task: str, settings: UiSettings, *, allow_domains: list[str], headless: bool = False
) -> LiveJob:
    """A person does ``task`` at ``url`` in a window opened on this machine; the page shows each
    step as recorded, and at the end the skills learned from the recording."""
    url = web_url(url)
    if not task.strip():
        raise UserError("the task is empty: say what you are going to show")
    headless = settings.teach_headless
    if not headless and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise UserError("teach opens a browser window, and this machine has no display (DISPLAY is not set)")
    folder = settings.runs_dir / "teach" / time.strftime("%Y%m%d-%H%M%S")

    async def work(job: LiveJob) -> dict[str, Any]:
        from webagent.agent.teach import Teach, taught_step
        from webagent.skills import store
        from webagent.skills.learn import from_recording

        async with Teach(url, task, folder, headed=not headless, allowed_domains=allow_domains or None) as teach:
            job.say(f"recording at {url}: do the task in the window, then close it or press Finish here")
            assert teach.recorder is not None
            job.handle = teach
            shown = 0
            while not teach.recorder.closed.is_set() and not job.finishing.is_set():
                for n, event in enumerate(teach.recorder.events[shown:], shown + 1):
                    record = taught_step(n, event)
                    job.step(n, record.action_text, "recorded", url=record.url)
                shown = len(teach.recorder.events)
                await asyncio.sleep(0.3)
            written = await teach.finish()
        for n, event in enumerate(teach.recorder.events[shown:], shown + 1):  # what the finish read last
            job.step(n, taught_step(n, event).action_text, "recorded", url=event.url)
        try:
            learned = from_recording(written)
        except UserError as exc:
            return {"status": "done", "skills": [], "note": str(exc)}
        store.add(learned)
        return {"status": "done", "skills": [f"{s.site}  {s.line(s.id)}" for s in learned]}

    return LiveJob("teach", task, folder, work, follow_trace=False)
