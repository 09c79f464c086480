"""The page server: the Starlette app behind the ``Guard``, served by uvicorn on 127.0.0.1 and
a free port (``UiServer``); ``webagent ui`` runs it until Ctrl-C, a test starts it in a thread."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from webagent.errors import UserError
from webagent.ui.guard import Guard, new_token
from webagent.ui.jobs import UiSettings
from webagent.ui.live import Desk
from webagent.ui.routes import Pages


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


async def _one_line(request: Request, exc: Exception) -> Response:
    """A ``UserError`` no page caught (a live job that is not there): one line, not a traceback."""
    return PlainTextResponse(f"{exc}\n", status_code=404)


def create_app(settings: UiSettings, token: str, hosts: set[str], desk: Desk | None = None) -> Guard:
    pages = Pages(settings, desk or Desk())

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        # The server stops (Ctrl-C, SIGTERM, a test): a job still running is stopped, its trace kept.
        await asyncio.to_thread(pages.desk.stop_all)

    app = Starlette(routes=pages.routes(), exception_handlers={UserError: _one_line}, lifespan=lifespan)
    return Guard(app, token, hosts)


@dataclass
class UiServer:
    """``webagent ui``'s server: ``url`` (with the token) once started."""

    settings: UiSettings
    host: str = "127.0.0.1"
    port: int = 0  # 0: a free one
    token: str = field(default_factory=new_token)
    desk: Desk = field(default_factory=Desk)

    def __post_init__(self) -> None:
        self.settings.runs_dir = self.settings.runs_dir.resolve()  # run ids are paths under it
        self.port = self.port or free_port(self.host)
        hosts = {f"{self.host}:{self.port}"} | ({f"localhost:{self.port}"} if self.host == "127.0.0.1" else set())
        app = create_app(self.settings, self.token, hosts, self.desk)
        config = uvicorn.Config(app, host=self.host, port=self.port, log_level="warning", timeout_graceful_shutdown=2)
        self.server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/?token={self.token}"

    def run(self) -> None:
        """Serve until Ctrl-C or SIGTERM; a job still running is stopped (its trace kept)."""
        self.server.run()

    def start(self) -> UiServer:
        """Serve in a thread (for a test, or a program that embeds the page)."""
        self._thread = threading.Thread(target=self.server.run, name="webagent-ui", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        if not self.server.started:
            raise RuntimeError(f"the page server did not start on {self.base}")
        return self

    def stop(self) -> None:
        self.server.should_exit = True  # the app's shutdown stops the jobs
        if self._thread is not None:
            self._thread.join(timeout=60)
