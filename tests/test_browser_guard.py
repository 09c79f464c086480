"""The navigation guard has no hole: an empty allow-list allows no site, hosts are compared
with their port, a tab the page opens by itself outside the allowed sites is closed before
the agent sees it, a refused navigation is a failed action, and a guard that cannot be set
stops the session."""

import asyncio

import pytest
import pytest_asyncio
from browser_support import one_id, open_page, recording_server, requires_chromium, serve_pages

from webagent.browser import Action, BrowserError, BrowserSession, NavigationGuard

browser_tests = [pytest.mark.browser, requires_chromium, pytest.mark.asyncio(loop_scope="module")]


# -- the rules -----------------------------------------------------------------------------
def test_an_empty_allow_list_allows_no_site():
    for guard in (NavigationGuard([]), NavigationGuard.for_start_url("file:///tmp/start.html")):
        for url in ("http://169.254.169.254/latest/meta-data/", "https://example.com/", "http://127.0.0.1:8000/"):
            reason = guard.why_refused(url)
            assert reason is not None and "--allow-domain" in reason, url
        assert guard.why_refused("about:blank") is None
    on_file = NavigationGuard.for_start_url("file:///tmp/start.html", ["example.com"])
    assert on_file.why_refused("file:///tmp/other.html") is None
    assert on_file.why_refused("https://example.com/x") is None
    assert on_file.why_refused("http://169.254.169.254/") is not None


def test_hosts_are_compared_with_their_port():
    guard = NavigationGuard.for_start_url("http://127.0.0.1:8000/start")
    assert guard.why_refused("http://127.0.0.1:8000/other") is None
    assert "127.0.0.1:9999" in guard.why_refused("http://127.0.0.1:9999/")
    assert guard.why_refused("http://127.0.0.1/") is not None  # port 80 is another site
    assert guard.why_refused("http://localhost:8000/") is not None  # another host

    # an entry without a port allows every port of its host (and its subdomains)
    anyport = NavigationGuard.for_start_url("http://127.0.0.1:8000/", ["127.0.0.1", "example.com"])
    assert anyport.why_refused("http://127.0.0.1:9999/") is None
    assert anyport.why_refused("https://shop.example.com:8443/") is None
    # an entry with a port allows only that port
    pinned = NavigationGuard(["example.com:8443", "[::1]:8000"])
    assert pinned.why_refused("https://example.com:8443/") is None
    assert pinned.why_refused("https://example.com/") is not None
    assert pinned.why_refused("http://[::1]:8000/") is None
    assert pinned.why_refused("http://[::1]:8001/") is not None


def test_default_ports_are_the_same_site():
    plain = NavigationGuard.for_start_url("http://shop.example.com/")
    assert plain.why_refused("http://shop.example.com:80/cart") is None
    assert plain.why_refused("https://shop.example.com/cart") is None  # the site's https side
    assert plain.why_refused("http://shop.example.com:8080/") is not None
    secure = NavigationGuard.for_start_url("https://shop.example.com:443/")
    assert secure.why_refused("https://shop.example.com/") is None
    assert NavigationGuard(["example.com:80"]).why_refused("http://example.com/") is None


# -- in a real browser ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def foreign():
    """Another port of 127.0.0.1: another site. Records what it is asked."""
    url, asked, stop = recording_server()
    yield url, asked
    stop()


@pytest.fixture(scope="module")
def site(tmp_path_factory, foreign):
    foreign_url, _ = foreign
    url, stop = serve_pages(
        tmp_path_factory.mktemp("site"),
        {
            "start.html": f"""<html><head><title>Start</title></head><body>
            <p>Allowed page</p>
            <a id="other-port" href="{foreign_url}other-port">Same host, another port</a>
            <a id="other-port-tab" href="{foreign_url}other-port-tab" target="_blank">Another port, new tab</a>
            <button id="later" onclick="setTimeout(() => window.open('{foreign_url}timer-popup'), 300)">later</button>
            <a id="here" href="next.html">Next</a>
            </body></html>""",
            "next.html": "<html><head><title>Next</title></head><body><p>next</p></body></html>",
            "timer.html": f"""<html><head><title>Timer</title></head><body><p>Allowed timer page</p>
            <script>setTimeout(() => window.open('{foreign_url}timer-tab'), 400);</script></body></html>""",
        },
    )
    yield url
    stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser():
    async with BrowserSession(settle_timeout_s=2.0, popup_wait_s=2.0) as b:
        yield b


