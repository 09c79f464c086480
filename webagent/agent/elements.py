"""What a model-facing id stands for, read from an observation's HTML: a short
description (for the history, the report and Mind2Web's ``action_reprs``), its box
(for the screenshot outline) and its attributes (for a recorded candidate)."""

from __future__ import annotations

from webagent.trace.fingerprint import TEXT_INPUTS, element
from webagent.web.control_name import names_by_value

# Mind2Web's action_reprs name elements by role-like tags: "[link]  Flights -> CLICK".
_ROLE = {"a": "link", "select": "combobox", "textarea": "textbox"}
_LABEL_ATTRS = ("aria_label", "aria-label", "placeholder", "title", "name", "value", "alt", "type")


def _label_attrs(el) -> tuple[str, ...]:
    # A value names only an input drawn as a button; a checkbox's "on" is what its form sends.
    return _LABEL_ATTRS if names_by_value(el) else tuple(n for n in _LABEL_ATTRS if n != "value")


def role(el) -> str:
    tag = el.tag if isinstance(el.tag, str) else "node"
    if tag == "input":
        kind = (el.get("type") or "").lower()
        return "textbox" if kind in TEXT_INPUTS else kind or "input"
    return _ROLE.get(tag, tag)


def label(el, limit: int = 60) -> str:
    text = " ".join(" ".join(el.itertext()).split()) or next((el.get(n) for n in _label_attrs(el) if el.get(n)), "")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(html: str, element_id: str) -> str:
    """``[button]  Search`` — or ``[?] id 12`` when the id is not in ``html``."""
    el = element(html, element_id)
    if el is None:
        return f"[?] id {element_id}"
    return f"[{role(el)}]  {label(el)}".rstrip()


def box(raw_html: str, element_id: str) -> tuple[float, float, float, float] | None:
    """(x, y, width, height) in page CSS pixels from ``bounding_box_rect``."""
    el = element(raw_html, element_id)
    rect = el.get("bounding_box_rect") if el is not None else None
    if not rect:
        return None
    try:
        x, y, w, h = (float(v) for v in rect.split(","))
    except ValueError:
        return None
    return x, y, w, h


def attributes(raw_html: str, element_id: str) -> tuple[str, dict[str, str]]:
    """(tag, attributes) of the element in the raw page (Mind2Web's candidate fields)."""
    el = element(raw_html, element_id)
    if el is None:
        return "", {"backend_node_id": element_id}
    return el.tag, {**el.attrib, "backend_node_id": element_id}
