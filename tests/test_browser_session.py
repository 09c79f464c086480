"""Launching, attaching, closing, and the navigation guard / redaction rules."""

import asyncio
import socket
import subprocess
import time
import urllib.request

import pytest
from browser_support import MISSING, one_id, requires_chromium

from webagent.browser import REDACTED, Action, BrowserError, BrowserSession, NavigationGuard, find_chromium, redact
from webagent.browser import session as session_module
from webagent.demo_site import SITE_DIR, serve_directory
from webagent.errors import UserError


def test_guard_allows_start_host_and_subdomains_only():
    guard = NavigationGuard.for_start_url("https://shop.example.com/start", ["example.org"])
    assert guard.why_refused("https://shop.example.com/cart") is None
    assert guard.why_refused("https://eu.shop.example.com/") is None
    assert guard.why_refused("https://www.example.org/x") is None
    assert "not in the allowed domains" in guard.why_refused("https://example.com/")
    assert "not in the allowed domains" in guard.why_refused("https://evil-shop.example.com.attacker.net/")
    assert "file://" in guard.why_refused("file:///etc/passwd")
    assert "scheme" in guard.why_refused("chrome://settings")
    assert guard.why_refused("about:blank") is None
    assert guard.refused == []  # why_refused only asks
    guard.check("https://example.com/")
    assert guard.refused == ["https://example.com/"]


def test_guard_for_a_file_start_allows_files():
    guard = NavigationGuard.for_start_url("file:///tmp/page.html")
    assert guard.why_refused("file:///tmp/other.html") is None


def test_redact():
    assert redact("s3cret", True) == REDACTED
    assert redact("visible", False) == "visible"
    assert redact(None, True) is None


def test_missing_browser_is_one_clear_line(monkeypatch, tmp_path):
    monkeypatch.setenv("WEBAGENT_CHROMIUM", str(tmp_path / "no-such-chrome"))
    with pytest.raises(BrowserError) as info:
        find_chromium()
    assert "WEBAGENT_CHROMIUM" in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, UserError)

    monkeypatch.delenv("WEBAGENT_CHROMIUM")
    monkeypatch.setattr(session_module, "DEFAULT_CHROMIUM", str(tmp_path / "none"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path / "pw"))
    with pytest.raises(BrowserError, match="no Chromium found: install it"):
        find_chromium()


async def test_start_without_browser_raises_user_error(monkeypatch, tmp_path):
    monkeypatch.setenv("WEBAGENT_CHROMIUM", str(tmp_path / "missing"))
    with pytest.raises(BrowserError):
        async with BrowserSession():
            pass


def test_env_override_is_used(monkeypatch):
    if MISSING:
        pytest.skip(MISSING)
    path = find_chromium()
    monkeypatch.setenv("WEBAGENT_CHROMIUM", path)
    assert find_chromium() == path


@pytest.mark.browser
@requires_chromium
async def test_close_is_safe_after_errors_and_twice():
    browser = BrowserSession()
    with pytest.raises(RuntimeError):
        async with browser:
            await browser.page.goto("about:blank")
            raise RuntimeError("boom")
    await browser.close()  # second close: nothing left to do, no error
    assert browser._closed


