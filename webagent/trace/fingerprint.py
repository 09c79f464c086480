"""What an element is, written so that it can be found again in another browser session
(where backend node ids mean nothing): its tag and role, accessible name, label, stable
attributes, the landmarks around it (enclosing form, nearest heading above, landmark
ancestors) and its place among similar elements; plus the page it was on.

    fp = fingerprint_of(obs, "57")          # from an Observation's raw_html
    fp.name, fp.attrs["name"], fp.form, fp.heading, fp.nth, fp.page

Everything comes from ``Observation.raw_html`` (every rendered element with its own
attributes and ``backend_node_id``). Input values are never part of a fingerprint.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urlsplit

from lxml import etree
from pydantic import BaseModel, ConfigDict, Field

from webagent.web.control_name import visible_name

STABLE_ATTRS = ("name", "id", "placeholder", "href", "type", "aria-label", "role", "title", "alt")
LANDMARK_TAGS = ("header", "nav", "main", "aside", "footer", "form", "section", "dialog")
_HEADINGS = "h1 or self::h2 or self::h3 or self::h4 or self::h5 or self::h6"
TEXT_INPUTS = ("", "text", "search", "email", "password", "tel", "url", "number")
_SKIP_IN_LABEL = ("select", "textarea", "option", "script", "style")
MAX_TEXT = 80


class PageRef(BaseModel):
    """A page as a recording keeps it: its address, what identifies it across runs
    (``url_pattern``) and its title."""

    model_config = ConfigDict(extra="forbid")
    url: str = ""
    pattern: str = ""
    title: str = ""


class Place(BaseModel):
    """An element's place among elements like it: [index, count] among those of its tag and
    role, and among those that also share its name (the 2nd of 3 "Add to cart")."""

    model_config = ConfigDict(extra="forbid")
    of_kind: list[int] = Field(default_factory=list)
    of_name: list[int] = Field(default_factory=list)


class Fingerprint(BaseModel):
    """What an element is (see the module docstring); ``nth`` and ``page`` only when taken from
    a whole page (``fingerprint_of``), not for a candidate being scored (``describe_element``)."""

    model_config = ConfigDict(extra="forbid")
    tag: str = ""
    role: str = ""
    name: str = ""
    text: str = ""
    label: str = ""
    attrs: dict[str, str] = Field(default_factory=dict)
    form: dict[str, str] = Field(default_factory=dict)
    heading: str = ""
    landmarks: list[str] = Field(default_factory=list)
    nth: Place | None = None
    page: PageRef | None = None


def squash(text: str | None) -> str:
    return " ".join((text or "").split())


def _cut(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[:limit]


@lru_cache(maxsize=8)
def parse(html: str):
    # The bytes handed to lxml are UTF-8: say so, or libxml2 reads them as Latin-1
    # ("José" -> "JosÃ©", an icon glyph -> "ï\x82°").
    return etree.fromstring(html.encode("utf-8", errors="replace"), etree.HTMLParser(encoding="utf-8"))


def element(html: str, element_id: str):
    if not html or not element_id:
        return None
    found = parse(html).xpath("//*[@backend_node_id=$i]", i=element_id)
    return found[0] if found else None


def role_of(el) -> str:
    if el.get("role"):
        return el.get("role").strip().lower()
    tag = el.tag if isinstance(el.tag, str) else ""
    if tag == "input":
        kind = (el.get("type") or "").lower()
        if kind in TEXT_INPUTS:
            return "searchbox" if kind == "search" else "textbox"
        return {"submit": "button", "button": "button", "reset": "button", "image": "button"}.get(kind, kind)
    return {
        "a": "link",
        "button": "button",
        "select": "combobox",
        "textarea": "textbox",
        "option": "option",
        "img": "img",
    }.get(tag, tag)


def _text(el, skip=_SKIP_IN_LABEL) -> str:
    """The element's text, leaving out the option lists and fields inside it."""
    parts: list[str] = []

    def walk(node):
        if node.text:
            parts.append(node.text)
        for child in node:
            if isinstance(child.tag, str) and child.tag not in skip:
                walk(child)
            if child.tail:
                parts.append(child.tail)

    walk(el)
    return squash(" ".join(parts))


def label_of(el) -> str:
    """The text of the ``<label>`` around the element or pointing at it (``for``)."""
    for parent in el.iterancestors():
        if parent.tag == "label":
            return _cut(_text(parent))
    if (own_id := el.get("id")) and (found := el.getroottree().xpath("//label[@for=$i]", i=own_id)):
        return _cut(_text(found[0]))
    return ""


