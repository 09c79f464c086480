"""Who may use the page: whoever has the token printed at start, from this page's own origin.

Every request needs the token: ``?token=...`` once (answered by a redirect that sets it as a
``SameSite=Strict``, ``HttpOnly`` cookie, so the token leaves the address bar), the cookie after
that. A request for another Host (DNS rebinding) is refused. A state-changing request (anything
but GET/HEAD) is refused when the browser says it comes from another origin: an ``Origin``
other than this server's, or ``Sec-Fetch-Site`` other than ``same-origin``/``none``. No other page may frame this one."""

from __future__ import annotations

import secrets
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "webagent_ui_token"
SAFE_METHODS = ("GET", "HEAD")


def new_token() -> str:
    return secrets.token_urlsafe(24)


class Guard:
    """ASGI middleware: the token, the Host and the origin checks above."""

    def __init__(self, app: ASGIApp, token: str, hosts: set[str]):
        self.app, self.token, self.hosts = app, token, hosts  # hosts: "127.0.0.1:8765", "localhost:8765"

    def _refusal(self, request: Request) -> str | None:
        host = request.headers.get("host", "")
        if host not in self.hosts:
            return f"refused: this page is served for {' or '.join(sorted(self.hosts))}, not {host!r}"
        given = request.query_params.get("token") or request.cookies.get(COOKIE) or ""
        if not secrets.compare_digest(given.encode(), self.token.encode()):
            return "refused: this page needs the token printed by `webagent ui` (open the URL it printed)"
        if request.method not in SAFE_METHODS:
            origin = request.headers.get("origin")
            if origin is not None and origin != f"http://{host}":
                return f"refused: a cross-origin request (from {origin}) may not change anything here"
            fetch_site = request.headers.get("sec-fetch-site")
            if fetch_site is not None and fetch_site not in ("same-origin", "none"):
                return f"refused: a {fetch_site} request may not change anything here"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        refusal = self._refusal(request)
        response: Response | None = None
        if refusal is not None:
            response = PlainTextResponse(refusal + "\n", status_code=403)
        elif request.method in SAFE_METHODS and "token" in request.query_params:
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            response = RedirectResponse(request.url.path + (f"?{urlencode(rest)}" if rest else ""), status_code=303)
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict", path="/")
        if response is not None:
            await response(scope, receive, send)
            return

        async def unframed(message: Message) -> None:  # no other page may frame this one (clickjacking)
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-frame-options", b"DENY")]
            await send(message)

        await self.app(scope, receive, unframed)
