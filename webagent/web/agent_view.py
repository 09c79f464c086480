"""The live agent's view of a page: the text a small model reads, and the controls it may
act on.

Every element a user can act on stands on its own line, with its id, its kind, its
accessible name or label, its state, and for a select its options; the page's text stays
in order between them, one line per block, without layout wrappers:

    Leaf & Page
    A small bookshop for plants and travel.
    [3] search field "Search books" placeholder="title or author" value=""
    [25] button "Search"

A control's kind decides what may be done with it (``Control.op``): CLICK for links,
buttons, checkboxes, radios and elements with a click handler or a clickable role; TYPE
for text inputs, textareas and contenteditable elements; SELECT for ``<select>``, with
the option texts as the only values.

The view is built from the cleaned HTML (``Observation.cleaned_html``), so its ids are
the snippet split's ids: every piece of text is owned by one element, and
``render(view, ids)`` shows just the pieces owned by ``ids`` — one snippet's share of the
page, in page order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from lxml import etree

from webagent.html.clean import parse_cleaned
from webagent.html.dom import ID_ATTR

TEXT_INPUTS = frozenset(
    {
        "",
        "text",
        "search",
        "email",
        "password",
        "tel",
        "url",
        "number",
        "date",
        "datetime-local",
        "time",
        "month",
        "week",
    }
)
CLICK_INPUTS = frozenset({"button", "submit", "reset", "checkbox", "radio", "image"})
CLICK_ROLES = frozenset(
    {
        "button",
        "link",
        "checkbox",
        "radio",
        "tab",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "option",
        "switch",
        "treeitem",
    }
)
TYPE_ROLES = frozenset({"textbox", "searchbox"})
# A line break before and after these: everything else flows inline.
BLOCK_TAGS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "dd",
        "details",
        "dialog",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "html",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tr",
        "ul",
        "br",
        "iframe",
        "caption",
        "legend",
        "label",
    }
)
# A clickable wrapper with more words than this, or with controls inside, is a container
# (its click handler is delegated), not one control.
MAX_CONTAINER_WORDS = 12
MAX_NAME_CHARS = 80
_WS = re.compile(r"\s+")
LINE_ID = re.compile(r"^\[([A-Za-z0-9_-]+)\]", re.MULTILINE)


@dataclass(frozen=True)
class Control:
    id: str
    op: str  # CLICK | TYPE | SELECT
    kind: str  # link, button, checkbox, text field, select, ...
    name: str = ""
    options: tuple[str, ...] = ()  # a select's option texts, in order
    value: str = ""  # a field's text, a select's option, a checkbox's "checked"/"not checked"
    form: str = ""  # the id of the <form> it belongs to, if any
    ancestors: tuple[str, ...] = ()  # ids of its nearest ancestors, parent first (a few levels)
    disabled: bool = False  # shown, but nothing can be done with it

    def describe(self) -> str:
        """``[link]  Night Trains``: the short form used in histories and records."""
        return f"[{self.kind}]  {self.name}".rstrip()


@dataclass
class AgentView:
    pieces: list[tuple[str, str]] = field(default_factory=list)  # (owner id, text or "\n")
    controls: dict[str, Control] = field(default_factory=dict)

    def render(self, ids: Iterable[str] | None = None) -> str:
        """The lines owned by ``ids`` (all of them when None), in page order."""
        keep = None if ids is None else set(ids)
        lines: list[str] = []
        current: list[str] = []
        for owner, text in self.pieces:
            if text == "\n":
                if current:
                    lines.append(" ".join(current))
                    current = []
            elif keep is None or owner in keep:
                current.append(text)
        if current:
            lines.append(" ".join(current))
        return "\n".join(line for line in lines if line.strip())


def _text(value: str | None) -> str:
    return _WS.sub(" ", value or "").strip()


def _cut(text: str, limit: int = MAX_NAME_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _quote(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'


def _flags(el) -> list[str]:
    """A control's state as a person sees it, from its live attributes (ARIA states are
    set by the page's scripts, so the capture reads them as they are now)."""

    def aria(name: str) -> str:  # aria_pressed in cleaned HTML (aria-pressed as written in a page)
        return (el.get(f"aria_{name}") or el.get(f"aria-{name}") or "").lower()

    flags = []
    for attr, on, off in (
        ("pressed", "pressed", "not pressed"),
        ("expanded", "expanded", "collapsed"),
        ("selected", "selected", None),
    ):
        value = aria(attr)
        if value in ("true", "mixed"):
            flags.append(on)
        elif value == "false" and off:
            flags.append(off)
    if "required" in el.attrib or aria("required") == "true":
        flags.append("required")
    if aria("invalid") in ("true", "grammar", "spelling"):
        flags.append("invalid")
    if "disabled" in el.attrib or aria("disabled") == "true":
        flags.append("disabled")
    return flags


