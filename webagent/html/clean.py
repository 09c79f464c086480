"""Raw HTML -> Mind2Web-style cleaned HTML, and a robust parser for cleaned HTML.

Cleaned HTML is well-formed XML (MindAct reads it with ``etree.fromstring``):
non-void elements always get an explicit closing tag, so HTML parsers read it
the same way. Every element carries a unique ``backend_node_id``.

The rules, in order:

1. parse (XML first, HTML parser as fallback; namespaces stripped);
2. drop ``script``, ``style``, ``noscript``, ``template``, ``head``, ``meta``,
   ``link``, ``base``, comments and processing instructions, and -- unless they
   already carry a ``backend_node_id`` -- elements hidden by markup (``hidden``
   attribute, ``<input type=hidden>``, inline ``display:none`` /
   ``visibility:hidden``);
3. keep only Mind2Web's attribute set (``aria-label`` becomes ``aria_label``;
   ``checked``/``selected`` become ``input_checked``/``option_selected``);
   a non-empty ``onclick`` handler becomes ``is_clickable="true"``; whitespace
   runs in text and attribute values collapse to one space;
4. prune, bottom-up, elements without a ``backend_node_id`` that have no text,
   no informative attribute, no remaining children and are not interactive;
5. give every element without a (unique) ``backend_node_id`` a fresh decimal one,
   in document order, above the largest numeric id already present.

Elements that already carry a ``backend_node_id`` are recorded action targets
(a Mind2Web snapshot): they are never pruned, which makes ``clean_html``
idempotent -- its output, cleaned again, comes back unchanged.
"""

from __future__ import annotations

import re

from lxml import etree

from webagent.errors import UserError
from webagent.html.dom import (
    ARIA_IDREF,
    DROP_TAGS,
    EMPTY_VALUES,
    ID_ATTR,
    KEEP_ATTRS,
    RENDER_ATTRS,
    VOID_TAGS,
    is_interactive,
    valid_xml_name,
)

_WS = re.compile(r"\s+")
# Characters XML 1.0 forbids; libxml2 stops or mangles on them.
_BAD_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_HIDDEN_STYLE = re.compile(r"(?:display\s*:\s*none|visibility\s*:\s*hidden)", re.I)


def xml_parser(target: object = None) -> etree.XMLParser:
    """The strict parser of cleaned HTML; with ``target``, a parser target that gets its events
    (``render``'s builder) instead of a tree."""
    return etree.XMLParser(
        target=target,
        encoding="utf-8",
        huge_tree=True,
        remove_comments=True,
        remove_pis=True,
        resolve_entities=False,
        no_network=True,
        recover=False,
    )


def _html_parser() -> etree.HTMLParser:
    return etree.HTMLParser(
        encoding="utf-8",
        huge_tree=True,
        remove_comments=True,
        remove_pis=True,
        no_network=True,
        recover=True,
        default_doctype=False,
    )


def _strip_namespaces(root) -> None:
    """XHTML parsed as XML has ``{namespace}tag`` names; keep the local names."""
    found = False
    for el in root.iter(tag=etree.Element):
        tag = el.tag
        if tag[0] == "{":
            el.tag = tag.rsplit("}", 1)[1]
            found = True
    if found:
        etree.cleanup_namespaces(root)


def parse_cleaned(cleaned_html: str):
    """Parse (cleaned) HTML and return its root element.

    Tries the strict XML parser first (cleaned HTML, Mind2Web's included, is
    well-formed XML, and XML keeps ``<div/>`` and ``<text>`` nodes exactly);
    anything else -- fragments, several roots, HTML entities, tag soup -- goes
    through libxml2's forgiving HTML parser, which wraps fragments in
    ``<html><body>``. Comments and processing instructions are dropped.

    Raises ``UserError`` for empty input or input without any element.
    """
    if isinstance(cleaned_html, bytes):
        cleaned_html = cleaned_html.decode("utf-8", errors="replace")
    if not isinstance(cleaned_html, str):
        raise UserError(f"expected an HTML string, got {type(cleaned_html).__name__}")
    if not cleaned_html.strip():
        raise UserError("the HTML is empty: nothing to clean or split")
    root = None
    if cleaned_html.lstrip()[:1] == "<":
        try:
            root = etree.fromstring(cleaned_html.encode("utf-8", errors="replace"), xml_parser())
        except (etree.XMLSyntaxError, ValueError):
            root = None
        if root is not None:
            _strip_namespaces(root)
    if root is None:
        text = _BAD_CHARS.sub(" ", cleaned_html)
        try:
            root = etree.fromstring(text.encode("utf-8", errors="replace"), _html_parser())
        except (etree.XMLSyntaxError, ValueError) as exc:
            raise UserError(f"could not parse the HTML: {exc}") from None
    if root is None or not isinstance(root.tag, str):
        raise UserError("the HTML has no elements: nothing to clean or split")
    return root


