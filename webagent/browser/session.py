"""A Chromium driven through Playwright's async API: the only place that launches or
attaches to a browser.

    async with BrowserSession(headed=False) as browser:
        await browser.open("http://127.0.0.1:8000/")    # sets the navigation guard
        obs = await browser.observe()                    # capture.Observation
        result = await browser.act(Action(op="CLICK", element_id="42"), obs)

* The browser: ``executable`` argument, else ``$WEBAGENT_CHROMIUM``, else
  ``/usr/bin/chromium``, else Playwright's own download when installed; none found
  is a ``UserError`` with one line. ``cdp_url="ws://..."`` (or ``http://host:port``)
  attaches to a running browser instead and never closes it.
* Every session gets a fresh context (profile); headless unless ``headed=True``.
* JS dialogs (alert/confirm/prompt/beforeunload) are accepted at once and logged in
  ``events``; a page opened by the page (new tab, popup) becomes ``page``, and when
  it closes the page active before it is ``page`` again.
* Top-level navigations pass through ``guard`` (see ``guard.NavigationGuard``): each
  page's document requests pause in CDP ``Fetch`` until the guard has looked at them.
* ``close()`` is safe to call twice, after errors and when cancelled (Ctrl-C).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from webagent.browser.guard import NavigationGuard
from webagent.browser.models import Action, ActionResult, Observation
from webagent.browser.timing import within
from webagent.errors import UserError

#: Flags without which Chromium here tries (and fails) to reach Google's services,
#: or cannot run as root in a container.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
DEFAULT_CHROMIUM = "/usr/bin/chromium"


class BrowserError(UserError):
    """The browser cannot be started or reached."""


class SharedTargetError(RuntimeError):
    """A frame rendered in its parent's process has no CDP session of its own."""


def find_chromium(executable: str | None = None) -> str | None:
    """Path of the Chromium to launch, or ``None`` to let Playwright use its own.

    Raises ``BrowserError`` when nothing usable is found.
    """
    for candidate, origin in ((executable, "executable"), (os.environ.get("WEBAGENT_CHROMIUM"), "WEBAGENT_CHROMIUM")):
        if candidate:
            path = shutil.which(candidate) or candidate
            if not (os.path.isfile(path) and os.access(path, os.X_OK)):
                raise BrowserError(f"{origin}={candidate} is not an executable browser")
            return path
    if os.access(DEFAULT_CHROMIUM, os.X_OK):
        return DEFAULT_CHROMIUM
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if _playwright_chromium_installed():
        return None
    raise BrowserError(
        "no Chromium found: install it (apt-get install -y chromium) or set WEBAGENT_CHROMIUM=/path/to/chrome"
    )


def _playwright_chromium_installed() -> bool:
    root = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or Path.home() / ".cache" / "ms-playwright")
    return root.is_dir() and any(p.name.startswith("chromium") for p in root.iterdir())