def name_of(el, label: str = "") -> str:
    """Accessible name: the browser's own (``ax_name``, from the live capture's accessibility
    tree; icon-font glyphs dropped), else roughly as a screen reader has it: aria-label, the
    label, the text (links, buttons), then placeholder / title / alt / a button's value."""
    if accessible := visible_name(el.get("ax_name") or ""):
        return _cut(accessible)
    if el.get("aria-label"):
        return _cut(squash(el.get("aria-label")))
    tag = el.tag
    kind = (el.get("type") or "").lower()
    if tag in ("input", "select", "textarea") and label:
        return label
    if tag == "input" and kind in ("submit", "button", "reset") and el.get("value"):
        return _cut(squash(el.get("value")))
    if tag not in ("input", "select", "textarea") and (text := _text(el)):
        return _cut(text)
    for attr in ("placeholder", "title", "alt"):
        if el.get(attr):
            return _cut(squash(el.get(attr)))
    return ""


def href_path(href: str | None) -> str:
    """The path of a link without its host and query (``/shop/order.html`` from
    ``http://x/shop/order.html?item=b6``; relative hrefs stay relative)."""
    if not href:
        return ""
    parts = urlsplit(href)
    return parts.path or ("#" + parts.fragment if parts.fragment else "")


def url_pattern(url: str) -> str:
    """What identifies a page across runs: its path and the names of its query
    parameters (``/results.html?q``), not the host (a demo server's port changes)."""
    parts = urlsplit(url)
    keys = sorted({k.split("=", 1)[0] for k in parts.query.split("&") if k})
    return (parts.path or "/") + ("?" + "&".join(keys) if keys else "")


def _form_of(el) -> dict:
    form = next((parent for parent in el.iterancestors() if parent.tag == "form"), None)
    if form is None:
        return {}
    found = {"action": href_path(form.get("action")), "id": form.get("id") or "", "name": form.get("name") or ""}
    return {k: v for k, v in found.items() if v}


def _heading_above(el) -> str:
    # the element may be inside its heading
    found = el.xpath(f"preceding::*[self::{_HEADINGS}][1]") or el.xpath(f"ancestor::*[self::{_HEADINGS}][1]")
    return _cut(_text(found[0], skip=("script", "style"))) if found else ""


def _landmarks(el) -> list[str]:
    out = []
    for parent in el.iterancestors():
        if parent.tag in LANDMARK_TAGS or parent.get("role") in ("search", "navigation", "main", "form", "dialog"):
            out.append(parent.get("role") or parent.tag)
    return list(reversed(out))


def describe_element(el) -> Fingerprint:
    """The page-independent part of a fingerprint (no ``nth``, no ``page``)."""
    label = label_of(el)
    attrs = {}
    for attr in STABLE_ATTRS:
        value = el.get(attr)
        if value:
            attrs[attr] = href_path(value) if attr == "href" else _cut(squash(value), 120)
    return Fingerprint(
        tag=el.tag,
        role=role_of(el),
        name=name_of(el, label),
        text=_cut(_text(el)),
        label=label,
        attrs=attrs,
        form=_form_of(el),
        heading=_heading_above(el),
        landmarks=_landmarks(el),
    )


def candidates(raw_html: str, ids=None) -> list:
    """Elements a fingerprint may match: every element with an id (limited to ``ids``,
    the observation's actionable ids, when given)."""
    out = parse(raw_html).xpath("//*[@backend_node_id]")
    if ids is not None:
        out = [el for el in out if el.get("backend_node_id") in ids]
    return [el for el in out if isinstance(el.tag, str) and el.tag not in ("html", "body", "head")]


def place(el, pool: list, name: str) -> Place:
    """``el``'s place among elements like it: its index among those of the same tag and
    role, and among those that also have the same name (the 2nd of 3 "Add to cart")."""
    key = (el.tag, role_of(el))
    same = [c for c in pool if (c.tag, role_of(c)) == key]
    same_name = [c for c in same if name_of(c, label_of(c)) == name]
    return Place(
        of_kind=[same.index(el) if el in same else -1, len(same)],
        of_name=[same_name.index(el) if el in same_name else -1, len(same_name)],
    )


def fingerprint_of(obs, element_id: str) -> Fingerprint | None:
    """The fingerprint of ``element_id`` on ``obs`` (an ``Observation``), or ``None``
    when the id is not on the page."""
    el = element(obs.raw_html, element_id)
    if el is None:
        return None
    fp = describe_element(el)
    fp.nth = place(el, candidates(obs.raw_html, set(obs.elements) or None), fp.name)
    fp.page = PageRef(url=obs.url, pattern=url_pattern(obs.url), title=obs.title)
    return fp


def target_of(obs, action) -> Fingerprint | None:
    """For the live loop's step record: the fingerprint of the element an action acted on
    (``None`` for actions without an element). Never raises: a record without a
    fingerprint is still a record."""
    try:
        element_id = getattr(action, "element_id", "") if action is not None else ""
        return fingerprint_of(obs, element_id) if element_id else None
    except Exception:  # noqa: BLE001
        return None


def short(fp: Fingerprint | None) -> str:
    """``[button] "Place order"`` for messages and hints."""
    if fp is None:
        return "(no element)"
    name = fp.name or fp.attrs.get("name") or fp.attrs.get("id") or ""
    return f'[{fp.role or fp.tag}] "{name}"' if name else f"[{fp.role or fp.tag}]"


_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    return _SLUG.sub("_", text.lower()).strip("_")[:30]
