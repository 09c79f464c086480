"""A control's name as a person reads it: the browser's accessible name when the live
capture has one (``ax_name``, from Chromium's accessibility tree; icon-font glyphs dropped),
else the agent's own rules: its ARIA label, its <label>, its own words or image, else the
caption beside it (the words before a field, the table header or cell next to its cell,
the words right after an unnamed checkbox, radio button or switch, else right before it),
and only then its title or form name; its ``value`` only for an input drawn as a button.
Mind2Web's pages carry no accessibility tree: they are named by the rules alone."""

from __future__ import annotations

import re

from lxml import etree

from webagent.web.control_kind import control_kind, native_kind, tag, text, words

MAX_NAME_CHARS = 80
MAX_CAPTION_WORDS = 6
# Private-use code points: icon-font glyphs (Font Awesome's U+F145...). They belong to the
# accessible name, but read as nothing to a model: the view drops them (docs/agent.md).
_PRIVATE_USE = re.compile("[\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd]")


def visible_name(name: str) -> str:
    """``name`` without icon-font glyphs (private-use code points), spaces collapsed."""
    return " ".join(_PRIVATE_USE.sub(" ", name).split())


def cut(value: str, limit: int = MAX_NAME_CHARS) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


class Names:
    """Names the controls of one page (its labels are read once)."""

    def __init__(self, root):
        by_html_id = {el.get("id"): el for el in root.iter(tag=etree.Element) if el.get("id")}
        self.label_for: dict[int, str] = {}  # id() of a control element -> its label's text
        # lxml makes a new proxy object for an element nobody holds, with a new id(): hold them.
        self.labelled: list = []
        self.heads: dict = {}  # id() of a table -> (the table, its header row and captions)
        for label in root.iter("label"):
            target = by_html_id.get(label.get("for")) if label.get("for") else None
            if target is None:
                inside = [el for el in label.iter(tag=etree.Element) if el is not label and native_kind(el)]
                target = inside[0] if len(inside) == 1 else None
            if target is not None:
                self.label_for[id(target)] = words(label, skip=lambda n: native_kind(n) is not None)
                self.labelled.append(target)

    def column(self, cell) -> str:
        """The header of a table cell's column (``column_header``), each table's read once."""
        return column_header(cell, self.heads)

    def labels(self, el) -> bool:
        """Whether ``el`` is a <label> that names a control inside it."""
        return tag(el) == "label" and any(id(n) in self.label_for for n in el.iter(tag=etree.Element))

    def name(self, el, op: str) -> str:
        """``el``'s name (see the module docstring)."""
        if accessible := visible_name(el.get("ax_name") or ""):
            return cut(accessible)
        return self.rule_name(el, op)

    def rule_name(self, el, op: str) -> str:
        """``el``'s name by the agent's own rules (where the browser gives none)."""
        field = op != "CLICK" or native_kind(el) == ("CLICK", "read-only field")  # named like a field
        for key in ("aria_label", "aria-label"):
            if text(el.get(key)):
                return cut(text(el.get(key)))
        if self.label_for.get(id(el)):
            return cut(self.label_for[id(el)])
        if op != "SELECT" and tag(el) not in ("input", "textarea"):
            if own := words(el):
                return cut(own)
            # An image link or button is named by its image's alt text (as its accessible name is).
            alts = [text(img.get("alt")) for img in el.iter("img") if text(img.get("alt"))]
            if alts:
                return cut(alts[0])
        if field and (caption := _text_before(el) or _table_caption(el, self.heads)):
            return cut(caption)
        # A toggle's caption is beside it: after it ("<input> Remember me"), else before it
        # ("<span>Email notifications</span><label class=switch><input>...</label>").
        if _is_toggle(el) and (caption := _text_after(el) or _text_before(el, after_control=False)):
            return cut(caption)
        for key in ("title", "alt", "name") if field or not names_by_value(el) else ("value", "title", "alt", "name"):
            if text(el.get(key)):
                return cut(text(el.get(key)))
        return ""


def names_by_value(el) -> bool:
    """Whether ``el``'s ``value`` attribute is its name, as the browser takes it: only for an
    input drawn as a button. A checkbox's value ("on") is what the form sends, not a name."""
    return tag(el) == "input" and (el.get("type") or "").lower() in ("submit", "button", "reset", "image")


