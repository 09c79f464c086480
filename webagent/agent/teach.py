"""Teach by showing: a person does a task in a Chromium window the agent opens, and what they
did becomes a run's trace (``steps.jsonl`` + ``run.json``, the records ``webagent run``
writes: the action, the element's fingerprint, the page) that ``webagent replay`` runs and
skill learning reads.

    async with Teach(url, task, trace_dir) as teach:   # opens the window (headed by default)
        ...                                            # the person works; teach.page is theirs
        await teach.wait_closed()                      # or the caller decides it is over
    folder = teach.finish()                            # writes the trace; UserError if nothing was done

The browser side (``webagent.browser.recorder``) holds every click until the page was read, so
each step carries the element as the page showed it before the step. A password field's value
is never read: its step is written as ``REDACTED`` and becomes a ``password`` parameter of the
workflow (``webagent replay NAME --secret password=...``).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from webagent.agent import elements
from webagent.browser import REDACTED, BrowserSession
from webagent.browser.recorder import RecordedEvent, Recorder
from webagent.errors import UserError
from webagent.trace.pages import facts_of, write_pages
from webagent.trace.record import StepRecord, step_record
from webagent.trace.writer import TraceWriter
from webagent.web.agent_view import build_view
from webagent.web.live_action import LiveAction

OPS = {"click": "CLICK", "type": "TYPE", "select": "SELECT", "goto": "GOTO"}


def _describe(event: RecordedEvent) -> str:
    obs = event.obs
    if obs is None or event.element_id is None:
        return ""
    control = build_view(obs.cleaned_html).controls.get(event.element_id)
    return control.describe() if control else elements.describe(obs.cleaned_html, event.element_id)


def taught_step(n: int, event: RecordedEvent) -> StepRecord:
    """The step record of one event, built as every step's is (``trace.record.step_record``)."""
    value = REDACTED if event.password else event.value
    action = LiveAction.model_construct(  # the person's own action, as done (not a model's reply to check)
        operation=OPS[event.kind], element_id=event.element_id or "", value=value, press_enter=event.press_enter
    )
    obs = event.obs
    return step_record(
        n,
        action,
        url=event.url,
        title=obs.title if obs is not None else "",
        obs=obs if event.element_id is not None else None,
        description=_describe(event),
        result_text="done by the person",
        ok=True,
        changed=True,
        taught=True,
        calls=[],
        usage={},
    )


class Teach:
    """One demonstration (see the module docstring)."""

    def __init__(
        self,
        url: str,
        task: str,
        trace_dir: str | Path,
        *,
        headed: bool = True,
        allowed_domains: list[str] | None = None,
    ):
        self.url, self.task = url, task
        self.trace_dir = Path(trace_dir)
        self.session = BrowserSession(headed=headed, allowed_domains=allowed_domains)
        self.recorder: Recorder | None = None
        self.started = 0.0
        self.setup = False  # something was done before the recording started (a log-in)

    async def __aenter__(self) -> Teach:
        await self.session.start()
        self.recorder = Recorder(self.session)
        await self.recorder.install()
        self.recorder.expect(self.url)
        opened = await self.session.open(self.url)
        if not opened.ok:
            await self.session.close()
            raise UserError(f"cannot open {self.url}: {opened.error}")
        self.started = time.time()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.session.close()

    @property
    def page(self):
        """The page the person works on (a test drives it with Playwright, as a person would)."""
        return self.session.page

    async def settle(self) -> None:
        """For a script driving the page: until the last click was done and its page loaded."""
        assert self.recorder is not None
        await self.recorder.settle()

    async def wait_closed(self, stop: asyncio.Event | None = None) -> None:
        """Until the person closes the window, or ``stop`` is set (they confirmed in the terminal)."""
        assert self.recorder is not None
        waits = [asyncio.ensure_future(self.recorder.closed.wait())]
        if stop is not None:
            waits.append(asyncio.ensure_future(stop.wait()))
        _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()

    async def restart(self) -> None:
        """The recording starts here: what was done so far (a log-in before the person pressed
        record) is dropped. A password typed before stays a secret the trace is scrubbed of."""
        assert self.recorder is not None
        await self.stop()  # fields still being edited read, a held click done
        await self.recorder.settle()
        self.recorder.events.clear()
        self.started = time.time()
        self.setup = True

    async def stop(self) -> list[RecordedEvent]:
        """The recording ends: fields still being edited are read, and the events are final."""
        assert self.recorder is not None
        await self.recorder.flush()
        await asyncio.sleep(0.3)  # a held click still on its way
        return list(self.recorder.events)

    async def finish(self) -> Path:
        """Write the trace of what was recorded; a recording with no steps is a ``UserError``."""
        events = await self.stop()
        if not events:
            raise UserError("the recording has no steps: nothing was clicked, typed or chosen; nothing written")
        trace = TraceWriter(self.trace_dir)
        trace.secrets.update(self.recorder.secrets if self.recorder else ())  # a password in a URL is scrubbed
        for n, event in enumerate(events, 1):
            trace.write_step(taught_step(n, event))
        page = self.session.page
        final = await self.session.observe() if page is not None and not page.is_closed() else None
        pages = [facts_of(n, e.obs.url, e.obs.title, e.obs.raw_html) for n, e in enumerate(events, 1) if e.obs]
        end = [facts_of(len(events) + 1, final.url, final.title, final.raw_html)] if final is not None else []
        write_pages(trace.folder, pages + end, trace.secrets)  # what skill learning reads of each page
        final_url = page.url if page is not None and not page.is_closed() else events[-1].url
        title = ""
        if page is not None and not page.is_closed():
            try:
                title = await page.title()
            except Exception:  # noqa: BLE001 - the page is closing: its title is not needed
                title = ""
        trace.write_run(
            {
                "task": self.task,
                "status": "done",
                "answer": None,
                "steps": len(events),
                "taught": True,
                "setup": self.setup,
                "started": self.started,
                "final_url": final_url,
                "final_title": title,
                "allow_domains": list(self.session.allowed_domains or []),
                "recorder_errors": self.recorder.errors if self.recorder else [],
            }
        )
        return trace.folder
