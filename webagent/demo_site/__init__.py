"""A small static shop for demos and tests, and a local file server.

``site/`` (shipped as package data) is a four-page flow on plain HTML + JS:
``index.html`` (search box) -> ``results.html?q=...`` (matching books, links) ->
``order.html?item=ID`` (form: name, shipping ``<select>``, gift-wrap checkbox,
submit) -> ``confirm.html?...`` (shows exactly what was submitted).

``DEMO_TASK`` is the task ``webagent run --demo`` gives by default, and
``demo_task_done(url, base)`` says whether a page is the shop's confirmation of exactly
that order -- the ground truth ``make demo`` reports next to the model's own DONE.

``serve_directory(path) -> (url, stop)`` serves any folder on 127.0.0.1 from a
background thread (threaded ``http.server``); ``stop()`` shuts it down.
"""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

SITE_DIR = Path(str(files("webagent.demo_site") / "site"))
DEMO_TASK = 'Buy the book "Night Trains" for Ada Lovelace with express shipping.'
_DEMO_ORDER = {"item": "b6", "name": "ada lovelace", "shipping": "express"}  # Night Trains is b6 in books.js


def demo_task_done(url: str, base: str) -> bool:
    """Whether ``url`` is the confirmation page (under ``base``) of DEMO_TASK's order."""
    if not url.startswith(base + "confirm.html"):
        return False
    query = parse_qs(urlsplit(url).query)
    got = {k: " ".join(query.get(k, [""])[0].split()).lower() for k in _DEMO_ORDER}
    return got == _DEMO_ORDER


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - http.server's signature
        pass

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


def serve_directory(path: str | Path, host: str = "127.0.0.1", port: int = 0):
    """Serve ``path`` over HTTP; returns ``(base_url, stop)``. ``port=0`` picks a free port.

    ``base_url`` ends with ``/``; ``stop()`` may be called more than once.
    """
    root = Path(path)
    if not root.is_dir():
        raise FileNotFoundError(f"not a directory: {root}")
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name=f"serve:{root.name}", daemon=True)
    thread.start()
    stopped = threading.Event()

    def stop() -> None:
        if not stopped.is_set():
            stopped.set()
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)

    return f"http://{host}:{server.server_address[1]}/", stop
