"""CDP ``DOMSnapshot.captureSnapshot`` result -> an lxml tree of the rendered page.

Pure data in, tree out (no browser here), so it is tested without Chromium too.

What is kept: every element that has a layout box of its own, or a kept descendant,
(``<option>``s of a kept ``<select>`` too, and a checkbox or radio button laid out with
no size, the input of a switch drawn over it), and every text node that was laid out;
not-rendered subtrees (``display:none``, ``<head>``, ``<script>``) and empty decorative
leaves (no text, no informative attribute, not interactive) are left out. Shadow
roots (open and closed) are inlined below their host, same-process iframes below
their ``<iframe>`` element; out-of-process iframes are captured separately and
handed in as ``inline``. The page's own attributes are kept (except ``style``), and
each element gets:

* ``backend_node_id``: the model-facing id, ``prefix + backendNodeId``;
* ``bounding_box_rect``: "x,y,width,height" in CSS pixels (Mind2Web's format);
* ``is_visible``: "true" when it has a box, is not ``visibility:hidden`` and not
  fully transparent;
* ``is_clickable="true"``: Chromium says it handles clicks (listener, link, form
  control) or it starts a ``cursor:pointer`` region -- but not ``html``/``body``
  nor a large container (over ``CLICKABLE_MAX_ELEMENTS`` kept elements), since
  frameworks hang their listeners on the app root and a clickable root would make
  the whole page one uncuttable snippet;
* live form state: ``input_value`` (inputs, textareas, the selected option's text
  of a ``<select>``), ``input_checked`` (checkbox, radio), ``option_selected``,
  ``input_invalid`` (the browser's validation message of a field a person sees marked
  invalid; handed in as ``invalid``).
  Password fields carry ``guard.REDACTED`` instead of their value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree

from webagent.browser.guard import redact
from webagent.html.dom import valid_xml_name

STYLES = ["display", "visibility", "opacity", "pointer-events", "cursor"]
CLICKABLE_MAX_ELEMENTS = 40
INFORMATIVE_ATTRS = frozenset(
    {"alt", "title", "aria-label", "placeholder", "name", "value", "role", "type", "label", "aria-description"}
)
INTERACTIVE = frozenset({"a", "button", "input", "select", "option", "textarea", "label", "iframe"})
_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _xml(text: str) -> str:
    return _BAD_XML.sub(" ", text) if _BAD_XML.search(text) else text


@dataclass
class Built:
    """One target's capture: its root element(s) and what each id stands for."""

    roots: list  # top-level elements (one per document root)
    elements: dict[str, tuple[int, str, bool]] = field(default_factory=dict)  # id -> (backendNodeId, tag, is_password)
    nodes: int = 0
    truncated: bool = False


def _rare_strings(rare: dict | None) -> dict[int, int]:
    if not rare:
        return {}
    return dict(zip(rare.get("index", []), rare.get("value", [])))


def _rare_bools(rare: dict | None) -> set[int]:
    return set(rare.get("index", [])) if rare else set()


class _Strings:
    """The snapshot's string table with the lookups the builder repeats, cached."""

    def __init__(self, strings: list[str]):
        self.strings = strings
        self.hidden = {k for k, v in enumerate(strings) if v in ("hidden", "collapse")}
        self.transparent = {k for k, v in enumerate(strings) if v == "0"}
        self.pointer = {k for k, v in enumerate(strings) if v == "pointer"}
        self._lower: dict[int, str] = {}
        self._safe: dict[int, str] = {}

    def lower(self, k: int) -> str:
        v = self._lower.get(k)
        if v is None:
            v = self._lower[k] = self.strings[k].lower() if k >= 0 else ""
        return v

    def safe(self, k: int) -> str:
        """XML-safe text of entry ``k`` (-1 is the empty string)."""
        v = self._safe.get(k)
        if v is None:
            v = self._safe[k] = _xml(self.strings[k]) if k >= 0 else ""
        return v


