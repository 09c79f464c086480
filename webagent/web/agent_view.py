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
from dataclasses import dataclass, field

from lxml import etree

from webagent.html.clean import parse_cleaned
from webagent.html.dom import ID_ATTR

TEXT_INPUTS = frozenset({"", "text", "search", "email", "password", "tel", "url", "number", "date",
                         "datetime-local", "time", "month", "week"})
CLICK_INPUTS = frozenset({"button", "submit", "reset", "checkbox", "radio", "image"})
CLICK_ROLES = frozenset({"button", "link", "checkbox", "radio", "tab", "menuitem", "menuitemcheckbox",
                         "menuitemradio", "option", "switch", "treeitem"})
TYPE_ROLES = frozenset({"textbox", "searchbox"})
# A line break before and after these: everything else flows inline.
BLOCK_TAGS = frozenset({"address", "article", "aside", "blockquote", "body", "dd", "details", "dialog", "div",
                        "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3",
                        "h4", "h5", "h6", "header", "hr", "html", "li", "main", "nav", "ol", "p", "pre",
                        "section", "summary", "table", "tbody", "td", "th", "thead", "tr", "ul", "br",
                        "iframe", "caption", "legend", "label"})
# A clickable wrapper with more words than this, or with controls inside, is a container
# (its click handler is delegated), not one control.
MAX_CONTAINER_WORDS = 12
MAX_NAME_CHARS = 80
_WS = re.compile(r"\s+")
LINE_ID = re.compile(r"^\[([A-Za-z0-9_-]+)\]", re.MULTILINE)


@dataclass(frozen=True)
class Control:
    id: str
    op: str                         # CLICK | TYPE | SELECT
    kind: str                       # link, button, checkbox, text field, select, ...
    name: str = ""
    options: tuple[str, ...] = ()   # a select's option texts, in order
    value: str = ""                 # a field's text, a select's option, a checkbox's "checked"/"not checked"
    form: str = ""                  # the id of the <form> it belongs to, if any
    ancestors: tuple[str, ...] = () # ids of its nearest ancestors, parent first (a few levels)

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
        self.label_for: dict[int, str] = {}   # control element -> its label's text
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
                return "TYPE", {"": "text field", "text": "text field", "search": "search field",
                                "password": "password field"}.get(kind, f"{kind} field")
            if kind in CLICK_INPUTS:
                return "CLICK", {"submit": "submit button", "reset": "button", "image": "button"}.get(kind, kind)
            return None
        if tag == "button":
            return "CLICK", "submit button" if (el.get("type") or "").lower() == "submit" else "button"
        if tag == "a":
            return "CLICK", "link"
        if (el.get("contenteditable") or "").lower() in ("true", "", "plaintext-only") and "contenteditable" in el.attrib:
            return "TYPE", "text area"
        role = (el.get("role") or "").lower()
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
        if field and (before := self.text_before(el)):
            return _cut(before)
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
        name = self.name(el, op)
        parts = [f"[{owner}] {kind}"]
        if name:
            parts.append(_quote(name))
        if op == "SELECT":
            options = tuple(_text(" ".join(o.itertext())) for o in el.iter("option"))
            chosen = [o for o in el.iter("option") if (o.get("option_selected") or "").lower() == "true"]
            current = _text(" ".join(chosen[0].itertext())) if chosen else _text(el.get("input_value"))
            if current:
                parts.append(f"selected={_quote(current)}")
            parts.append("options: " + ", ".join(_quote(o) for o in options if o))
            self.view.controls[owner] = Control(owner, op, kind, name, tuple(o for o in options if o), current,
                                                self.form_of(el), self.ancestors_of(el))
            return " ".join(parts)
        if op == "TYPE":
            placeholder = _text(el.get("placeholder"))
            if placeholder and placeholder != name:
                parts.append(f"placeholder={_quote(_cut(placeholder))}")
            value = el.get("input_value")
            if value is None and _tag(el) not in ("input", "textarea"):
                value = _words(el)
            parts.append(f"value={_quote(_cut(_text(value), 120))}")
            if "required" in el.attrib:
                parts.append("required")
            self.view.controls[owner] = Control(owner, op, kind, name, value=_text(value), form=self.form_of(el),
                                                ancestors=self.ancestors_of(el))
            return " ".join(parts)
        state = ""
        if kind in ("checkbox", "radio") or (el.get("role") or "").lower() in ("checkbox", "radio", "switch"):
            checked = (el.get("input_checked") or el.get("aria_checked") or "").lower() == "true"
            state = "checked" if checked else "not checked"
            parts.append(state)
        if kind == "read-only field":
            parts.append(f"value={_quote(_cut(_text(el.get('input_value')), 120))}")
        if "disabled" in el.attrib:
            parts.append("disabled")
        self.view.controls[owner] = Control(owner, op, kind, name, value=state, form=self.form_of(el),
                                            ancestors=self.ancestors_of(el))
        return " ".join(parts)

    def walk(self, el, owner_above: str) -> None:
        tag = _tag(el)
        owner = el.get(ID_ATTR) or owner_above
        pieces = self.view.pieces
        block = tag in BLOCK_TAGS
        if block:
            pieces.append((owner, "\n"))
        found = self.kind(el) if el.get(ID_ATTR) else None
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


