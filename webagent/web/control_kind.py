"""What an element of a page is to a person: a link, a button, a text field, a select...
and so what may be done with it (``op``: CLICK, TYPE or SELECT), from its tag, its type and
its role; a small element with a click handler counts as a control too. Also the text
helpers the agent view shares (``text``, ``words``)."""

from __future__ import annotations

import re

from lxml import etree

TEXT_INPUTS = frozenset("text search email password tel url number date datetime-local time month week".split()) | {""}
CLICK_INPUTS = frozenset("button submit reset checkbox radio image".split())
CLICK_ROLES = frozenset(
    "button link checkbox radio tab menuitem menuitemcheckbox menuitemradio option switch treeitem".split()
)
TYPE_ROLES = frozenset({"textbox", "searchbox"})
# A clickable wrapper with more words than this, or with controls inside, is a container
# (its click handler is delegated), not one control.
MAX_CONTAINER_WORDS = 12
_FIELD_KINDS = {"": "text field", "text": "text field", "search": "search field", "password": "password field"}
_WS = re.compile(r"\s+")


def text(value: str | None) -> str:
    """``value`` on one line, spaces collapsed."""
    return _WS.sub(" ", value or "").strip()


def tag(el) -> str:
    return el.tag.lower() if isinstance(el.tag, str) else ""


def words(el, skip=None) -> str:
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
    return text(" ".join(out))


def native_kind(el) -> tuple[str, str] | None:
    """(op, kind) of a form control or link, from its tag, type and role alone."""
    name = tag(el)
    if name == "select":
        return "SELECT", "select"
    if name == "textarea":
        return "TYPE", "text area"
    if name == "input":
        kind = (el.get("type") or "").lower()
        if kind in TEXT_INPUTS and "readonly" in el.attrib:  # typing fails; a click may open a picker
            return "CLICK", "read-only field"
        if kind in TEXT_INPUTS:
            return "TYPE", _FIELD_KINDS.get(kind, f"{kind} field")
        if kind in CLICK_INPUTS:
            return "CLICK", {"submit": "submit button", "reset": "button", "image": "button"}.get(kind, kind)
        return None
    role = (el.get("role") or "").lower()
    if name in ("button", "a") and role in CLICK_ROLES:
        return "CLICK", role  # <button role="switch">, <a role="button">: what a person is told it is
    if name == "button":
        return "CLICK", "submit button" if (el.get("type") or "").lower() == "submit" else "button"
    if name == "a":
        return "CLICK", "link"
    if "contenteditable" in el.attrib and (el.get("contenteditable") or "").lower() in ("true", "", "plaintext-only"):
        return "TYPE", "text area"
    if role in TYPE_ROLES:
        return "TYPE", "text field"
    if role in CLICK_ROLES:
        return "CLICK", role
    return None


def control_kind(el) -> tuple[str, str] | None:
    """(op, kind) of a control, or None: a native control, or a small element with a click
    handler (the live capture's ``is_clickable``) that holds no other control."""
    found = native_kind(el)
    if found is not None:
        return found
    name = tag(el)
    if (el.get("is_clickable") or "").lower() != "true" or name in ("html", "body", "label", "option", "form"):
        return None
    if name == "input" and (el.get("type") or "").lower() == "file":
        return None  # a click only opens the system's file picker: no action of the agent's can use it
    for inner in el.iter(tag=etree.Element):
        if inner is not el and (native_kind(inner) or (inner.get("is_clickable") or "") == "true"):
            return None
    if len(words(el).split()) > MAX_CONTAINER_WORDS:
        return None
    return "CLICK", "clickable " + name if name not in ("span", "div", "img", "li", "td") else "clickable"


def hidden(el) -> bool:
    """The live capture found no visible box for it. A checkbox or radio is kept: pages hide
    the input and draw a styled label in its place (the click reaches it by JS)."""
    if (el.get("is_visible") or "").lower() != "false":
        return False
    return not (tag(el) == "input" and (el.get("type") or "").lower() in ("checkbox", "radio"))
