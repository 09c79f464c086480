"""Live jobs: one run, replay or teach session at a time, each in a thread with its own event
loop (the page server's loop stays free to stream). A job's ``events`` grow as it goes: a
``line`` per progress message, a ``step`` per record its trace folder gains (the action, its
result, the screenshot), one ``end`` with how it ended. ``stop()`` cancels the job's task: the
run path closes the browser and writes ``run.json`` (status ``interrupted``) and
``report.html`` as after Ctrl-C, so the trace is kept."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from webagent.errors import UserError, first_line
from webagent.trace.record import FILE as STEPS
from webagent.trace.record import read_steps

JobKind = Literal["run", "replay", "teach"]
Work = Callable[["LiveJob"], Awaitable[dict[str, Any]]]


@dataclass
class LiveJob:
    """One job: what it is, where its trace goes, and what has happened so far."""

    kind: JobKind
    title: str
    trace_dir: Path
    work: Work  # the job itself; returns the ``end`` event's fields
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    started: float = field(default_factory=time.time)
    events: list[dict[str, Any]] = field(default_factory=list)  # appended by the job's thread only
    finishing: threading.Event = field(default_factory=threading.Event)  # teach: the person said "finish"
    handle: Any = None  # what the job works on, for a script to drive (teach: the ``Teach``, whose page it is)
    follow_trace: bool = True  # a step event per record the trace folder gains (teach reports its own)
    _loop: asyncio.AbstractEventLoop | None = None
    _task: asyncio.Future | None = None
    _stop_asked: bool = False
    _steps_seen: int = 0

    @property
    def running(self) -> bool:
        return not self.events or self.events[-1]["kind"] != "end"

    @property
    def end(self) -> dict[str, Any] | None:
        return None if self.running else self.events[-1]

    def start(self) -> LiveJob:
        threading.Thread(target=lambda: asyncio.run(self._main()), name=f"webagent-ui-{self.id}", daemon=True).start()
        return self

    def say(self, text: str) -> None:
        """A progress line (``Agent.run``'s ``progress``); the steps written by now follow it."""
        self.events.append({"kind": "line", "text": text})
        self.new_steps()

    def step(self, number: int, action: str, result: str, *, url: str = "", ok: bool = True, shot: str | None = None):
        self.events.append(
            {
                "kind": "step",
                "step": number,
                "action": action,
                "result": result,
                "url": url,
                "ok": ok,
                "screenshot": shot,
            }
        )

    def new_steps(self) -> None:
        """A ``step`` event for each record the trace gained since the last call."""
        path = self.trace_dir / STEPS
        if not self.follow_trace:
            return
        try:
            records = read_steps(path) if path.is_file() else []
        except (OSError, ValueError):  # a line half-written: read again at the next message
            return
        for record in records[self._steps_seen :]:
            shot = getattr(record, "screenshot", None)
            self.step(record.step, record.action_text, record.result_text, url=record.url, ok=record.ok, shot=shot)
        self._steps_seen = max(self._steps_seen, len(records))

    def call(self, coro: Coroutine[Any, Any, Any], timeout: float = 60) -> Any:
        """Await ``coro`` on the job's own loop (where its browser lives) from another thread."""
        assert self._loop is not None, "the job has not started"
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def stop(self) -> bool:
        """Cancel the job (False: it had ended already)."""
        if not self.running or self._loop is None or self._task is None:
            return False
        self._stop_asked = True
        self._loop.call_soon_threadsafe(self._task.cancel)
        return True

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.ensure_future(self.work(self))
        try:
            end = await self._task
        except asyncio.CancelledError:
            end = {"status": "stopped", "why": "stopped from the page; the trace is kept"}
        except UserError as exc:
            end = {"status": "error", "error": str(exc)}
        except Exception as exc:  # noqa: BLE001 - the page says why; the trace (if any) says the rest
            end = {"status": "error", "error": first_line(exc)}
        self.new_steps()
        ran = self.trace_dir / "run.json"
        if ran.is_file():
            try:
                end.setdefault("trace_status", json.loads(ran.read_text(encoding="utf-8")).get("status"))
            except (OSError, json.JSONDecodeError):
                pass
        self.events.append({"kind": "end", "trace_dir": str(self.trace_dir), **end})


class Desk:
    """The jobs of one page server: at most one running; the others kept to look at again."""

    def __init__(self) -> None:
        self.jobs: dict[str, LiveJob] = {}
        self._lock = threading.Lock()

    def running(self) -> LiveJob | None:
        return next((j for j in self.jobs.values() if j.running), None)

    def begin(self, job: LiveJob) -> LiveJob:
        """Start ``job``; a ``UserError`` while another is running (nothing of the new one is made)."""
        with self._lock:
            busy = self.running()
            if busy is not None:
                raise UserError(f"a {busy.kind} is going on ({busy.title!r}): stop it or wait for it to end first")
            self.jobs[job.id] = job
            return job.start()

    def get(self, job_id: str) -> LiveJob:
        job = self.jobs.get(job_id)
        if job is None:
            raise UserError(f"no live job {job_id!r} (the page server was restarted? see the runs list)")
        return job

    def stop_all(self, wait_s: float = 30) -> None:
        """Stop every job and wait (up to ``wait_s`` each) until each closed its browser and wrote its trace."""
        for job in self.jobs.values():
            job.stop()
        for job in self.jobs.values():
            deadline = time.monotonic() + wait_s
            while job.running and time.monotonic() < deadline:
                time.sleep(0.1)