class BrowserSession:
    """One browser, one context, one active page (see the module docstring)."""

    def __init__(
        self,
        *,
        headed: bool = False,
        cdp_url: str | None = None,
        executable: str | None = None,
        allowed_domains: list[str] | None = None,
        viewport: tuple[int, int] = (1280, 800),
        action_timeout_s: float = 5.0,
        settle_timeout_s: float = 3.0,
        popup_wait_s: float = 5.0,
    ):
        self.headed = headed
        self.cdp_url = cdp_url
        self.executable = executable
        self.allowed_domains = allowed_domains
        self.viewport = viewport
        self.action_timeout_s = action_timeout_s
        self.settle_timeout_s = settle_timeout_s
        self.popup_wait_s = popup_wait_s  # how long an action waits for a tab it opened
        self.guard: NavigationGuard | None = None
        self.events: list[str] = []          # dialogs answered, tabs opened, navigations refused
        self._pw = None
        self._browser = None
        self._context = None
        self._owns_context = True
        self._page = None
        self._new_pages: list = []
        self._cdp: dict[object, object] = {}    # Page or Frame -> CDPSession
        self._target_names: dict[object, str] = {}
        self._targets: dict[str, object] = {}   # target name -> Page or Frame
        self._inflight: dict[object, int] = {}  # Page -> requests in flight
        self._shared: dict = {}                 # in-process frame -> its URL when checked
        self._previous: list = []               # pages that were active before, oldest first
        self._page_opened: asyncio.Event | None = None
        self._popups_announced = 0              # page targets created with an opener (CDP)
        self._browser_cdp = None
        self._tasks: set = set()                # guard work in progress (new tabs, paused requests)
        self._closed = False

    # -- lifecycle ---------------------------------------------------------------
    async def __aenter__(self) -> "BrowserSession":
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def start(self) -> None:
        from playwright.async_api import Error as PlaywrightError, async_playwright

        executable = None if self.cdp_url else find_chromium(self.executable)
        self._pw = await async_playwright().start()
        try:
            if self.cdp_url:
                try:
                    self._browser = await self._pw.chromium.connect_over_cdp(self.cdp_url)
                except PlaywrightError as exc:
                    raise BrowserError(f"cannot attach to the browser at {self.cdp_url}: {_first_line(exc)}") from None
            else:
                try:
                    self._browser = await self._pw.chromium.launch(
                        executable_path=executable, headless=not self.headed, args=CHROMIUM_ARGS,
                    )
                except PlaywrightError as exc:
                    raise BrowserError(f"cannot start Chromium ({executable or 'Playwright build'}): {_first_line(exc)}") from None
            width, height = self.viewport
            self._context = await self._browser.new_context(
                viewport={"width": width, "height": height}, service_workers="block",
            )
            self._page_opened = asyncio.Event()
            self._context.on("page", self._on_new_page)
            await self._watch_targets()
            await self._open_first_page()
        except BaseException:
            await self.close()
            raise

    async def _open_first_page(self) -> None:
        page = await self._context.new_page()
        self._attach(page)
        await self._guard_page(page)

    async def _watch_targets(self) -> None:
        """Count popups the moment Chromium creates them: Playwright announces a new
        page only once it is set up, too late for the action that opened it."""
        try:
            self._browser_cdp = await self._browser.new_browser_cdp_session()
            self._browser_cdp.on("Target.targetCreated", self._on_target_created)
            await self._browser_cdp.send("Target.setDiscoverTargets", {"discover": True})
        except Exception:  # noqa: BLE001 - without it, popups are still caught, later
            self._browser_cdp = None

    def _on_target_created(self, event) -> None:
        info = event.get("targetInfo", {})
        if info.get("type") == "page" and info.get("openerId"):
            self._popups_announced += 1

    async def close(self) -> None:
        """Close the context and the browser (or just our context when attached)."""
        if self._closed:
            return
        self._closed = True
        for step in (self._close_context, self._close_browser, self._stop_playwright):
            try:
                await asyncio.shield(step())
            except BaseException:  # noqa: BLE001 - closing must go on after any failure
                pass

    async def _close_context(self):
        if self._context is not None:
            await self._context.close()

    async def _close_browser(self):
        if self._browser is not None and not self.cdp_url:
            await self._browser.close()

    async def _stop_playwright(self):
        if self._pw is not None:
            await self._pw.stop()

    # -- pages ---------------------------------------------------------------------
    @property
    def page(self):
        """The active Playwright page (the newest open tab after a click opened one)."""
        if self._page is None or self._page.is_closed():
            open_pages = [p for p in self._context.pages if not p.is_closed()] if self._context else []
            if not open_pages:
                raise BrowserError("the browser has no open page")
            self._page = open_pages[-1]
        return self._page

    def _attach(self, page) -> None:
        page.on("dialog", self._on_dialog)
        page.on("close", self._on_close)
        page.on("request", lambda r: self._count(page, +1))
        page.on("requestfinished", lambda r: self._count(page, -1))
        page.on("requestfailed", lambda r: self._count(page, -1))
        page.set_default_timeout(self.action_timeout_s * 1000)
        if self._page is not None:
            self._previous.append(self._page)
        self._page = page

    def _on_close(self, page) -> None:
        if page is self._page:
            self._page = self._previous.pop() if self._previous else None
            while self._page is not None and self._page.is_closed():
                self._page = self._previous.pop() if self._previous else None
        self._cdp.pop(page, None)
        self._inflight.pop(page, None)

    def _count(self, page, delta: int) -> None:
        self._inflight[page] = max(0, self._inflight.get(page, 0) + delta)

    def _on_new_page(self, page) -> None:
        if self._page is None or page is self._page:
            return  # the first page: start() attaches it
        self._attach(page)
        self._spawn(self._guard_page(page))  # its first request is not seen: see guard
        self._new_pages.append(page)
        if self._page_opened is not None:
            self._page_opened.set()
        self.events.append(f"new tab: {page.url}")

    def take_new_pages(self) -> list:
        """Tabs opened since the last call (and forget them)."""
        pages, self._new_pages = self._new_pages, []
        if self._page_opened is not None:
            self._page_opened.clear()
        return pages

    def popups_announced(self) -> int:
        """How many tabs the pages have opened so far (counted as Chromium creates them)."""
        return self._popups_announced

    async def wait_for_new_page(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for a tab to open; whether one did."""
        if self._new_pages:
            return True
        if self._page_opened is None or timeout_s <= 0:
            return False
        try:
            await within(self._page_opened.wait(), timeout_s)
        except asyncio.TimeoutError:
            return False
        return True

    async def _on_dialog(self, dialog) -> None:
        self.events.append(f"dialog {dialog.type}: {dialog.message[:200]}")
        try:
            await dialog.accept()
        except Exception:  # noqa: BLE001 - the page may be gone already
            pass

    async def _guard_page(self, page) -> None:
        """Pause the page's document requests (CDP ``Fetch``, ``resourceType: Document``)
        so that a main-frame navigation outside the guard's domains is refused. Only
        documents pause: sub-resources go straight through, and the HTTP cache stays on
        (Playwright's ``context.route`` would pause every request and turn the cache off,
        which made each page load about half again slower)."""
        try:
            cdp = await self.cdp_session(page)
            tree = await cdp.send("Page.getFrameTree")
            main_frame = tree["frameTree"]["frame"]["id"]
            cdp.on("Fetch.requestPaused", lambda event: self._spawn(self._on_paused(cdp, main_frame, event)))
            await cdp.send("Fetch.enable", {"patterns": [{"urlPattern": "*", "resourceType": "Document",
                                                          "requestStage": "Request"}]})
        except Exception as exc:  # noqa: BLE001 - a tab closed at once; the action's backstop still applies
            self.events.append(f"navigation guard not set on {getattr(page, 'url', '?')}: {_first_line(exc)}")

    def _spawn(self, coro) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _on_paused(self, cdp, main_frame: str, event: dict) -> None:
        request_id = event["requestId"]
        url = event.get("request", {}).get("url", "")
        reason = None
        if event.get("frameId") == main_frame and self.guard is not None:
            reason = self.guard.check(url)
        try:
            if reason is not None:
                self.events.append(f"navigation refused: {reason}")
                # Aborted (ERR_ABORTED): the page stays where it was, no error page
                await cdp.send("Fetch.failRequest", {"requestId": request_id, "errorReason": "Aborted"})
            else:
                await cdp.send("Fetch.continueRequest", {"requestId": request_id})
        except Exception:  # noqa: BLE001 - the tab or the request went away meanwhile
            pass

    # -- CDP targets -------------------------------------------------------------------
    async def cdp_session(self, owner):
        """The CDP session of a Page or of an out-of-process Frame (cached); raises
        Playwright's error for a frame that shares its parent's process."""
        session = self._cdp.get(owner)
        if session is None:
            url = getattr(owner, "url", None)
            if self._shared.get(owner) == url:  # known in-process, and not navigated since
                raise SharedTargetError("This frame does not have a separate CDP session")
            try:
                session = await self._context.new_cdp_session(owner)
            except Exception as exc:
                if "does not have a separate CDP session" in str(exc):
                    self._shared[owner] = url
                    raise SharedTargetError(str(exc)) from None
                raise
            self._cdp[owner] = session
            name = f"t{len(self._target_names)}"
            self._target_names[owner] = name
            self._targets[name] = owner
        return session

    def target_name(self, owner) -> str:
        return self._target_names[owner]

    def target(self, name: str):
        """(owner, CDP session) for a target name, or ``None`` when it is gone."""
        owner = self._targets.get(name)
        if owner is None:
            return None
        closed = owner.is_closed() if hasattr(owner, "is_closed") else owner.is_detached()
        cdp = self._cdp.get(owner)
        if closed or cdp is None or self._target_names.get(owner) != name:
            return None  # gone, or its target was replaced since the observation
        return owner, cdp

    def forget(self, owner) -> None:
        """Drop a cached CDP session (its target went away, e.g. the frame changed process)."""
        self._cdp.pop(owner, None)

    # -- navigation and waiting ------------------------------------------------------------
    async def open(self, url: str) -> ActionResult:
        """Start a run at ``url``: the guard allows its host (plus ``allowed_domains``)."""
        if self.guard is None:
            self.guard = NavigationGuard.for_start_url(url, self.allowed_domains)
        return await self.act(Action(op="GOTO", value=url))

    async def settle(self, page=None) -> None:
        """Wait, bounded by ``settle_timeout_s``, for the load event then a quiet network."""
        page = page or self.page
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settle_timeout_s
        try:
            await page.wait_for_load_state("load", timeout=self.settle_timeout_s * 1000)
        except Exception:  # noqa: BLE001 - a slow page is observed as it is
            return
        quiet_since = None
        while loop.time() < deadline:
            if self._inflight.get(page, 0) == 0:
                quiet_since = quiet_since or loop.time()
                if loop.time() - quiet_since >= 0.15:
                    return
            else:
                quiet_since = None
            await asyncio.sleep(0.05)

    # -- the two verbs -----------------------------------------------------------------------
    async def observe(self, **options) -> Observation:
        from webagent.browser.capture import capture

        return await capture(self, **options)

    async def act(self, action: Action, observation: Observation | None = None) -> ActionResult:
        from webagent.browser.actions import execute

        return await execute(self, action, observation)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
