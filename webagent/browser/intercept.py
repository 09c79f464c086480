"""The navigation guard inside the browser: one browser-level CDP session that sees every
document request of every tab before it leaves the browser.

``Fetch.enable`` on the *browser* target (``resourceType: Document``, request stage)
pauses the document requests of all targets, a popup's very first one included: a tab
that ``window.open``, a ``target=_blank`` link or a timer opens is created by Chromium,
held by Playwright until it is set up, and its first request then pauses here like any
other. A main frame's id is its page target's id, so a paused request whose ``frameId``
is a page of this session's browser context is a top-level navigation: the session's
``NavigationGuard`` decides, and a refused one fails with ``Aborted`` (the tab stays
where it was, no error page, the server is never asked). A fresh tab (never navigated)
whose first navigation is refused is closed at once. Sub-frames, other contexts
(another MiniWoB worker, the user's own tabs when attached over CDP) and
sub-resources go straight on; only documents pause, so the HTTP cache stays on.

``install`` raises ``BrowserError`` when the guard cannot be set, and ``check`` says when
it was lost (``BrowserSession.observe`` then raises ``CaptureError``, which ends a run
with status ``error``): a session never goes on unguarded.
"""

from __future__ import annotations

from webagent.browser.errors import BrowserError
from webagent.browser.timing import within
from webagent.errors import first_line

DOCUMENTS = {"patterns": [{"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}]}
_BLANK = ("", "about:blank")


class Interceptor:
    def __init__(self, session):
        self.session = session
        self.cdp = None
        self.context_id: str | None = None
        self.first_target: str | None = None  # the session's own first tab
        self.targets: dict[str, dict] = {}  # target id -> Target.TargetInfo (pages)
        self.popups = 0  # tabs of this context the pages opened

    async def install(self, browser, page) -> None:
        try:
            own = await (await self.session.cdp_session(page)).send("Target.getTargetInfo")
            self.first_target = own["targetInfo"]["targetId"]
            self.context_id = own["targetInfo"].get("browserContextId")
            self.cdp = await browser.new_browser_cdp_session()
            self.cdp.on("Target.targetCreated", self._on_target)
            self.cdp.on("Target.targetInfoChanged", self._on_changed)
            self.cdp.on("Target.targetDestroyed", lambda e: self.targets.pop(e.get("targetId"), None))
            self.cdp.on("Fetch.requestPaused", lambda e: self.session._spawn(self._on_paused(e)))
            await self.cdp.send("Target.setDiscoverTargets", {"discover": True})
            await self.cdp.send("Fetch.enable", DOCUMENTS)
        except Exception as exc:  # noqa: BLE001 - any failure: no guard, no session
            raise BrowserError(
                f"the navigation guard could not be installed ({first_line(exc)});"
                " the browser session stops rather than browse unguarded"
            ) from None

    async def check(self) -> str | None:
        """``None`` while the guard is in place, else why it is not."""
        if self.cdp is None:
            return "the navigation guard is not installed"
        try:
            await within(self.cdp.send("Browser.getVersion"), 5)
        except Exception as exc:  # noqa: BLE001 - its CDP session is gone: nothing is checked any more
            return f"the navigation guard was lost ({first_line(exc)})"
        return None

    async def stop(self) -> None:
        """Let paused requests go (the browser may be someone else's) and detach."""
        if self.cdp is None:
            return
        cdp, self.cdp = self.cdp, None
        try:
            await within(cdp.send("Fetch.disable"), 2)
            await within(cdp.detach(), 2)
        except Exception:  # noqa: BLE001 - the browser may be gone already
            pass

    def _ours(self, info: dict) -> bool:
        return info.get("type") == "page" and (
            self.context_id is None or info.get("browserContextId") == self.context_id
        )

    def _on_target(self, event: dict) -> None:
        info = event.get("targetInfo", {})
        if not self._ours(info):
            return
        known = info["targetId"] in self.targets
        self.targets[info["targetId"]] = info
        if not known and info["targetId"] != self.first_target and self.first_target is not None:
            self.popups += 1

    def _on_changed(self, event: dict) -> None:
        info = event.get("targetInfo", {})
        if info.get("targetId") in self.targets:
            self.targets[info["targetId"]] = info

    async def _page_target(self, frame_id: str | None) -> dict | None:
        """The page target whose main frame is ``frame_id`` (``None``: a sub-frame)."""
        if not frame_id:
            return None
        info = self.targets.get(frame_id)
        if info is None:
            try:
                info = (await self.cdp.send("Target.getTargetInfo", {"targetId": frame_id}))["targetInfo"]
            except Exception:  # noqa: BLE001 - not a target: an in-process sub-frame
                return None
        return info if self._ours(info) else None

    async def _on_paused(self, event: dict) -> None:
        cdp, request_id = self.cdp, event["requestId"]
        url = event.get("request", {}).get("url", "")
        reason, info = None, None
        try:
            guard = self.session.guard
            if guard is not None and event.get("resourceType") == "Document":
                info = await self._page_target(event.get("frameId"))
                if info is not None:
                    reason = guard.check(url)
        finally:  # the request never stays paused, whatever happened above
            if cdp is not None:
                try:
                    if reason is None:
                        await cdp.send("Fetch.continueRequest", {"requestId": request_id})
                    else:
                        # Aborted (ERR_ABORTED): the page stays where it was, no error page
                        await cdp.send("Fetch.failRequest", {"requestId": request_id, "errorReason": "Aborted"})
                except Exception:  # noqa: BLE001 - the tab or the request went away meanwhile
                    pass
        if reason is None:
            return
        assert info is not None  # a refusal is only ever for a page target's document
        self.session.events.append(f"navigation refused: {reason}")
        target = info["targetId"]
        if target != self.first_target and info.get("url", "") in _BLANK:
            try:  # a tab the page opened straight onto another site: it never shows anything
                await cdp.send("Target.closeTarget", {"targetId": target})
                self.session.events.append("the new tab it was opened in was closed")
            except Exception:  # noqa: BLE001 - closed already
                pass
            self.session._popup_settled()