def _hidden(el) -> bool:
    """The live capture found no visible box for it. A checkbox or radio is kept: pages hide
    the input and draw a styled label in its place (the click reaches it by JS)."""
    if (el.get("is_visible") or "").lower() != "false":
        return False
    return not (_tag(el) == "input" and (el.get("type") or "").lower() in ("checkbox", "radio"))


def _tag(el) -> str:
    return el.tag.lower() if isinstance(el.tag, str) else ""


def _words(el, skip=None) -> str:
    """All text under ``el``, except under elements for which ``skip`` is true."""
    out: list[str] = []

    def walk(node):
        if skip is not None and node is not el and skip(node):
            if node.tail:
                out.append(node.tail)
            return
        if node.text:
            out.append(node.text)
        for child in node:
            if isinstance(child.tag, str):
                walk(child)
            elif child.tail:
                out.append(child.tail)
        if node is not el and node.tail:
            out.append(node.tail)

    walk(el)
    return _text(" ".join(out))


class _Builder:
    def __init__(self, root):
        self.root = root
        self.view = AgentView()
        self.by_html_id = {el.get("id"): el for el in root.iter(tag=etree.Element) if el.get("id")}
        self.label_for: dict[int, str] = {}  # control element -> its label's text
        # lxml makes a new proxy object for an element nobody holds, with a new id(): hold them.
        self.labelled: list = []
        for label in root.iter("label"):
            target = self.by_html_id.get(label.get("for")) if label.get("for") else None
            if target is None:
                inside = [el for el in label.iter(tag=etree.Element) if el is not label and self.native_kind(el)]
                target = inside[0] if len(inside) == 1 else None
            if target is not None:
                self.label_for[id(target)] = _words(label, skip=lambda n: self.native_kind(n) is not None)
                self.labelled.append(target)

    # --- what an element is -------------------------------------------------------------
    @staticmethod
    def native_kind(el) -> tuple[str, str] | None:
        """(op, kind) of a form control or link, from its tag and type alone."""
        tag = _tag(el)
        if tag == "select":
            return "SELECT", "select"
        if tag == "textarea":
            return "TYPE", "text area"
        if tag == "input":
            kind = (el.get("type") or "").lower()
            if kind in TEXT_INPUTS and "readonly" in el.attrib:  # typing fails; a click may open a picker
                return "CLICK", "read-only field"
            if kind in TEXT_INPUTS:
                return "TYPE", {
                    "": "text field",
                    "text": "text field",
                    "search": "search field",
                    "password": "password field",
                }.get(kind, f"{kind} field")
            if kind in CLICK_INPUTS:
                return "CLICK", {"submit": "submit button", "reset": "button", "image": "button"}.get(kind, kind)
            return None
        role = (el.get("role") or "").lower()
        if tag in ("button", "a") and role in CLICK_ROLES:
            return "CLICK", role  # <button role="switch">, <a role="button">: what a person is told it is
        if tag == "button":
            return "CLICK", "submit button" if (el.get("type") or "").lower() == "submit" else "button"
        if tag == "a":
            return "CLICK", "link"
        if (el.get("contenteditable") or "").lower() in (
            "true",
            "",
            "plaintext-only",
        ) and "contenteditable" in el.attrib:
            return "TYPE", "text area"
        if role in TYPE_ROLES:
            return "TYPE", "text field"
        if role in CLICK_ROLES:
            return "CLICK", role
        return None

    def kind(self, el) -> tuple[str, str] | None:
        found = self.native_kind(el)
        if found is not None:
            return found
        tag = _tag(el)
        if (el.get("is_clickable") or "").lower() != "true" or tag in ("html", "body", "label", "option", "form"):
            return None
        # A click handler on a wrapper: a control only when it is small and holds no other control.
        for inner in el.iter(tag=etree.Element):
            if inner is not el and (self.native_kind(inner) or (inner.get("is_clickable") or "") == "true"):
                return None
        if len(_words(el).split()) > MAX_CONTAINER_WORDS:
            return None
        return "CLICK", "clickable " + tag if tag not in ("span", "div", "img", "li", "td") else "clickable"

    def name(self, el, op: str) -> str:
        field = op != "CLICK" or self.native_kind(el) == ("CLICK", "read-only field")  # named like a field
        for key in ("aria_label", "aria-label"):
            if _text(el.get(key)):
                return _cut(_text(el.get(key)))
        if id(el) in self.label_for and self.label_for[id(el)]:
            return _cut(self.label_for[id(el)])
        if op != "SELECT" and _tag(el) not in ("input", "textarea"):
            text = _words(el)
            if text:
                return _cut(text)
            # An image link or button is named by its image's alt text (as its accessible name is).
            alts = [_text(img.get("alt")) for img in el.iter("img") if _text(img.get("alt"))]
            if alts:
                return _cut(alts[0])
        if field and (before := self.text_before(el)):
            return _cut(before)
        if field and (caption := self.table_caption(el)):
            return _cut(caption)
        for key in ("title", "alt", "name") if field else ("value", "title", "alt", "name"):
            if _text(el.get(key)):
                return _cut(_text(el.get(key)))
        return ""

    def text_before(self, el) -> str:
        """A field's caption when no label points to it: the few words right before it in
        its parent ("Username <input>", "<label>Username</label><input>")."""
        previous = el.getprevious()
        while previous is not None and not isinstance(previous.tag, str):
            previous = previous.getprevious()
        if previous is not None:  # a control's own words are its name, not the next field's caption
            text = _text(previous.tail) or ("" if self.kind(previous) is not None else _words(previous))
        else:
            parent = el.getparent()
            text = _text(parent.text) if parent is not None else ""
        text = text.rstrip(":").strip()
        return text if text and len(text.split()) <= 6 else ""

    def table_caption(self, el) -> str:
        """A field's caption in a form laid out as a table: the header or cell before its
        cell in the row ("<th>Priority</th><td><select>"), else its column's header."""
        cell = next(el.iterancestors("td", "th"), None)
        if cell is None:
            return ""
        previous = cell.getprevious()
        while previous is not None and _tag(previous) not in ("td", "th"):
            previous = previous.getprevious()
        if previous is not None and not any(self.native_kind(n) for n in previous.iter(tag=etree.Element)):
            text = _words(previous).rstrip(":*").strip()
            if text and len(text.split()) <= 6:
                return text
        row = cell.getparent()
        table = next(cell.iterancestors("table"), None)
        if row is None or table is None:
            return ""
        column = [c for c in row if _tag(c) in ("td", "th")].index(cell)
        for header_row in table.iter("tr"):
            heads = [c for c in header_row if _tag(c) in ("td", "th")]
            if header_row is not row and heads and all(_tag(c) == "th" for c in heads) and column < len(heads):
                text = _words(heads[column]).rstrip(":*").strip()
                return text if len(text.split()) <= 6 else ""
            if header_row is row:
                break
        return ""

    # --- the walk -----------------------------------------------------------------------
    @staticmethod
    def ancestors_of(el, levels: int = 4) -> tuple[str, ...]:
        return tuple(a.get(ID_ATTR) or "" for a, _ in zip(el.iterancestors(), range(levels)))

    @staticmethod
    def form_of(el) -> str:
        for ancestor in el.iterancestors("form"):
            return ancestor.get(ID_ATTR) or ""
        return ""

    def control_line(self, el, owner: str, op: str, kind: str) -> str:
        line = self._control_line(el, owner, op, kind)
        if "disabled" in _flags(el):
            self.view.controls[owner] = replace(self.view.controls[owner], disabled=True)
        return line

    def _control_line(self, el, owner: str, op: str, kind: str) -> str:
        name = self.name(el, op)
        parts = [f"[{owner}] {kind}"]
        if name:
            parts.append(_quote(name))
        if op == "SELECT":
            options = tuple(_text(" ".join(o.itertext())) for o in el.iter("option"))
            # The live choice (the browser's, captured as the select's input_value) before any
            # option's HTML `selected`: a server-rendered default stays marked after a SELECT.
            chosen = [o for o in el.iter("option") if (o.get("option_selected") or "").lower() == "true"]
            current = _text(el.get("input_value")) or (_text(" ".join(chosen[0].itertext())) if chosen else "")
            if current:
                parts.append(f"selected={_quote(current)}")
            parts.append("options: " + ", ".join(_quote(o) for o in options if o))
            parts += _flags(el)
            self.view.controls[owner] = Control(
                owner, op, kind, name, tuple(o for o in options if o), current, self.form_of(el), self.ancestors_of(el)
            )
            return " ".join(parts)
        if op == "TYPE":
            placeholder = _text(el.get("placeholder"))
            if placeholder and placeholder != name:
                parts.append(f"placeholder={_quote(_cut(placeholder))}")
            value = el.get("input_value")
            if value is None and _tag(el) not in ("input", "textarea"):
                value = _words(el)
            parts.append(f"value={_quote(_cut(_text(value), 120))}" if _text(value) else "empty")
            parts += _flags(el)
            self.view.controls[owner] = Control(
                owner, op, kind, name, value=_text(value), form=self.form_of(el), ancestors=self.ancestors_of(el)
            )
            return " ".join(parts)
        state = ""
        aria_checked = (el.get("aria_checked") or el.get("aria-checked") or "").lower()
        if (
            kind in ("checkbox", "radio")
            or (el.get("role") or "").lower() in ("checkbox", "radio", "switch")
            or (aria_checked in ("true", "false", "mixed"))
        ):
            checked = (el.get("input_checked") or aria_checked).lower() == "true"
            state = "checked" if checked else "not checked"
            parts.append(state)
        if kind == "read-only field":
            parts.append(f"value={_quote(_cut(_text(el.get('input_value')), 120))}")
        parts += _flags(el)
        self.view.controls[owner] = Control(
            owner, op, kind, name, value=state, form=self.form_of(el), ancestors=self.ancestors_of(el)
        )
        return " ".join(parts)

    def walk(self, el, owner_above: str) -> None:
        tag = _tag(el)
        owner = el.get(ID_ATTR) or owner_above
        pieces = self.view.pieces
        block = tag in BLOCK_TAGS
        if block:
            pieces.append((owner, "\n"))
        found = self.kind(el) if el.get(ID_ATTR) else None
        if found is not None and _hidden(el):
            found = None  # hidden (display:none, no box): nothing a person can act on; its text stays
        if found is not None:
            op, kind = found
            pieces.append((owner, "\n"))
            pieces.append((owner, self.control_line(el, owner, op, kind)))
            pieces.append((owner, "\n"))
        elif tag == "option":
            pass  # shown with its select
        elif tag == "label" and any(id(n) in self.label_for for n in el.iter(tag=etree.Element)):
            # The label's own words name its control: show only the elements inside.
            for child in el:
                if isinstance(child.tag, str):
                    self.walk(child, owner)
        else:
            if _text(el.text):
                pieces.append((owner, _text(el.text)))
            for child in el:
                if isinstance(child.tag, str):
                    self.walk(child, owner)
                if _text(child.tail):
                    pieces.append((owner, _text(child.tail)))
        if block:
            pieces.append((owner, "\n"))