def _remove(el) -> None:
    """Detach ``el`` (and its subtree), keeping its tail text in the document."""
    parent = el.getparent()
    if parent is None:
        return
    tail = el.tail
    if tail:
        prev = el.getprevious()
        if prev is not None:
            prev.tail = (prev.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(el)


def _is_hidden(el, tag: str) -> bool:
    attrib = el.attrib
    if "hidden" in attrib:
        return True
    if tag == "input" and (attrib.get("type") or "").strip().lower() == "hidden":
        return True
    style = attrib.get("style")
    return bool(style) and _HIDDEN_STYLE.search(style) is not None


def _map_attrs(tag: str, items: list[tuple[str, str]], extra: frozenset = frozenset()) -> dict[str, str]:
    """Mind2Web's attribute set out of the raw attributes of one element."""
    out: dict[str, str] = {}
    checked = selected = clickable = False
    for key, value in items:
        key = key.lower()
        if key.startswith("aria-"):
            key = "aria_" + key[5:].replace("-", "_")
        if (
            key in KEEP_ATTRS
            or key in extra
            or key.startswith("input_")
            or (key.startswith("aria_") and key not in ARIA_IDREF)
        ):
            out[key] = _WS.sub(" ", value).strip()
        elif key == "checked":
            checked = True
        elif key == "selected":
            selected = True
        elif key == "onclick" and value.strip():
            clickable = True
    if checked and tag == "input" and "input_checked" not in out:
        out["input_checked"] = "true"
    if selected and tag == "option" and "option_selected" not in out:
        out["option_selected"] = "true"
    if clickable and "is_clickable" not in out:
        out["is_clickable"] = "true"
    return out


def _matters(el, tag: str) -> bool:
    """Keep an (otherwise empty) element: interactive or has an informative attribute."""
    attrib = el.attrib
    if is_interactive(tag, attrib.get("role"), attrib.get("is_clickable")):
        return True
    for key, value in attrib.items():
        if key in RENDER_ATTRS and value.strip().lower() not in EMPTY_VALUES:
            return True
    return False


def clean_tree(root, extra_attrs: frozenset = frozenset()):
    """Clean a parsed tree in place (rules in the module docstring); returns ``root``.
    ``extra_attrs`` are kept beside Mind2Web's (a live page keeps ``dom.LIVE_ATTRS``)."""
    # 1. drop non-content elements and markup-hidden ones (recorded targets stay).
    doomed = []
    for el in root.iter():
        tag = el.tag
        if not isinstance(tag, str):  # entity references, stray comments
            doomed.append(el)
            continue
        tag = tag.lower()
        if tag in DROP_TAGS or (ID_ATTR not in el.attrib and _is_hidden(el, tag)):
            doomed.append(el)
    if doomed and doomed[0] is root:
        raise UserError("the HTML has no visible elements: its root is a script or a head")
    for el in doomed:
        _remove(el)

    # 2. attributes and tag names.
    for el in root.iter(tag=etree.Element):
        tag = el.tag.lower()
        if not valid_xml_name(tag):
            tag = "span"
        if tag != el.tag:
            el.tag = tag
        attrib = el.attrib
        items = attrib.items()
        if items:
            mapped = _map_attrs(tag, items, extra_attrs)
            if mapped != dict(items):
                attrib.clear()
                attrib.update(mapped)

    # 3. prune empty, uninformative, non-interactive elements, children first.
    for el in reversed(list(root.iter(tag=etree.Element))):
        if el is root or len(el) or ID_ATTR in el.attrib:
            continue
        text = el.text
        if text and not text.isspace():
            continue
        if _matters(el, el.tag):
            continue
        _remove(el)

    # 4. whitespace runs -> one space; unique backend_node_id everywhere,
    #    document order, no collisions.
    used: set[str] = set()
    need = []
    top = 0
    for el in root.iter(tag=etree.Element):
        for part in ("text", "tail"):
            value = getattr(el, part)
            if value and (norm := _WS.sub(" ", value)) != value:
                setattr(el, part, norm)
        bid = el.get(ID_ATTR)
        if bid is None or bid in used or not bid.strip():
            need.append(el)
            continue
        used.add(bid)
        if bid.isascii() and bid.isdigit():
            top = max(top, int(bid))
    for el in need:
        top += 1
        while str(top) in used:
            top += 1
        used.add(str(top))
        el.set(ID_ATTR, str(top))
    return root


def serialise(root) -> str:
    """Cleaned HTML text: every non-void element with an explicit closing tag (``<div></div>``,
    never ``<div/>``); ``capture`` writes a live page's cleaned tree with it too."""
    for el in root.iter(tag=etree.Element):
        if el.text is None and not len(el) and el.tag not in VOID_TAGS:
            el.text = ""
    root.tail = None
    return etree.tostring(root, encoding="unicode")


def clean_html(raw_html: str, extra_attrs: frozenset = frozenset()) -> str:
    """Raw HTML -> Mind2Web-style cleaned HTML (see the module docstring); ``extra_attrs``
    as for ``clean_tree`` (a live capture keeps ``dom.LIVE_ATTRS``).

    Idempotent: ``clean_html(clean_html(x)) == clean_html(x)``. Raises
    ``UserError`` for empty input or input without elements.
    """
    return serialise(clean_tree(parse_cleaned(raw_html), extra_attrs))


def load_tree(html: str):
    """Root of a cleaned tree for either input: Mind2Web ``cleaned_html`` is used as
    is; anything with an element lacking ``backend_node_id`` is cleaned first."""
    root = parse_cleaned(html)
    for el in root.iter(tag=etree.Element):
        if ID_ATTR not in el.attrib:
            return clean_tree(root)
    return root