BUTTONS = ("button", "submit button")


def fold(text: str) -> str:
    """``text`` for comparing names: case and spacing aside."""
    return " ".join(text.split()).casefold()


def matching_option(options: Iterable[str], value: str) -> str | None:
    """The option text ``value`` names (exactly, or ignoring case and spacing)."""
    options = tuple(options)
    if value in options:
        return value
    return next((o for o in options if fold(o) == fold(value)), None)


# Words right before a name that turn the task against it ("do not check Newsletter").
_NEGATED = re.compile(r"(?:\bnot|\bno|\bwithout|n't|\buncheck|\bunselect|\bdeselect|\bclear)\W+(?:\w+\W+){0,2}$")


def task_names(task: str, text: str) -> bool:
    """The task names ``text`` as a whole ("the password \"AU\"" names "Password"; words
    inside other words do not count), and not right after a negation."""
    text, task = fold(text), fold(task) + " "
    return bool(text) and any(not _NEGATED.search(task[:m.start()])
                              for m in re.finditer(rf"(?<!\w){re.escape(text)}(?!\w)", task))


def named_options(task: str, control: Control) -> list[str]:
    """The options of a select the task names: by their whole text, or by their words
    outside brackets -- one word as a whole ("Express (1 day)" in "with express shipping"),
    several all of them ("Pick up in store" in "pick it up in the store")."""
    def named(option: str) -> bool:
        core = re.sub(r"\([^)]*\)", " ", option).split()
        return task_names(task, option) or (bool(core) and all(task_names(task, word) for word in core))

    return [o for o in control.options if named(o)]


_QUOTED = re.compile(r'"([^"]+)"')


def _unready(group: list[Control], task: str, all_empty: bool = True) -> bool:
    """A form that does not yet hold what the task asks for: every text field empty (a
    search for "", an order without a name; only when ``all_empty``), a field the task
    names still empty (a login with the password missing), a select not on the option the
    task names, a checkbox or radio the task names not checked."""
    fields = [c for c in group if c.op == "TYPE"]
    if all_empty and fields and not any(f.value for f in fields):
        return True
    for c in group:
        if c.op == "TYPE" and not c.value and task_names(task, c.name):
            return True
        if c.op == "SELECT" and (named := named_options(task, c)) and c.value not in named:
            return True
        if c.value == "not checked" and task_names(task, c.name):
            return True
    return False


def empty_form_submits(controls: dict[str, Control], task: str = "") -> set[str]:
    """Buttons that would send a form before it holds what the task asks for (``_unready``):
    the submit buttons of a <form>, or the only button in a parent holding fields, selects
    or checkboxes before it (a form built of divs; a button amid fields is not a form's).
    Empty fields alone hold back such a div-built form only when the task quotes text that
    no control shows yet (text to type): 'Click on the "next" button' below two unrelated
    empty fields is a click, not an empty form."""
    def is_part(c: Control) -> bool:
        return c.op in ("TYPE", "SELECT") or c.value in ("checked", "not checked")

    shown = {fold(t) for c in controls.values() for t in (c.name, c.value, *c.options)}
    to_type = any(fold(q) not in shown for q in _QUOTED.findall(task))

    order = {i: n for n, i in enumerate(controls)}  # page order
    forms: dict[str, list[Control]] = {}
    for c in controls.values():
        if is_part(c) and c.form:
            forms.setdefault(c.form, []).append(c)
    pointless = {i for i, c in controls.items()
                 if c.kind == "submit button" and c.form in forms and _unready(forms[c.form], task)}
    for i, c in controls.items():
        if c.kind not in BUTTONS or c.form or not c.ancestors or not c.ancestors[0]:
            continue
        group = c.ancestors[0]
        parts = [f for f in controls.values() if is_part(f) and group in f.ancestors]
        buttons = [b for b in controls.values() if b.kind in BUTTONS and group in b.ancestors]
        if (parts and len(buttons) == 1 and all(order[f.id] < order[i] for f in parts)
                and _unready(parts, task, all_empty=to_type)):
            pointless.add(i)
    return pointless


def line_ids(text: str) -> list[str]:
    """The control ids shown in a rendering (``[id]`` at a line's start), in order."""
    return list(dict.fromkeys(LINE_ID.findall(text)))


def view_snippets(cleaned_html: str, depth: int | str = "auto", budget_words: int = 300):
    """(snippets, view): the page cut by the DOM snippet split (same elements, same ids),
    each snippet's text rendered in the agent view; snippets with nothing to show (layout
    only) are left out and the rest numbered from 0."""
    from webagent.html import Snippet, split_snippets

    view = build_view(cleaned_html)
    snippets = []
    for snippet in split_snippets(cleaned_html, depth=depth, budget_words=budget_words):
        text = view.render(snippet.ids)
        if text:
            snippets.append(Snippet(index=len(snippets), ids=list(snippet.ids), text=text, words=len(text.split())))
    return snippets, view
