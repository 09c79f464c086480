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
the option texts as the only values (an option of an ``<optgroup>`` as "group / text").

The view is built from the cleaned HTML (``Observation.cleaned_html``), so its ids are
the snippet split's ids: every piece of text is owned by one element, and
``render(view, ids)`` shows just the pieces owned by ``ids`` — one snippet's share of the
page, in page order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from webagent.html.clean import parse_cleaned
from webagent.html.dom import BLOCK_TAGS, ID_ATTR
from webagent.web.control_kind import control_kind, hidden, tag, text, words
from webagent.web.control_name import Names, cut

LINE_ID = re.compile(r"^\[([A-Za-z0-9_-]+)\]", re.MULTILINE)
# A line's id and the spaces after it, or the "[]" left where ids were masked: what is cut to
# read a control's line as the page's words (a task or an answer never holds the view's numbering).
ID_PREFIX = re.compile(r"^\[[A-Za-z0-9_-]*\][ \t]*", re.MULTILINE)
# Between an <optgroup>'s label and an option's text in the option as shown ("Lyon / Airport").
GROUP_SEP = " / "


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
    role: str = ""  # the browser's accessibility role (a live page's ``ax_role``; "" on Mind2Web's)
    named: bool = True  # a field with a name: its <form> sends its value (a script's field has none)
    submits: bool = False  # a button that sends its <form>: type submit (or none, for a <button>), image

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
        for owner, piece in self.pieces:
            if piece == "\n":
                if current:
                    lines.append(" ".join(current))
                    current = []
            elif keep is None or owner in keep:
                current.append(piece)
        if current:
            lines.append(" ".join(current))
        return "\n".join(line for line in lines if line.strip())


def _quote(value: str) -> str:
    """``value`` in double quotes, a quote inside it escaped (``"_(\\"Add\\")"``), as JSON writes it."""
    return json.dumps(value, ensure_ascii=False)


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
    if el.get("input_invalid"):  # the browser's own message, as it shows it in its bubble
        message = el.get("input_invalid")
        flags.append("invalid" + (f" ({_quote(cut(message, 120))})" if message != "true" else ""))
    elif aria("invalid") in ("true", "grammar", "spelling"):
        flags.append("invalid")
    if "disabled" in el.attrib or aria("disabled") == "true":
        flags.append("disabled")
    return flags


def _option_entries(select) -> list[tuple]:
    """(option, its own text, its text as shown and offered) for each option of ``select``
    with words: an option inside an ``<optgroup>`` reads "group / text" ("Lyon / Airport"),
    as a person sees it listed under its group."""
    entries = []
    for option in select.iter("option"):
        own = text(" ".join(option.itertext()))
        if not own:
            continue
        group = option.getparent()
        label = text(group.get("label")) if group is not None and tag(group) == "optgroup" else ""
        entries.append((option, own, f"{label}{GROUP_SEP}{own}" if label else own))
    return entries


def _state(el, op: str, kind: str, name: str) -> tuple[list[str], str, tuple[str, ...]]:
    """(the words after a control's name, its value as ``Control.value``, a select's options):
    the live state, never the HTML attribute the page loaded with."""
    if op == "SELECT":
        entries = _option_entries(el)
        options = tuple(shown for _, _, shown in entries)
        # The live choice (the browser's, captured as the select's input_value) before any
        # option's HTML `selected`: a server-rendered default stays marked after a SELECT.
        # Among options of the same text (in different groups), the one marked selected.
        chosen = [e for e in entries if (e[0].get("option_selected") or "").lower() == "true"]
        live = text(el.get("input_value"))
        if live:
            same = [e for e in chosen if e[1] == live] or [e for e in entries if live in (e[1], e[2])]
            current = same[0][2] if same else live
        else:
            current = chosen[0][2] if chosen else ""
        shown = [f"selected={_quote(current)}"] if current else []
        return shown + ["options: " + ", ".join(_quote(o) for o in options)], current, options
    if op == "TYPE":
        placeholder = text(el.get("placeholder"))
        shown = [f"placeholder={_quote(cut(placeholder))}"] if placeholder and placeholder != name else []
        value = el.get("input_value")
        value = text(words(el) if value is None and tag(el) not in ("input", "textarea") else value)
        return shown + [f"value={_quote(cut(value, 120))}" if value else "empty"], value, ()
    aria_checked = (el.get("aria_checked") or el.get("aria-checked") or "").lower()
    shown, state = [], ""
    if (
        kind in ("checkbox", "radio")
        or (el.get("role") or "").lower() in ("checkbox", "radio", "switch")
        or (aria_checked in ("true", "false", "mixed"))
    ):
        state = "checked" if (el.get("input_checked") or aria_checked).lower() == "true" else "not checked"
        shown.append(state)
    if kind == "read-only field":
        shown.append(f"value={_quote(cut(text(el.get('input_value')), 120))}")
    return shown, state, ()