def build(
    snapshot: dict,
    prefix: str = "",
    inline: dict[int, list] | None = None,
    offset: tuple[float, float] = (0.0, 0.0),
    max_nodes: int = 30000,
    invalid: dict[int, str] | None = None,
    ax: dict[int, tuple[str, str]] | None = None,
) -> Built:
    """Build the tree of one target's snapshot (document 0 is the target's own).

    ``inline`` maps an ``<iframe>``'s backendNodeId to the element(s) captured from
    its out-of-process document. ``offset`` is added to every bounding box (the
    position of an out-of-process frame in the top viewport). ``invalid`` maps a
    field's backendNodeId to its validation message (``capture.invalid_fields``). ``ax``
    maps a backendNodeId to its accessibility role and name (``ax.ax_names``), written as
    ``ax_role`` and ``ax_name``.
    """
    docs: list[dict] = snapshot["documents"]
    out = Built(roots=[])
    if not docs:
        return out
    table = _Strings(snapshot["strings"])
    views = [_DocView(d, table) for d in docs]
    for view in views:
        view.compute_keep()
        view.invalid = invalid or {}
        view.ax = ax or {}
    out.roots = views[0].emit(0, views, prefix, inline or {}, offset, out, [max_nodes])
    return out


class _DocView:
    """Column access to one snapshot document plus the keep/size pass."""

    def __init__(self, doc: dict, table: _Strings):
        self.t = table
        nodes = doc["nodes"]
        self.parent: list[int] = nodes.get("parentIndex", [])
        self.type: list[int] = nodes.get("nodeType", [])
        self.value: list[int] = nodes.get("nodeValue", [])
        self.bid: list[int] = nodes.get("backendNodeId", [])
        self.attrs: list[list[int]] = nodes.get("attributes", [])
        self.input_value = _rare_strings(nodes.get("inputValue"))
        self.invalid: dict[int, str] = {}  # backendNodeId -> validation message (``build``'s ``invalid``)
        self.ax: dict[int, tuple[str, str]] = {}  # backendNodeId -> (role, accessible name)
        self.text_value = _rare_strings(nodes.get("textValue"))
        self.checked = _rare_bools(nodes.get("inputChecked"))
        self.selected = _rare_bools(nodes.get("optionSelected"))
        self.clickable = _rare_bools(nodes.get("isClickable"))
        self.content_doc = _rare_strings(nodes.get("contentDocumentIndex"))
        n = len(self.parent)
        self.children: list[list[int]] = [[] for _ in range(n)]
        children = self.children
        for i, p in enumerate(self.parent):
            if p >= 0:
                children[p].append(i)
        layout = doc.get("layout", {})
        index = layout.get("nodeIndex", [])
        self.bounds: dict[int, list[float]] = dict(zip(index, layout.get("bounds", [])))
        # computed styles as string-table indices, in STYLES order; -1 when not laid out
        self.vis = [-1] * n
        self.opa = [-1] * n
        self.cur = [-1] * n
        for node, style in zip(index, layout.get("styles", [])):
            if len(style) == len(STYLES):
                self.vis[node], self.opa[node], self.cur[node] = style[1], style[2], style[4]
        names = nodes.get("nodeName", [])
        lower = {k: table.lower(k) for k in set(names)}
        self.tags = [lower[k] for k in names]
        self.keep = [False] * n
        self.size = [0] * n  # kept elements in the subtree, self included

    def compute_keep(self) -> None:
        t_hidden, t_transparent = self.t.hidden, self.t.transparent
        keep_col, size_col, children, types, bounds = self.keep, self.size, self.children, self.type, self.bounds
        for i in range(len(self.parent) - 1, -1, -1):
            t = types[i]
            if t == 3:  # laid-out text, unless visibility:hidden (it still takes space)
                keep_col[i] = i in bounds and self.vis[i] not in t_hidden
                continue
            if t != 1 and t != 9 and t != 11:
                continue
            kids = False
            size = 0
            for c in children[i]:
                if keep_col[c]:
                    kids = True
                    size += size_col[c]
            if t != 1:
                keep_col[i], size_col[i] = kids, size
                continue
            if kids and self.tags[i] == "tr":
                # an empty cell of a kept row holds its column's place: without it the cells after
                # it would be read under the header of the column before
                for c in children[i]:
                    if not keep_col[c] and types[c] == 1 and self.tags[c] in ("td", "th") and c in bounds:
                        keep_col[c], size_col[c] = True, 1
                        size += 1
            keep = kids
            if not keep and i in bounds:
                tag = self.tags[i]
                rect = bounds[i]
                if rect[2] > 0 and rect[3] > 0 and self.vis[i] not in t_hidden and tag not in _NOT_CONTENT:
                    keep = (
                        tag in INTERACTIVE
                        or i in self.clickable
                        or i in self.content_doc
                        or self._informative(i)
                        or (tag in _MEDIA and self.opa[i] not in t_transparent)
                    )
                elif tag == "input" and self.vis[i] not in t_hidden and self._toggle(i):
                    # a switch drawn over its checkbox (``opacity:0; width:0``): the control
                    # a person toggles, by clicking its drawing (a JS click reaches it)
                    keep = True
            keep_col[i] = keep
            size_col[i] = size + 1 if keep else 0
        # options live in no layout box: keep them with their select.
        for i, tag in enumerate(self.tags):
            if tag == "select" and keep_col[i]:
                stack = list(children[i])
                while stack:
                    c = stack.pop()
                    if types[c] == 1 or types[c] == 3:
                        keep_col[c] = True
                        stack.extend(children[c])

    def _toggle(self, i: int) -> bool:
        """Whether element ``i`` (an ``<input>``) is a checkbox or a radio button."""
        a = self.attrs[i] if i < len(self.attrs) else ()
        lower = self.t.lower
        return any(lower(a[k]) == "type" and lower(a[k + 1]) in ("checkbox", "radio") for k in range(0, len(a) - 1, 2))

    def _informative(self, i: int) -> bool:
        a = self.attrs[i] if i < len(self.attrs) else ()
        strings, lower = self.t.strings, self.t.lower
        for k in range(0, len(a) - 1, 2):
            if lower(a[k]) in INFORMATIVE_ATTRS and strings[a[k + 1]].strip():
                return True
        return False

    def emit(self, start, views, prefix, inline, offset, out: Built, budget) -> list:
        """Elements for node ``start``'s kept subtree (a document or fragment node
        gives its children)."""
        roots: list = []  # top-level elements, each the root of its own document
        types, keep, children, safe = self.type, self.keep, self.children, self.t.safe
        stack = [(start, None)]
        while stack:
            i, parent = stack.pop()
            t = types[i]
            if t == 3:
                text = self.value[i]
                if text < 0:
                    continue
                if parent is None:
                    continue  # text outside any element (a fragment's top level)
                text = safe(text)
                if len(parent):  # after the last child element so far: its tail
                    parent[-1].tail = (parent[-1].tail or "") + text
                else:
                    parent.text = (parent.text or "") + text
                continue
            if t == 9 or t == 11:
                for c in reversed(children[i]):
                    if keep[c]:
                        stack.append((c, parent))
                continue
            if t != 1 or not keep[i]:
                continue
            out.nodes += 1
            if budget[0] <= 0:
                out.truncated = True
                continue
            budget[0] -= 1
            if parent is None:
                el = etree.Element(self._tag(i), self._attrib(i, prefix, offset, out))
                roots.append(el)
            else:
                el = etree.SubElement(parent, self._tag(i), self._attrib(i, prefix, offset, out))
            doc_index = self.content_doc.get(i)
            if doc_index is not None and 0 <= doc_index < len(views):
                # a frame's boxes are in its own viewport: shift by the iframe's position
                box = self.bounds.get(i) or (0, 0, 0, 0)
                sub_offset = (offset[0] + box[0], offset[1] + box[1])
                for root in views[doc_index].emit(0, views, prefix, inline, sub_offset, out, budget):
                    el.append(root)
            elif self.bid[i] in inline:
                for root in inline[self.bid[i]]:
                    el.append(root)
            for c in reversed(children[i]):
                if keep[c]:
                    stack.append((c, el))
        return roots

    def _tag(self, i: int) -> str:
        tag = self.tags[i]
        return tag if valid_xml_name(tag) else "span"

    def _attrib(self, i: int, prefix: str, offset, out: Built) -> dict[str, str]:
        table = self.t
        tag = self._tag(i)
        attrib: dict[str, str] = {}
        a = self.attrs[i] if i < len(self.attrs) else ()
        for k in range(0, len(a) - 1, 2):
            name = _attr_name(table, a[k])
            if name is not None:
                attrib[name] = table.safe(a[k + 1])
        is_password = tag == "input" and attrib.get("type", "").lower() == "password"
        if is_password and "value" in attrib:
            attrib["value"] = redact(attrib["value"], True)
        bid = self.bid[i]
        ident = f"{prefix}{bid}"
        attrib["backend_node_id"] = ident
        rect = self.bounds.get(i)
        if rect is not None:
            x, y, w, h = rect
            attrib["bounding_box_rect"] = f"{x + offset[0]:g},{y + offset[1]:g},{w:g},{h:g}"
            visible = w > 0 and h > 0 and self.vis[i] not in table.hidden and self.opa[i] not in table.transparent
        else:
            visible = False
        attrib["is_visible"] = "true" if visible else "false"
        if tag != "html" and tag != "body" and self.size[i] <= CLICKABLE_MAX_ELEMENTS:
            if i in self.clickable or (self.cur[i] in table.pointer and self.cur[self.parent[i]] not in table.pointer):
                attrib["is_clickable"] = "true"
        if i in self.input_value:
            attrib["input_value"] = redact(table.safe(self.input_value[i]), is_password)
        elif i in self.text_value:
            attrib["input_value"] = table.safe(self.text_value[i])
        if tag == "input":
            if attrib.get("type", "").lower() in ("checkbox", "radio"):
                attrib["input_checked"] = "true" if i in self.checked else "false"
        elif tag == "option":
            if i in self.selected:
                attrib["option_selected"] = "true"
        elif tag == "select":
            chosen = self._selected_text(i)
            if chosen is not None:
                attrib["input_value"] = chosen
        if bid in self.invalid:
            attrib["input_invalid"] = _xml(self.invalid[bid]) or "true"
        if bid in self.ax:
            role, name = self.ax[bid]
            attrib["ax_role"] = _xml(role)
            attrib["ax_name"] = _xml(name)
        out.elements[ident] = (bid, tag, is_password)
        return attrib

    def _selected_text(self, i: int) -> str | None:
        stack = list(self.children[i])
        strings = self.t.strings
        while stack:
            c = stack.pop(0)
            if self.tags[c] == "option" and c in self.selected:
                return _xml(
                    " ".join(
                        "".join(
                            strings[self.value[t]] for t in self.children[c] if self.type[t] == 3 and self.value[t] >= 0
                        ).split()
                    )
                )
            stack.extend(self.children[c])
        return None


_NOT_CONTENT = frozenset({"head", "script", "style", "noscript", "template"})
_MEDIA = frozenset({"img", "svg", "canvas", "video", "hr"})
_SKIP_ATTRS = frozenset({"style", "srcdoc"})
_NAME_CACHE: dict[str, str | None] = {}


def _attr_name(table: _Strings, k: int) -> str | None:
    """The attribute name to write for string ``k``, or ``None`` to skip it."""
    raw = table.strings[k]
    name = _NAME_CACHE.get(raw, "")
    if name == "":
        low = raw.lower()
        name = None if low in _SKIP_ATTRS or not valid_xml_name(low) else low
        if len(_NAME_CACHE) < 10000:
            _NAME_CACHE[raw] = name
    return name