def _text_before(el, levels: int = 2, after_control: bool = True) -> str:
    """A field's caption when no label points to it: the few words right before it in its
    parent ("Username <input>", "<span>Username</span><input>"); for a field alone in a
    wrapper, the words before the wrapper (Bootstrap's "<label>Ticket</label><div><input>",
    whose label points to an id the field does not have)."""
    previous = el.getprevious()
    while previous is not None and not isinstance(previous.tag, str):
        previous = previous.getprevious()
    parent = el.getparent()
    if previous is not None:  # a control's own words are its name, not the next field's caption
        holds_control = any(control_kind(n) is not None for n in previous.iter(tag=etree.Element))
        if holds_control and not after_control:
            return ""  # the words after another checkbox are its caption, not this one's
        caption = text(previous.tail) or ("" if holds_control else words(previous))
    else:
        caption = text(parent.text) if parent is not None else ""
        # Alone in a wordless wrapper: no other control and no words beside it (a switch's
        # empty slider is drawing, not a caption).
        alone = (
            parent is not None
            and not words(parent)
            and tag(parent) not in ("td", "th", "body", "form")
            and not any(n is not el and control_kind(n) is not None for n in parent.iter(tag=etree.Element))
        )
        if not caption and alone and levels > 0:
            return _text_before(parent, levels - 1, after_control)
    caption = caption.rstrip(":").strip()
    return caption if caption and len(caption.split()) <= MAX_CAPTION_WORDS else ""


def _is_toggle(el) -> bool:
    """A checkbox, a radio button or a switch (native or by its role)."""
    if tag(el) == "input":
        return (el.get("type") or "").lower() in ("checkbox", "radio")
    return (el.get("role") or "").lower() in ("checkbox", "radio", "switch")


def _text_after(el, levels: int = 2) -> str:
    """An unnamed checkbox's, radio button's or switch's caption, read after it as a person
    reads it: the few words right after it in its parent ("<input type=checkbox> Remember
    me", "<input><span>Remember me</span>"), the next words that belong to no other control;
    for one alone in a wordless wrapper, the words after the wrapper (a switch drawn over its
    checkbox: "<label class=switch><input><span class=slider></span></label><span>Email
    notifications</span>")."""
    caption = text(el.tail)
    if not caption:
        for following in el.itersiblings():
            if not isinstance(following.tag, str):
                caption = text(following.tail)
            elif any(control_kind(n) is not None for n in following.iter(tag=etree.Element)) or (
                tag(following) == "label" and following.get("for")
            ):
                break  # another control, or the label of another: its words are its own
            else:
                caption = words(following) or text(following.tail)
            if caption:
                break
    parent = el.getparent()
    if not caption and levels > 0 and parent is not None and tag(parent) not in ("td", "th", "body", "form"):
        others = [n for n in parent.iter(tag=etree.Element) if n is not el and control_kind(n) is not None]
        if not words(parent) and not others:
            return _text_after(parent, levels - 1)
    caption = caption.rstrip(":").strip()
    return caption if caption and len(caption.split()) <= MAX_CAPTION_WORDS else ""


def _table_caption(el, heads: dict) -> str:
    """A field's caption in a form laid out as a table: the header or cell before its cell
    in the row ("<th>Priority</th><td><select>"), else its column's header (``heads``: the
    page's cache of header rows, as for ``Names.column``)."""
    cell = next(el.iterancestors("td", "th"), None)
    if cell is None:
        return ""
    previous = cell.getprevious()
    while previous is not None and tag(previous) not in ("td", "th"):
        previous = previous.getprevious()
    if previous is not None and not any(native_kind(n) for n in previous.iter(tag=etree.Element)):
        caption = words(previous).rstrip(":*").strip()
        if caption and len(caption.split()) <= MAX_CAPTION_WORDS:
            return caption
    return column_header(cell, heads)


def column_header(cell, heads: dict) -> str:
    """The header of ``cell``'s column: the cell at the same place in the first row above it
    whose cells are all <th> ("" when there is none, or it is longer than a caption).
    ``heads`` caches each table's header row (a page reads many cells of one table)."""
    row = cell.getparent()
    table = next(cell.iterancestors("table"), None)
    if row is None or table is None:
        return ""
    if id(table) not in heads:
        heads[id(table)] = (table, _header_row(table))  # the table is held, so its id() stays its own
    header_row, captions, above = heads[id(table)][1]
    if header_row is None or header_row is row or any(r is row for r in above):
        return ""  # no header row, or this row is not below it
    return captions.get(_start(cell), "")


def _cells(row) -> list:
    return [c for c in row if tag(c) in ("td", "th")]


def _start(cell) -> int:
    """The column ``cell`` starts at (earlier cells' colspans counted)."""
    column = 0
    for c in _cells(cell.getparent()):
        if c is cell:
            return column
        column += int(c.get("colspan") or 1) if (c.get("colspan") or "1").isdigit() else 1
    return column


def _header_row(table) -> tuple:
    """(the table's first row of <th> cells, not one spanning columns, {start column: caption},
    the rows above it)."""
    above: list = []
    for row in table.iter("tr"):
        if next(row.iterancestors("table"), None) is not table:
            continue  # a row of a table inside this one
        cells = _cells(row)
        spans_all = len(cells) == 1 and (cells[0].get("colspan") or "1") != "1"  # a title or a group's row
        if cells and not spans_all and all(tag(c) == "th" for c in cells):
            captions = {}
            for c in cells:
                caption = words(c).rstrip(":*").strip()
                if caption and len(caption.split()) <= MAX_CAPTION_WORDS:
                    captions[_start(c)] = caption
            return row, captions, above
        above.append(row)
    return None, {}, above