@pytest.mark.parametrize("link", ["other-port", "other-port-tab"])
@pytest.mark.browser
@requires_chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_another_port_of_the_start_host_is_refused(browser, site, foreign, link):
    foreign_url, asked = foreign
    asked.clear()
    obs = await open_page(browser, site + "start.html")
    result = await browser.act(Action(op="CLICK", element_id=one_id(obs, f"//a[@id='{link}']")), obs)
    assert not result.ok, "a refused navigation is a failed action"
    assert result.blocked_navigation == f"{foreign_url}{link}" and "refused" in result.error
    assert browser.page.url == site + "start.html"
    assert [p.url for p in browser._context.pages if not p.is_closed()] == [site + "start.html"]
    assert asked == []  # the other site was never asked


@pytest.mark.browser
@requires_chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_a_run_started_on_a_file_follows_no_http_link(browser, site, foreign, tmp_path):
    foreign_url, asked = foreign
    asked.clear()
    start = tmp_path / "start.html"
    start.write_text(
        f'<html><body><a id="out" href="{foreign_url}from-file">out</a>'
        f'<a id="meta" href="http://169.254.169.254/latest/meta-data/">meta</a></body></html>'
    )
    obs = await open_page(browser, start.as_uri())
    for link in ("out", "meta"):
        result = await browser.act(Action(op="CLICK", element_id=one_id(obs, f"//a[@id='{link}']")), obs)
        assert not result.ok and result.blocked_navigation, link
        assert browser.page.url == start.as_uri()
    goto = await browser.act(Action(op="GOTO", value=site + "next.html"), obs)
    assert not goto.ok and "--allow-domain" in goto.error
    assert asked == []


@pytest.mark.browser
@requires_chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_a_tab_opened_by_a_timer_outside_the_sites_is_closed_unseen(browser, site, foreign):
    foreign_url, asked = foreign
    asked.clear()
    obs = await open_page(browser, site + "timer.html")
    first = browser.page
    await asyncio.sleep(1.5)  # the page opens its tab meanwhile, with no action in flight
    assert browser.page is first
    obs = await browser.observe()
    assert obs.url == site + "timer.html" and "Allowed timer page" in obs.cleaned_html
    assert [p.url for p in browser._context.pages if not p.is_closed()] == [site + "timer.html"]
    assert asked == []
    # the next action says what happened meanwhile
    result = await browser.act(Action(op="SCROLL", direction="down"), obs)
    assert f"{foreign_url}timer-tab" in (result.note or "") and "refused" in result.note


@pytest.mark.browser
@requires_chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_a_click_whose_timer_opens_a_foreign_tab(browser, site, foreign):
    foreign_url, asked = foreign
    asked.clear()
    obs = await open_page(browser, site + "start.html")
    result = await browser.act(Action(op="CLICK", element_id=one_id(obs, "//button[@id='later']")), obs)
    await asyncio.sleep(1.0)
    obs = await browser.observe()
    assert obs.url == site + "start.html"
    assert asked == []
    assert not result.new_tab


@pytest.mark.browser
@requires_chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_an_allowed_port_entry_opens_the_other_port(browser, site, foreign):
    foreign_url, asked = foreign
    asked.clear()
    obs = await open_page(browser, site + "start.html")
    browser.guard = NavigationGuard.for_start_url(site, [foreign_url.split("/")[2]])
    result = await browser.act(Action(op="CLICK", element_id=one_id(obs, "//a[@id='other-port']")), obs)
    assert result.ok and browser.page.url == foreign_url + "other-port"
    assert [path for path in asked if path != "/favicon.ico"] == ["/other-port"]


@pytest.mark.browser
@requires_chromium
async def test_a_guard_that_cannot_be_set_stops_the_session(monkeypatch):
    from playwright.async_api import CDPSession

    send = CDPSession.send

    async def failing(self, method, params=None):
        if method == "Fetch.enable":
            raise RuntimeError("Fetch.enable: not allowed here")
        return await send(self, method, params)

    monkeypatch.setattr(CDPSession, "send", failing)
    browser = BrowserSession()
    with pytest.raises(BrowserError, match="navigation guard"):
        async with browser:
            pass
    assert browser._closed


@pytest.mark.browser
@requires_chromium
async def test_a_guard_lost_mid_run_stops_the_next_observation(site):
    from webagent.browser.capture import CaptureError

    async with BrowserSession(settle_timeout_s=1.0) as browser:
        await open_page(browser, site + "next.html")
        await browser._interceptor.cdp.detach()  # e.g. the browser dropped the guard's CDP session
        with pytest.raises(CaptureError, match="navigation guard was lost"):
            await browser.observe()
