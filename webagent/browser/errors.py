"""The browser layer's errors, in a module of their own so that session, capture and
intercept can all raise and catch them without importing each other."""

from __future__ import annotations

from webagent.errors import RuntimeFailure, UserError


class BrowserError(UserError):
    """The browser cannot be started or reached."""


class CaptureError(RuntimeFailure):
    """The page itself could not be captured (crashed, closed, or too slow)."""


class SharedTargetError(RuntimeFailure):
    """A frame rendered in its parent's process has no CDP session of its own
    (``BrowserSession.cdp_session`` raises it; its content is in the parent's snapshot)."""
