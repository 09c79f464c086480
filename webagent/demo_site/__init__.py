"""A small static shop for demos and tests, and a local file server.

``site/`` (shipped as package data) is a four-page flow on plain HTML + JS:
``index.html`` (search box) -> ``results.html?q=...`` (matching books, links) ->
``order.html?item=ID`` (form: name, shipping ``<select>``, gift-wrap checkbox,
submit) -> ``confirm.html?...`` (shows exactly what was submitted).

``DEMO_TASK`` is the task ``webagent run --demo`` gives by default; ``DEMO_TASKS`` maps it
and five others (other books, names and shipping options) to the order each asks for.

The shop's own word is what counts (``DemoShop``): the server records every order the
order form sent (a request for ``confirm.html`` whose Referer is ``order.html``: a URL typed
or a GOTO straight to the confirmation has none) and ``DemoShop.confirms(task)`` says
whether the order that task asks for was placed in this run -- the check ``make demo``
reports next to the model's own DONE. ``demo_task_done(url, base)`` judges a
confirmation page's URL alone (for replays and tests that read the final page).

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
# Each task and the order it asks for (book ids from books.js; names compared case-insensitively;
# no task asks for gift wrap, so an order with it is not the one asked for).
DEMO_TASKS: dict[str, dict[str, str]] = {
    task: {"item": item, "name": name, "shipping": shipping, "gift": ""}
    for task, item, name, shipping in [
        (DEMO_TASK, "b6", "ada lovelace", "express"),
        ('Order "A Short History of Tea" for Grace Hopper with standard shipping.', "b4", "grace hopper", "standard"),
        ('Buy "Python for Gardeners" for Alan Turing and pick it up in the store.', "b3", "alan turing", "pickup"),
        (
            'Order the book "Gardens of the North" for Mary Shelley with express shipping.',
            "b2",
            "mary shelley",
            "express",
        ),
        (
            'Buy "Tea Gardens of Assam" for Rosalind Franklin with standard shipping.',
            "b5",
            "rosalind franklin",
            "standard",
        ),
        (
            'Order "The Pragmatic Gardener" for Katherine Johnson, to pick up in the store.',
            "b1",
            "katherine johnson",
            "pickup",
        ),
    ]
}


def _order_of(query: str) -> dict[str, str]:
    fields = parse_qs(query)
    return {k: " ".join(fields.get(k, [""])[0].split()).lower() for k in ("item", "name", "shipping", "gift")}


def demo_task_done(url: str, base: str, task: str = DEMO_TASK) -> bool:
    """Whether ``url`` is the confirmation page (under ``base``) of ``task``'s order."""
    if not url.startswith(base + "confirm.html") or task not in DEMO_TASKS:
        return False
    return _order_of(urlsplit(url).query) == DEMO_TASKS[task]


class DemoShop:
    """The demo shop served on 127.0.0.1, with the orders its form sent (see the module
    docstring). Use ``DemoShop.start()``; ``stop()`` may be called more than once."""

    def __init__(self, base: str, stop, orders: list[dict[str, str]]):
        self.base, self.stop, self.orders = base, stop, orders

    @classmethod
    def start(cls, root: str | Path | None = None) -> DemoShop:
        orders: list[dict[str, str]] = []

        def seen(path: str, query: str, referer: str) -> None:
            if path.endswith("/confirm.html") and urlsplit(referer).path.endswith("/order.html"):
                orders.append(_order_of(query))

        base, stop = serve_directory(root or SITE_DIR, on_request=seen)
        return cls(base, stop, orders)

    def confirms(self, task: str) -> bool | None:
        """Whether the order ``task`` asks for was placed; None for a task the shop does not know."""
        wanted = DEMO_TASKS.get(task)
        return None if wanted is None else wanted in self.orders

    def describe(self) -> str:
        """The orders the shop recorded, for a person to read."""
        if not self.orders:
            return "the shop recorded no order"
        return "the shop recorded: " + "; ".join(
            f"book {o['item']} for {o['name'] or '(no name)'}, {o['shipping'] or '(no shipping)'}"
            + (", gift-wrapped" if o.get("gift") else "")
            for o in self.orders
        )


class _QuietHandler(SimpleHTTPRequestHandler):
    on_request = None  # called with (path, query, referer) for every GET

    def log_message(self, format, *args):  # noqa: A002 - http.server's signature
        pass

    def do_GET(self):  # noqa: N802 - http.server's name
        if self.on_request is not None:
            parts = urlsplit(self.path)
            self.on_request(parts.path, parts.query, self.headers.get("Referer", ""))
        super().do_GET()

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


def serve_directory(path: str | Path, host: str = "127.0.0.1", port: int = 0, on_request=None):
    """Serve ``path`` over HTTP; returns ``(base_url, stop)``. ``port=0`` picks a free port.
    ``on_request(path, query, referer)`` is called for every GET (from the server's threads).

    ``base_url`` ends with ``/``; ``stop()`` may be called more than once.
    """
    root = Path(path)
    if not root.is_dir():
        raise FileNotFoundError(f"not a directory: {root}")
    handler_class = (
        type("Handler", (_QuietHandler,), {"on_request": staticmethod(on_request)}) if on_request else _QuietHandler
    )
    handler = functools.partial(handler_class, directory=str(root))
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