def _is_control(el) -> bool:
    return bool(el.get(ID_ATTR)) and control_kind(el) is not None


def _labelled_cell(cell, head: str) -> bool:
    """Whether a table cell's line starts with its column's header: it has a header, words of
    its own besides its controls', other than the header's, and no lines of its own inside."""
    if not head or any(tag(d) in BLOCK_TAGS for d in cell.iterdescendants()):
        return False
    return words(cell, skip=_is_control) not in ("", head)


def _submits(el) -> bool:
    """Whether clicking ``el`` sends its form, as HTML says: ``<input type=submit|image>``, a
    ``<button>`` whose type is submit, missing or unknown (not "button" or "reset")."""
    kind = (el.get("type") or "").lower()
    if tag(el) == "input":
        return kind in ("submit", "image")
    return tag(el) == "button" and kind not in ("button", "reset")


class _Builder:
    def __init__(self, root):
        self.view = AgentView()
        self.names = Names(root)

    def control_line(self, el, owner: str, op: str, kind: str) -> str:
        """The control's line (``[id] kind "name" state``); records its ``Control``."""
        name = self.names.name(el, op)
        shown, value, options = _state(el, op, kind, name)
        flags = _flags(el)
        self.view.controls[owner] = Control(
            owner,
            op,
            kind,
            name,
            options,
            value,
            form=next((f.get(ID_ATTR) or "" for f in el.iterancestors("form")), ""),
            ancestors=tuple(a.get(ID_ATTR) or "" for a, _ in zip(el.iterancestors(), range(4))),
            disabled="disabled" in flags,
            role=el.get("ax_role") or "",
            named=bool(el.get("name")),
            submits=_submits(el),
        )
        return " ".join([f"[{owner}] {kind}", *([_quote(name)] if name else []), *shown, *flags])

    def walk(self, el, owner_above: str) -> None:
        name = tag(el)
        owner = el.get(ID_ATTR) or owner_above
        pieces = self.view.pieces
        block = name in BLOCK_TAGS
        if block:
            pieces.append((owner, "\n"))
        if name == "td" and _labelled_cell(el, head := self.names.column(el)):
            pieces.append((owner, head + ":"))  # the cell's column, as its header shows a person
        found = control_kind(el) if el.get(ID_ATTR) else None
        if found is not None and hidden(el):
            found = None  # hidden (display:none, no box): nothing a person can act on; its text stays
        if found is not None:
            pieces += [(owner, "\n"), (owner, self.control_line(el, owner, *found)), (owner, "\n")]
        elif name != "option":  # an option is shown with its select
            # A label's own words name its control: only the elements inside it are shown.
            own_words = not self.names.labels(el)
            if own_words and text(el.text):
                pieces.append((owner, text(el.text)))
            for child in el:
                if isinstance(child.tag, str):
                    self.walk(child, owner)
                if own_words and text(child.tail):
                    pieces.append((owner, text(child.tail)))
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
    """The option text ``value`` names (exactly, or ignoring case and spacing), or an option
    of a group named by its own text alone when no other group has it ("Part-Dieu" for
    "Lyon / Part-Dieu"; "Airport" under three cities names none: ``grouped_options``)."""
    options = tuple(options)
    if value in options:
        return value
    found = next((o for o in options if fold(o) == fold(value)), None)
    if found is None and len(grouped := grouped_options(options, value)) == 1:
        found = grouped[0]
    if found is None and len(listed := [o for o in options if fold(_unnumbered(o)) == fold(value)]) == 1:
        found = listed[0]
    return found


_LIST_NUMBER = re.compile(r"^\s*\d+\s*[.)]\s+(?=\S)")


def _unnumbered(option: str) -> str:
    """An option's text without a list number before it ("High" for "2. High")."""
    return _LIST_NUMBER.sub("", option)


def option_names(options: Iterable[str]) -> list[str]:
    """What a reply may name an option by: its text, or its text without a list number when
    no other option shares that ("High" for "2. High"; a person says "priority High", and a
    small model held to "2. High" chose the option already selected). ``matching_option``
    maps each back to its option."""
    options = list(options)
    bare = [_unnumbered(o) for o in options]
    return options + [b for b, o in zip(bare, options) if b != o and bare.count(b) == 1 and b not in options]


def grouped_options(options: Iterable[str], value: str) -> list[str]:
    """The options shown as "group / ``value``" (``value`` an option's own text)."""
    tail = fold(GROUP_SEP + value)
    return [o for o in options if fold(o).endswith(tail)] if value.strip() else []


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