@pytest.mark.browser
@requires_chromium
async def test_cancelled_run_still_closes():
    browser = BrowserSession()

    async def run():
        async with browser:
            await asyncio.sleep(30)

    task = asyncio.create_task(run())
    while browser._page is None:
        await asyncio.sleep(0.05)
    process = browser._browser  # launched: the context is up
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert browser._closed and not process.is_connected()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.browser
@requires_chromium
async def test_attach_over_cdp_to_a_running_browser(tmp_path):
    port = _free_port()
    chromium = subprocess.Popen(
        [
            find_chromium(),
            "--headless=new",
            f"--remote-debugging-port={port}",
            f"--user-data-dir={tmp_path}",
            *session_module.CHROMIUM_ARGS,
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url, stop = serve_directory(SITE_DIR)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/json/version", timeout=1).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("the debugging port never opened")
                await asyncio.sleep(0.2)
        async with BrowserSession(cdp_url=f"http://127.0.0.1:{port}") as browser:
            result = await browser.open(url + "index.html")
            assert result.ok, result.error
            obs = await browser.observe()
            assert one_id(obs, "//button[@id='search-button']")
        assert chromium.poll() is None  # attached sessions leave the browser running
    finally:
        stop()
        chromium.terminate()
        chromium.wait(timeout=10)


async def test_unreachable_cdp_url_is_a_user_error():
    with pytest.raises(BrowserError, match="cannot attach"):
        async with BrowserSession(cdp_url=f"http://127.0.0.1:{_free_port()}"):
            pass


@pytest.mark.browser
@requires_chromium
async def test_demo_site_flow_end_to_end():
    url, stop = serve_directory(SITE_DIR)
    try:
        async with BrowserSession() as browser:
            assert (await browser.open(url + "index.html")).ok
            obs = await browser.observe()
            search = Action(op="TYPE", element_id=one_id(obs, "//input[@name='q']"), value="tea", press_enter=True)
            assert (await browser.act(search, obs)).ok
            obs = await browser.observe()
            assert "2 books" in obs.cleaned_html
            assert (
                await browser.act(Action(op="CLICK", element_id=one_id(obs, "//a[.='Tea Gardens of Assam']")), obs)
            ).ok
            obs = await browser.observe()
            for action in (
                Action(op="TYPE", element_id=one_id(obs, "//input[@name='name']"), value="Ann Lee"),
                Action(op="SELECT", element_id=one_id(obs, "//select[@name='shipping']"), value="Pick up in store"),
                Action(op="CLICK", element_id=one_id(obs, "//input[@name='gift']")),
                Action(op="CLICK", element_id=one_id(obs, "//button[@id='place-order']")),
            ):
                result = await browser.act(action, obs)
                assert result.ok, result.error
            obs = await browser.observe()
            assert "confirm.html" in obs.url
            for ident, expected in (
                ("c-book", "Tea Gardens of Assam"),
                ("c-name", "Ann Lee"),
                ("c-shipping", "pickup"),
                ("c-gift", "yes"),
            ):
                assert await browser.page.text_content(f"#{ident}") == expected
    finally:
        stop()


def test_serve_directory_serves_and_stops(tmp_path):
    (tmp_path / "a.txt").write_text("hello")
    url, stop = serve_directory(tmp_path)
    assert url.startswith("http://127.0.0.1:")
    assert urllib.request.urlopen(url + "a.txt", timeout=5).read() == b"hello"
    stop()
    stop()
    with pytest.raises(OSError):
        urllib.request.urlopen(url + "a.txt", timeout=2)
    with pytest.raises(FileNotFoundError):
        serve_directory(tmp_path / "missing")


@pytest.mark.browser
@requires_chromium
async def test_lands_on_asks_where_a_page_would_send_the_run_with_its_cookies_and_follows_no_redirect():
    """``BrowserSession.lands_on`` (the menu's look at a skill's start page): a GET with the
    context's cookies, its redirect named, not followed; an error page is ""; a host the guard
    refuses is never asked."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            staff = "session=1" in (self.headers.get("Cookie") or "")
            if self.path == "/" and staff:  # the public form's page sends a logged-in visitor to the list
                self.send_response(302)
                self.send_header("Location", "/tickets/")
            elif self.path == "/login":
                self.send_response(200)
                self.send_header("Set-Cookie", "session=1; Path=/")
            else:
                self.send_response(404 if self.path == "/gone/" else 200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        async with BrowserSession() as browser:
            await browser.open(base + "login")  # the browser now holds the session cookie
            assert await browser.lands_on(base) == base + "tickets/"
            assert "/tickets/" not in asked  # the redirect was named, not followed
            assert await browser.lands_on(base + "tickets/") == base + "tickets/"
            assert await browser.lands_on(base + "gone/") == ""
            assert await browser.lands_on("http://example.com/") is None  # not an allowed site: not asked
    finally:
        server.shutdown()
        server.server_close()
