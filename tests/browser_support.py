"""Shared helpers of the browser tests: skip without Chromium, serve fixture pages,
find ids in an observation."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from webagent.browser import BrowserError, find_chromium

WEB_PAGES = Path(__file__).parent / "fixtures" / "web_pages"


def _chromium_missing() -> str | None:
    try:
        find_chromium()
    except BrowserError as exc:
        return f"no usable Chromium here: {exc}"
    return None


MISSING = _chromium_missing()
requires_chromium = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def ids(obs, xpath: str) -> list[str]:
    """backend_node_ids of the cleaned-HTML elements matching ``xpath``."""
    root = etree.fromstring(obs.cleaned_html)
    return [el.get("backend_node_id") for el in root.xpath(xpath)]


def one_id(obs, xpath: str) -> str:
    found = ids(obs, xpath)
    assert len(found) == 1, f"{xpath}: {found}"
    return found[0]


async def open_page(browser, url: str):
    """Open ``url`` as the start of a run (the guard follows its host) and observe it."""
    for page in browser._context.pages[:-1]:  # tabs left open by an earlier test
        await page.close()
    browser.guard = None
    result = await browser.open(url)
    assert result.ok, result.error
    return await browser.observe()


def serve_pages(folder: Path, pages: dict[str, str]):
    """Write ``pages`` (name -> HTML) into ``folder`` and serve it: ``(base_url, stop)``."""
    from webagent.demo_site import serve_directory

    folder.mkdir(parents=True, exist_ok=True)
    for name, html in pages.items():
        (folder / name).write_text(html)
    return serve_directory(folder)


def recording_server(body: bytes = b"<html><body><p>outside</p></body></html>", headers: dict | None = None):
    """An HTTP server on 127.0.0.1 that answers every GET with ``body`` and records the
    paths asked: ``(base_url, asked, stop)``."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop():
        server.shutdown()
        server.server_close()

    return f"http://127.0.0.1:{server.server_address[1]}/", asked, stop
