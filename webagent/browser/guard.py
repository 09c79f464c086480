"""Safety rules of a browser session: where top-level navigation may go, and what
must never be written down.

* ``NavigationGuard``: a top-level (main-frame) navigation is allowed only to a site in
  its allow-list: by default the start URL's host *with its port*, plus the
  ``allowed_domains`` the user named. An entry without a port (``127.0.0.1``,
  ``example.com``) allows every port of that host and its subdomains; an entry with one
  (``127.0.0.1:8000``) only that port. The default ports 80 and 443 are one site
  (``http://x``, ``http://x:80`` and ``https://x`` are the same place). An empty list
  allows no http(s) site at all (a run that starts on ``file://`` follows no link out
  unless ``--allow-domain`` names the site). ``file://`` is refused unless the start
  URL itself is a file. Sub-resources (images, scripts, iframes) may come from anywhere.
  The session applies the guard to every main-frame document request of every tab of
  its context, popups included, before the request leaves the browser (see
  ``intercept``).
* ``redact``: the one spelling of a secret in observations, results and traces.
"""

from __future__ import annotations

import re
from typing import overload
from urllib.parse import urlsplit

REDACTED = "********"
_DEFAULT_PORTS = {"http": 80, "https": 443}
_STANDARD = (80, 443)


# a secret's placeholder anywhere in a text, its name as group 1 (``placeholder``)
PLACEHOLDER = re.compile(r"<secret:([A-Za-z0-9_]+)>")


def placeholder(name: str) -> str:
    """A secret as the model reads and writes it, ``<secret:password>`` (``webagent.agent.secrets``);
    kept here, beside ``REDACTED``, so that skills and the agent share it without importing each other."""
    return f"<secret:{name}>"


def holds_placeholder(value: str) -> bool:
    """Whether ``value`` carries a secret's placeholder (the agent's, or a page's mask ``REDACTED``)."""
    return bool(PLACEHOLDER.search(value)) or REDACTED in value


@overload
def redact(value: str, secret: bool) -> str: ...
@overload
def redact(value: None, secret: bool) -> None: ...
def redact(value: str | None, secret: bool) -> str | None:
    """``value`` as it may be written anywhere: ``REDACTED`` when it is a secret
    (typed into or read from a ``type=password`` field). An empty value stays empty: an
    empty password field must read as empty, or typing into it looks like no change."""
    if not value or not secret:
        return value
    return REDACTED


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower().rstrip(".")


def _port(url: str) -> int | None:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return None
    return port if port is not None else _DEFAULT_PORTS.get(parts.scheme.lower())


def _entry(text: str) -> tuple[str, int | None] | None:
    """``(host, port or None)`` of an allow-list entry: ``host``, ``host:port``,
    ``[v6]:port`` or a URL (whose explicit port counts)."""
    text = text.strip().lower()
    if not text:
        return None
    parts = urlsplit(text if "://" in text else "//" + text)
    host = (parts.hostname or "").rstrip(".").lstrip(".")
    if not host:
        return None
    try:
        port = parts.port
    except ValueError:
        port = None
    return host, port


def _spelling(host: str, port: int | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return shown if port is None else f"{shown}:{port}"


class NavigationGuard:
    """Decides whether a top-level navigation may go to a URL."""

    def __init__(self, allowed_domains: list[str] | None = None, allow_files: bool = False):
        entries = [e for e in (_entry(d) for d in allowed_domains or []) if e is not None]
        self.entries: list[tuple[str, int | None]] = list(dict.fromkeys(entries))
        self.allowed_domains = [_spelling(h, p) for h, p in self.entries]  # as shown in a refusal
        self.allow_files = allow_files
        self.refused: list[str] = []  # every refused URL, in order
        self.reasons: list[str] = []  # and why, in the same order

    @classmethod
    def for_start_url(cls, url: str, allowed_domains: list[str] | None = None) -> NavigationGuard:
        """The default guard of a run: the start URL's host and port (plus
        ``allowed_domains``); ``file://`` only when the run starts on a file."""
        scheme = urlsplit(url).scheme.lower()
        domains = list(allowed_domains or [])
        if scheme in ("http", "https") and _host(url):
            domains.append(_spelling(_host(url), _port(url)))
        return cls(domains, allow_files=scheme == "file")

    def _allows(self, host: str, port: int | None) -> bool:
        for domain, allowed_port in self.entries:
            if not (host == domain or host.endswith("." + domain)):
                continue
            if allowed_port is None or allowed_port == port or (allowed_port in _STANDARD and port in _STANDARD):
                return True
        return False

    def why_refused(self, url: str) -> str | None:
        """``None`` when ``url`` may be opened in the main frame, else the reason."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme in ("about", "data", "blob", "javascript") or url == "about:blank":
            return None if scheme != "javascript" else "javascript: URLs are not navigations"
        if scheme == "file":
            return None if self.allow_files else f"file:// navigation is not allowed: {url}"
        if scheme not in ("http", "https"):
            return f"scheme {scheme!r} is not allowed: {url}"
        if not self.entries:
            return f"no web site is allowed in this run (name one with --allow-domain): {url}"
        host, port = _host(url), _port(url)
        if self._allows(host, port):
            return None
        return (
            f"{_spelling(host, port)} is not in the allowed domains ({', '.join(self.allowed_domains)};"
            f" --allow-domain adds one): {url}"
        )

    def check(self, url: str) -> str | None:
        """Like ``why_refused`` but records a refusal in ``refused`` and ``reasons``."""
        reason = self.why_refused(url)
        if reason is not None:
            self.refused.append(url)
            self.reasons.append(reason)
        return reason
