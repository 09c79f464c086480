"""Typed values that cross the browser layer's boundary: what a page looked like
(``Observation``), what to do (``Action``) and what happened (``ActionResult``).

They are plain data (pydantic, ``extra="forbid"``): an agent loop can log them as
JSON as they are, since every value typed into a password field is already
redacted (see ``guard.redact``). Nothing here talks to a browser.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Op = Literal["CLICK", "TYPE", "SELECT", "SCROLL", "GOTO", "BACK", "DIALOG"]


class _Strict(BaseModel):
    """Every model here refuses a field it does not declare."""

    model_config = ConfigDict(extra="forbid")


class ElementRef(_Strict):
    """Where the element behind one model-facing id lives.

    ``target`` names the CDP session the element belongs to (the page's own, or an
    out-of-process iframe's); ``backend_node_id`` is Chromium's id inside that
    target. Ids are unique only within one target, hence the pair.
    """

    model_config = ConfigDict(frozen=True)

    target: str
    backend_node_id: int
    tag: str
    is_password: bool = False


class Timings(_Strict):
    snapshot_s: float = 0.0  # CDP DOMSnapshot.captureSnapshot (all targets)


class Observation(_Strict):
    """One capture of the active page.

    ``raw_html``: every rendered element with its own attributes plus
    ``backend_node_id`` (the model-facing id), ``bounding_box_rect`` ("x,y,w,h"
    in CSS pixels of the top viewport, as Mind2Web records it), ``is_visible``,
    ``is_clickable`` and the live form state (``input_value``, ``input_checked``,
    ``option_selected``); iframes are inlined below their ``<iframe>`` element and
    shadow roots below their host. ``cleaned_html`` is ``clean_html(raw_html)``:
    Mind2Web's layout, ready for ``webagent.html.split_snippets``. ``elements``
    maps every id in ``cleaned_html`` to the element it stands for.
    """

    url: str
    title: str
    raw_html: str
    cleaned_html: str
    elements: dict[str, ElementRef]
    timings: Timings = Field(default_factory=Timings)
    nodes: int = 0  # element nodes seen in the snapshots
    truncated: bool = False  # the page had more than ``max_nodes`` elements
    frame_errors: list[str] = Field(default_factory=list)  # frames that could not be captured


class Action(_Strict):
    """One browser action. ``element_id`` is an id of the last observation.

    CLICK id | TYPE id value [press_enter] | SELECT id value (option text or value)
    | SCROLL [id] direction | GOTO value=url | BACK | DIALOG value=accept|dismiss [text]
    (answers the dialog an action left open, ``text`` for a prompt's answer).
    """

    op: Op
    element_id: str | None = None
    value: str | None = None
    press_enter: bool = False
    direction: Literal["up", "down"] = "down"
    text: str | None = None  # DIALOG accept of a prompt: the text it is answered with


class Dialog(_Strict):
    """A JS dialog an action raised and the page holds open (``kind`` confirm or prompt,
    ``default_value`` a prompt's text); ``answer`` once answered ("accept", "dismiss",
    "accept 'text'" for a prompt)."""

    kind: str
    message: str
    default_value: str = ""
    answer: str | None = None


class ActionResult(_Strict):
    """What an action did. Never raised: a failure is ``ok=False`` with ``error``.

    ``page_changed`` is set when the id no longer belongs to the page (a reload or
    navigation since the observation): observe again. ``method`` says how a click
    was delivered (``mouse`` or ``js`` when the element was covered or had no box,
    with the reason in ``note``). ``action`` is the action as executed, its value
    redacted when it went into a password field.
    """

    ok: bool
    action: Action
    error: str | None = None
    page_changed: bool = False
    method: str | None = None
    note: str | None = None
    url: str = ""
    new_tab: bool = False
    blocked_navigation: str | None = None
    elapsed_s: float = 0.0
    # the dialog the action raised and left open (answer it with DIALOG), or the one DIALOG answered
    dialog: Dialog | None = None
    moved: bool | None = None  # a SCROLL: whether the page (or the element) moved; None for other actions