def build_view(cleaned_html: str) -> AgentView:
    """The agent view of a cleaned page (see the module docstring)."""
    root = parse_cleaned(cleaned_html)
    builder = _Builder(root)
    builder.walk(root, root.get(ID_ATTR) or "")
    return builder.view


def fold(text: str) -> str:
    """``text`` for comparing names: case and spacing aside."""
    return " ".join(text.split()).casefold()


def matching_option(options: Iterable[str], value: str) -> str | None:
    """The option text ``value`` names (exactly, or ignoring case and spacing)."""
    options = tuple(options)
    if value in options:
        return value
    return next((o for o in options if fold(o) == fold(value)), None)


def line_ids(text: str) -> list[str]:
    """The control ids shown in a rendering (``[id]`` at a line's start), in order."""
    return list(dict.fromkeys(LINE_ID.findall(text)))


def view_snippets(cleaned_html: str, depth: int | str = "auto", budget_words: int = 300):
    """(snippets, view): the page cut by the DOM snippet split (same elements, same ids),
    each snippet's text rendered in the agent view; snippets with nothing to show (layout
    only) are left out and the rest numbered from 0."""
    from webagent.html import Snippet, split_snippets

    view = build_view(cleaned_html)
    snippets: list[Snippet] = []
    for snippet in split_snippets(cleaned_html, depth=depth, budget_words=budget_words):
        text = view.render(snippet.ids)
        if text:
            snippets.append(Snippet(index=len(snippets), ids=list(snippet.ids), text=text, words=len(text.split())))
    return snippets, view
