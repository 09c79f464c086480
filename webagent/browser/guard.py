"""Safety rules of a browser session: where top-level navigation may go, and what
must never be written down.

* ``NavigationGuard``: a top-level (main-frame) navigation is allowed only to a host
  in ``allowed_domains`` or one of their subdomains; by default that is the start
  URL's host. Sub-resources (images, scripts, iframes) may come from anywhere.
  ``file://`` is refused unless the start URL itself is a file. The session applies
  the guard to every main-frame document request (CDP ``Fetch`` pauses document
  requests), so a link, a redirect or a script navigating away is refused and
  reported, not followed. One gap: the first request of a tab opened with
  ``target=_blank`` comes before the tab's interception is set; such a tab is closed
  as soon as the action ends (and a page that somehow landed outside is sent back), so
  the agent never observes or acts there.
* ``redact``: the one spelling of a secret in observations, results and traces.
"""

from __future__ import annotations

from urllib.parse import urlsplit

REDACTED = "********"


def redact(value: str | None, secret: bool) -> str | None:
    """``value`` as it may be written anywhere: ``REDACTED`` when it is a secret
    (typed into or read from a ``type=password`` field)."""
    if value is None or not secret:
        return value
    return REDACTED


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower().rstrip(".")


class NavigationGuard:
    """Decides whether a top-level navigation may go to a URL."""

    def __init__(self, allowed_domains: list[str] | None = None, allow_files: bool = False):
        self.allowed_domains = [d.lower().strip().lstrip(".") for d in allowed_domains or [] if d.strip()]
        self.allow_files = allow_files
        self.refused: list[str] = []  # every refused URL, in order

    @classmethod
    def for_start_url(cls, url: str, allowed_domains: list[str] | None = None) -> "NavigationGuard":
        """The default guard of a run: the start URL's host (plus ``allowed_domains``);
        ``file://`` only when the run starts on a file."""
        scheme = urlsplit(url).scheme.lower()
        domains = list(allowed_domains or [])
        if scheme in ("http", "https") and _host(url):
            domains.append(_host(url))
        return cls(domains, allow_files=scheme == "file")

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
        if not self.allowed_domains:
            return None
        host = _host(url)
        for domain in self.allowed_domains:
            if host == domain or host.endswith("." + domain):
                return None
        return f"{host} is not in the allowed domains ({', '.join(self.allowed_domains)}): {url}"

    def check(self, url: str) -> str | None:
        """Like ``why_refused`` but records a refusal in ``refused``."""
        reason = self.why_refused(url)
        if reason is not None:
            self.refused.append(url)
        return reason
