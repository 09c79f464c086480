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
* Top-level navigations of every tab pass through ``guard`` (see ``guard`` and
  ``intercept``) before they leave the browser; a guard that cannot be installed is a
  ``BrowserError``. A tab the page opens becomes ``page`` unless it is outside the
  allowed sites (then it is closed, unseen); when the active tab closes, the one
  active before it is ``page`` again.
* Browser events (dialogs, downloads, new and closed tabs, crashes, refusals) are lines
  in ``events``; see ``events`` for how dialogs are answered (``accept_dialogs``) and
  where downloads go (``downloads_dir``).
* A confirm or prompt an action raises is held open: ``dialog`` says what the page asks,
  ``act(Action(op="DIALOG", value="accept"|"dismiss"))`` answers it (see ``dialogs``); any
  other action or ``observe()`` dismisses it first.
* ``observe()`` captures the active page, and once more after settling again when that
  fails (a navigation committing, a busy page) before raising ``CaptureError``.
* ``close()`` cancels and awaits the tasks the session spawned; it is safe to call twice,
  after errors and when cancelled (Ctrl-C).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from webagent.browser import dialogs
from webagent.browser.capture import capture
from webagent.browser.errors import BrowserError, CaptureError, SharedTargetError
from webagent.browser.guard import NavigationGuard
from webagent.browser.intercept import Interceptor
from webagent.browser.models import Action, ActionResult, Dialog, Observation
from webagent.browser.tabs import Tabs
from webagent.errors import first_line

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
# "No visible change" is decided after this long without a DOM mutation (an effect that
# shows up 800 ms after a click is the action's), waiting at most QUIET_LIMIT_S.
QUIET_WINDOW_S, QUIET_LIMIT_S = 1.0, 3.0
_QUIET_JS = """([windowMs, limitMs]) => new Promise(resolve => {
  let mutated = false, last = performance.now();
  const start = last;
  const watch = new MutationObserver(() => { mutated = true; last = performance.now(); });
  watch.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  const tick = () => {
    const now = performance.now();
    if (now - last >= windowMs || now - start >= limitMs) { watch.disconnect(); resolve(mutated); }
    else setTimeout(tick, 50);
  };
  setTimeout(tick, 50);
})"""


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


