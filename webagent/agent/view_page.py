"""``webagent view URL``: a page as the model sees it.

The page is opened in the agent's own browser session (headless Chromium, the URL's host
and port allowed, as for ``webagent run``), captured once, and shown twice: the text the
model reads (the agent view, the same snippets ``webagent run`` puts in its prompt), then
each control with the role and accessible name Chromium computes for it. A control whose
name in the view is not the browser's accessible name is marked, with why: icon-font
glyphs dropped, a name cut to length, or a name from the agent's own rules where the
browser gives none. For app and task authors: a gold step's role and name are what the
browser computes, the model reads the view.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import asdict, dataclass, field

from webagent.errors import UserError
from webagent.html.clean import parse_cleaned
from webagent.html.dom import ID_ATTR
from webagent.web.agent_view import line_ids, view_snippets
from webagent.web.control_name import MAX_NAME_CHARS, cut, visible_name

WAIT_S = 10.0


@dataclass(frozen=True)
class ControlRow:
    """One control of the view beside what the browser says of it."""

    id: str
    kind: str  # the view's kind (link, button, text field, ...)
    op: str  # CLICK | TYPE | SELECT
    role: str  # Chromium's role ("" when it gives the element none of its own: a generic container)
    name: str  # the name the model reads
    accessible_name: str | None  # Chromium's accessible name (None: no role, so no name recorded)
    value: str = ""
    options: list[str] = field(default_factory=list)
    differs: str = ""  # why the name shown is not the accessible name ("" when it is)

    def line(self) -> str:
        shown = f"[{self.id}] {self.kind}" + (f" {_quote(self.name)}" if self.name else "")
        browser = f"role={self.role or '-'} name=" + (
            "-" if self.accessible_name is None else _quote(self.accessible_name, escape_glyphs=True)
        )
        return f"{'*' if self.differs else ' '} {shown}  {browser}" + (f"  ({self.differs})" if self.differs else "")


@dataclass
class PageView:
    url: str
    title: str
    text: str  # the page as the model reads it
    rows: list[ControlRow]
    frame_errors: list[str] = field(default_factory=list)

    def report(self) -> str:
        """The human-readable form ``webagent view`` prints."""
        differ = sum(1 for r in self.rows if r.differs)
        out = [
            f"URL: {self.url}",
            f"Title: {self.title}",
            "",
            "--- the page as the model reads it ---",
            self.text or "(nothing: the page shows no text and no control)",
            "",
            f"--- {len(self.rows)} controls: the name shown, then Chromium's role and accessible name ---",
            *(r.line() for r in self.rows),
        ]
        if differ:
            out.append(f"* {differ} shown under another name than the browser's accessible name (why in brackets)")
        out += [f"frame not captured: {e}" for e in self.frame_errors]
        return "\n".join(out)

    def json_lines(self) -> str:
        return "\n".join(json.dumps(asdict(r), ensure_ascii=False) for r in self.rows)


def _quote(value: str, escape_glyphs: bool = False) -> str:
    """``value`` as the view quotes it; with ``escape_glyphs``, private-use code points
    (icon-font glyphs) written as ``\\uf002`` so a terminal shows where they are."""
    quoted = json.dumps(value, ensure_ascii=False)
    if escape_glyphs:
        quoted = "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) == "Co" else c for c in quoted)
    return quoted


def why_differs(shown: str, accessible: str | None) -> str:
    """Why the name the model reads is not the browser's accessible name ("" when it is)."""
    accessible_text = " ".join((accessible or "").split())
    if shown == accessible_text:
        return ""
    if not accessible_text:
        where = "the browser gives it no role" if accessible is None else "no accessible name"
        return f"{where}: named by the agent's rules" if shown else f"{where}, and no name by the agent's rules"
    visible = visible_name(accessible_text)
    if visible != accessible_text and shown == cut(visible):
        return "icon-font glyphs dropped" + (" and cut" if len(visible) > MAX_NAME_CHARS else "")
    if shown == cut(accessible_text):
        return f"cut to {MAX_NAME_CHARS} characters"
    if not visible:
        return "the accessible name is only icon-font glyphs: named by the agent's rules"
    return "another name than the browser's"


def control_rows(cleaned_html: str, controls: dict, order: list[str]) -> list[ControlRow]:
    """A row per control, in the order of ``order`` (ids as the view shows them), then any other."""
    root = parse_cleaned(cleaned_html)
    elements = {el.get(ID_ATTR): el for el in root.iter() if isinstance(el.tag, str) and el.get(ID_ATTR)}
    rows = []
    for cid in [*order, *(c for c in controls if c not in set(order))]:
        control = controls.get(cid)
        if control is None:
            continue
        el = elements.get(cid)
        accessible = el.get("ax_name") if el is not None else None
        role = (el.get("ax_role") if el is not None else None) or control.role
        rows.append(
            ControlRow(
                id=cid,
                kind=control.kind,
                op=control.op,
                role=role or "",
                name=control.name,
                accessible_name=accessible,
                value=control.value,
                options=list(control.options),
                differs=why_differs(control.name, accessible),
            )
        )
    return rows


def page_view(url: str, title: str, cleaned_html: str, frame_errors: list[str] | None = None) -> PageView:
    """The view of a captured page: the model's text (``webagent run``'s default snippets) and its controls."""
    from webagent.agent.options import AgentOptions

    defaults = AgentOptions()
    try:
        snippets, view = view_snippets(cleaned_html, depth=defaults.depth, budget_words=defaults.budget_words)
    except UserError as exc:
        raise UserError(f"{url}: the page has nothing to show: {exc}") from None
    text = "\n".join(s.text for s in snippets)
    rows = control_rows(cleaned_html, view.controls, line_ids(text))
    return PageView(url, title, text, rows, list(frame_errors or []))


async def view_page(
    url: str,
    allow_domains: list[str] | None = None,
    wait_for_text: str | None = None,
    wait_s: float = WAIT_S,
    headed: bool = False,
) -> PageView:
    """Open ``url`` in the agent's browser session, wait for ``wait_for_text`` if given,
    capture the page and build its view."""
    from webagent.agent.episode import check_url
    from webagent.browser import BrowserSession
    from webagent.browser.errors import CaptureError
    from webagent.errors import first_line

    check_url(url, flag="", example=" (e.g. http://127.0.0.1:8000/)")
    async with BrowserSession(headed=headed, allowed_domains=list(allow_domains or [])) as browser:
        opened = await browser.open(url)
        if not opened.ok:
            why = (opened.error or "").replace(f"GOTO {url} failed: ", "").replace("Page.goto: ", "")
            raise UserError(f"cannot open {url}: {why}")
        if wait_for_text:
            try:
                await browser.page.get_by_text(wait_for_text).first.wait_for(state="visible", timeout=wait_s * 1000)
            except Exception:  # noqa: BLE001 - a timeout or a page that went away: the same for the user
                raise UserError(
                    f"--wait-for-text {wait_for_text!r}: not shown on {browser.page.url} after {wait_s:g} s"
                ) from None
            await browser.settle_any()
        try:
            obs = await browser.observe()
        except CaptureError as exc:
            raise UserError(f"cannot capture {url}: {first_line(exc)}") from None
        return page_view(obs.url, obs.title, obs.cleaned_html, obs.frame_errors)
