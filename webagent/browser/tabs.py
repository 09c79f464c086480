"""The tabs of a browser session: which one is active, what opened or closed, and the
event lines the next action's note carries (a mixin of ``BrowserSession``).

* A tab the pages open becomes the active page, unless it is outside the allowed sites:
  then it is closed before anything looks at it (the ``intercept`` guard usually closes
  it before its first request; this is the backstop for one that got there anyway).
* When the active tab closes, the one active before it is active again.
* ``take_events()`` hands out the event lines since its last call; a tab opened
  meanwhile and still open is told there as ``new tab: URL``.
* ``enforce_guard()`` is the last backstop before an observation or after an action:
  a tab outside the allowed sites is closed, or, the session's own first tab, sent back.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from webagent.browser import events as browser_events
from webagent.browser.timing import within

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from webagent.browser.guard import NavigationGuard
    from webagent.browser.intercept import Interceptor


class Tabs:
    if TYPE_CHECKING:  # what the session this mixes into provides (``BrowserSession``)
        action_timeout_s: float
        guard: NavigationGuard | None
        _cdp: dict[object, object]
        _interceptor: Interceptor
        _tasks: set
        _downloads: set

        @property
        def page(self) -> Any: ...

        def _forget_frame(self, frame) -> None: ...

        def forget(self, owner) -> None: ...

        def _spawn(self, coro, download: bool = False) -> None: ...

    def _init_tabs(self) -> None:
        self._page: Any = None  # playwright Pages
        self._first: Any = None  # the session's own first tab
        self._previous: list = []  # pages that were active before, oldest first
        self._new_pages: list = []  # opened since take_new_pages()
        self._unannounced: list = []  # opened, not yet told in take_events()
        self._announced: set = set()  # told about (their closing is told too)
        self._closing: set = set()  # closed by the session itself
        self._inflight: dict[object, int] = {}  # Page -> requests in flight
        self._page_opened: asyncio.Event | None = None
        self.events: list[str] = []  # every browser event, in order (see events.py)
        self._events_taken = 0  # how many of them take_events() handed out

    def _watch(self, page) -> None:
        page.on("dialog", lambda dialog: browser_events.answer_dialog(self, dialog))
        page.on("download", lambda download: browser_events.on_download(self, download))
        page.on("crash", lambda p: browser_events.on_crash(self, p))
        page.on("close", self._on_close)
        page.on("framedetached", self._forget_frame)
        page.on("request", lambda r: self._count(page, +1))
        page.on("requestfinished", lambda r: self._count(page, -1))
        page.on("requestfailed", lambda r: self._count(page, -1))
        page.set_default_timeout(self.action_timeout_s * 1000)

    def _activate(self, page) -> None:
        if self._page is not None and self._page is not page:
            self._previous.append(self._page)
        self._page = page

    def _on_close(self, page) -> None:
        if page is self._page:
            self._page = self._previous.pop() if self._previous else None
            while self._page is not None and self._page.is_closed():
                self._page = self._previous.pop() if self._previous else None
        if page in self._announced and page not in self._closing:
            now = f"; the active tab is {self._page.url}" if self._page is not None else ""
            self.events.append(f"tab closed: {page.url}{now}")
        for owner in [o for o in self._cdp if o is page or getattr(o, "page", None) is page]:
            self.forget(owner)
        self._inflight.pop(page, None)
        self._announced.discard(page)
        self._closing.discard(page)

    def _count(self, page, delta: int) -> None:
        self._inflight[page] = max(0, self._inflight.get(page, 0) + delta)

    def _on_new_page(self, page) -> None:
        if self._page is None or page is self._page:
            return  # the first page: _open_first_page watches it
        self._watch(page)
        if page.is_closed():
            return
        reason = self.guard.check(page.url) if self.guard is not None and page.url else None
        if reason is not None:  # landed outside before we saw it (refused and recorded by check): never shown
            self.events.append(f"navigation refused: {reason}")
            self._spawn(self.close_tab(page, "the new tab it was opened in was closed"))
            self._popup_settled()
            return
        self._activate(page)
        self._new_pages.append(page)
        self._unannounced.append(page)
        self._popup_settled()

    def _popup_settled(self) -> None:
        """A tab the pages opened is now either a page of ours or closed."""
        if self._page_opened is not None:
            self._page_opened.set()

    async def close_tab(self, page, event: str | None = None) -> None:
        self._closing.add(page)
        try:
            await page.close()
        except Exception:  # noqa: BLE001 - closed already
            pass
        if event:
            self.events.append(event)

    def take_events(self) -> list[str]:
        """Event lines since the last call (and the tabs opened meanwhile that are still open)."""
        for page in self._unannounced:
            if not page.is_closed():
                self._announced.add(page)
                self.events.append(f"new tab: {page.url or 'about:blank'}")
        self._unannounced = []
        lines = self.events[self._events_taken :]
        self._events_taken = len(self.events)
        return lines

    def take_new_pages(self) -> list:
        """Tabs opened since the last call (and forget them)."""
        pages, self._new_pages = self._new_pages, []
        if self._page_opened is not None:
            self._page_opened.clear()
        return pages

    def popups_announced(self) -> int:
        """How many tabs the pages have opened so far (counted as Chromium creates them)."""
        return self._interceptor.popups

    async def wait_for_new_page(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for a tab the pages opened to open (or be closed by the
        guard); whether one did."""
        if self._new_pages:
            return True
        if self._page_opened is None or timeout_s <= 0:
            return False
        try:
            await within(self._page_opened.wait(), timeout_s)
        except TimeoutError:
            return False
        return True

    async def wait_for_downloads(self, timeout_s: float) -> None:
        """Wait up to ``timeout_s`` for downloads being saved (they go on after that)."""
        if self._downloads:
            await asyncio.wait(list(self._downloads), timeout=timeout_s)

    async def guard_work(self, timeout_s: float = 2.0) -> None:
        """Wait (bounded) for the guard's decisions in progress, so that a tab it is
        about to close is never observed."""
        pending = [t for t in self._tasks if t not in self._downloads]
        if pending:
            await asyncio.wait(pending, timeout=timeout_s)

    async def enforce_guard(self, pages=()) -> None:
        """Backstop: a tab that ended up outside the allowed sites anyway is closed (one
        the pages opened) or sent back (the session's own)."""
        if self.guard is None:
            return
        try:
            active = [self.page]
        except Exception:  # noqa: BLE001 - no open page: nothing to send back
            active = []
        for page in [*pages, *active]:
            if page.is_closed() or self.guard.why_refused(page.url) is None:
                continue
            self.events.append(f"navigation refused: {self.guard.check(page.url)}")
            if page is not self._first:
                await self.close_tab(page, "the tab was closed")
                continue
            try:
                await page.go_back(timeout=self.action_timeout_s * 1000)
            except Exception:  # noqa: BLE001 - best effort; see below
                pass
            if not page.is_closed() and self.guard.why_refused(page.url) is not None:
                await page.goto("about:blank")