class BrowserSession(Tabs):
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
        accept_dialogs: bool = False,
        downloads_dir: str | Path | None = None,
    ):
        self.headed = headed
        self.cdp_url = cdp_url
        self.executable = executable
        self.allowed_domains = allowed_domains
        self.viewport = viewport
        self.action_timeout_s = action_timeout_s
        self.settle_timeout_s = settle_timeout_s
        self.popup_wait_s = popup_wait_s  # how long an action waits for a tab it opened
        self.accept_dialogs = accept_dialogs  # confirm/prompt/beforeunload: accept instead of dismiss
        self.capture_options: dict = {}  # defaults for every ``observe`` (``capture.capture``'s keywords)
        self.downloads_dir = Path(downloads_dir) if downloads_dir is not None else None
        self.guard: NavigationGuard | None = None
        self._pw: Any = None  # playwright's own objects, made by start()
        self._browser: Any = None
        self._context: Any = None
        self._cdp: dict[object, object] = {}  # Page or Frame -> CDPSession
        self._target_names: dict[object, str] = {}
        self._targets: dict[str, Any] = {}  # target name -> Page or Frame
        self._target_count = 0
        self._shared: dict = {}  # in-process frame -> its URL when checked
        self._interceptor = Interceptor(self)
        self._tasks: set = set()  # guard work and downloads in progress
        self._downloads: set = set()
        self._closed = False
        self._init_tabs()
        self.dialog: Dialog | None = None  # a confirm/prompt an action raised, held for the caller to answer
        dialogs.init(self)

    # -- lifecycle ---------------------------------------------------------------
    async def __aenter__(self) -> BrowserSession:
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def start(self) -> None:
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import async_playwright

        executable = None if self.cdp_url else find_chromium(self.executable)
        self._pw = await async_playwright().start()
        try:
            if self.cdp_url:
                try:
                    self._browser = await self._pw.chromium.connect_over_cdp(self.cdp_url)
                except PlaywrightError as exc:
                    raise BrowserError(f"cannot attach to the browser at {self.cdp_url}: {first_line(exc)}") from None
            else:
                try:
                    self._browser = await self._pw.chromium.launch(
                        executable_path=executable,
                        headless=not self.headed,
                        args=CHROMIUM_ARGS,
                    )
                except PlaywrightError as exc:
                    raise BrowserError(
                        f"cannot start Chromium ({executable or 'Playwright build'}): {first_line(exc)}"
                    ) from None
            width, height = self.viewport
            self._context = await self._browser.new_context(
                viewport={"width": width, "height": height},
                service_workers="block",
            )
            self._context.on("page", self._on_new_page)
            await self._open_first_page()
        except BaseException:
            await self.close()
            raise

    async def _open_first_page(self) -> None:
        """The first tab, and the guard (also run by the MiniWoB context session)."""
        self._page_opened = asyncio.Event()
        from webagent.browser.forms import LISTENER_JS

        await self._context.add_init_script(LISTENER_JS)
        page = await self._context.new_page()
        self._watch(page)
        self._activate(page)
        self._first = page
        try:
            await self._interceptor.install(self._browser, page)
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """Release paused requests, cancel and await this session's tasks, then close the
        context and the browser (or just our context when attached)."""
        if self._closed:
            return
        self._closed = True
        for step in (
            lambda: dialogs.close_open(self, "the browser closed", wait=False),
            self._interceptor.stop,
            self._cancel_tasks,
            self._close_context,
            self._close_browser,
            self._stop_playwright,
        ):
            try:
                await asyncio.shield(step())
            except BaseException:  # noqa: BLE001 - closing must go on after any failure
                pass

    async def _cancel_tasks(self):
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()

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
    def context(self):
        """The Playwright browser context (the teach recorder installs its script and binding there)."""
        return self._context

    @property
    def page(self):
        """The active Playwright page (the newest open tab after a click opened one)."""
        if self._page is None or self._page.is_closed():
            open_pages = [p for p in self._context.pages if not p.is_closed()] if self._context else []
            if not open_pages:
                raise BrowserError("the browser has no open page")
            self._page = open_pages[-1]
        return self._page

    def _spawn(self, coro, download: bool = False) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if download:
            self._downloads.add(task)
            task.add_done_callback(self._downloads.discard)

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
            self._target_count += 1
            name = f"t{self._target_count - 1}"  # never reused: names of forgotten targets stay unknown
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

    def _forget_frame(self, frame) -> None:
        self.forget(frame)
        self._shared.pop(frame, None)

    def forget(self, owner) -> None:
        """Drop a cached CDP session and its target name (its target went away, e.g. the frame
        changed process or closed)."""
        self._cdp.pop(owner, None)
        name = self._target_names.pop(owner, None)
        if name is not None:
            self._targets.pop(name, None)

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

    async def quiet(self, window_s: float = QUIET_WINDOW_S, limit_s: float = QUIET_LIMIT_S) -> bool:
        """Wait until the page went ``window_s`` without a DOM mutation and with no request
        in flight, at most ``limit_s``; True when it changed meanwhile (observe it again)."""
        try:
            mutated = await self.page.evaluate(_QUIET_JS, [window_s * 1000, limit_s * 1000])
        except Exception:  # noqa: BLE001 - the page navigated or closed: that is a change
            return True
        await self.settle_any()
        return bool(mutated)

    # -- the two verbs -----------------------------------------------------------------------
    async def observe(self, **options) -> Observation:
        """Capture the active page (see ``capture.capture``); a capture that fails is tried
        once more after settling again, then it is a ``CaptureError``."""
        options = {**self.capture_options, **options}
        await dialogs.close_open(self)  # a dialog left unanswered: dismissed, or nothing can be captured
        lost = await self._interceptor.check() if self.guard is not None else None
        if lost is not None:
            raise CaptureError(f"{lost}: the run stops rather than browse unguarded")
        await self.guard_work()
        await self.enforce_guard()
        try:
            return await capture(self, **options)
        except Exception as exc:  # noqa: BLE001 - a navigation committing, a busy page: once more
            first = first_line(exc)
        await self.settle_any()
        await self.guard_work()
        await self.enforce_guard()
        try:
            return await capture(self, **options)
        except CaptureError as exc:
            raise CaptureError(f"{exc} (and before that: {first})") from None
        except Exception as exc:  # noqa: BLE001
            raise CaptureError(f"could not capture the page: {first_line(exc)} (and before that: {first})") from None

    async def lands_on(self, url: str) -> str | None:
        """Where opening ``url`` would land now, asked of the site without opening it: a GET with
        this context's cookies, its redirect not followed (nothing rendered, no other host asked).
        The redirect's target, ``url`` itself when it answers, "" when it answers an error; None
        when it cannot be asked (the guard refuses it, no answer)."""
        if self.guard is not None and self.guard.why_refused(url) is not None:
            return None
        try:
            answer = await self.context.request.get(url, max_redirects=0, timeout=3000)
        except Exception:  # noqa: BLE001 - no answer: not known
            return None
        try:
            if 300 <= answer.status < 400:
                return urljoin(url, answer.headers.get("location", ""))
            return url if answer.ok else ""
        finally:
            await answer.dispose()

    async def settle_any(self) -> None:
        try:
            await self.settle()
        except Exception:  # noqa: BLE001 - no page at all: the capture says so
            pass

    async def dismiss_dialog(self, why: str = "it was not answered") -> str:
        """Dismiss the dialog an action left open (``dialog``); its event line, or "" when none was."""
        if self.dialog is None:
            return ""
        before = len(self.events)
        await dialogs.close_open(self, why)
        return "; ".join(self.events[before:])

    async def act(self, action: Action, observation: Observation | None = None) -> ActionResult:
        from webagent.browser.actions import execute

        return await execute(self, action, observation)
