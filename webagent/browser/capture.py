"""Observe the active page: CDP DOM snapshots -> raw HTML -> Mind2Web cleaned HTML.

``capture(session)`` takes one ``DOMSnapshot.captureSnapshot`` of the page's own
target (same-process iframes and shadow roots come with it) and one more of each
out-of-process iframe through that frame's own CDP session; the frames' trees are
inlined below their ``<iframe>`` elements (found with ``DOM.getFrameOwner``). A frame
that fails, times out or detaches is left out and named in
``Observation.frame_errors``; the page's own snapshot failing is a ``CaptureError``.

Ids: an element of the page's own target is ``str(backendNodeId)``; an element of
an out-of-process frame is ``"<target>-<backendNodeId>"`` (``t3-57``), so ids are
unique across frames and ``Observation.elements`` maps each back to (target,
backendNodeId) for ``actions``. The tree is then cleaned by
the landed ``webagent.html`` cleaning unchanged (``clean_tree``: the output equals
``clean_html(raw_html)``), so ``split_snippets`` cuts a live page the
way it cuts a Mind2Web record. See ``snapshot`` for what is kept.
"""

from __future__ import annotations

import asyncio
import time

from lxml import etree

from webagent.browser import snapshot as snap
from webagent.browser.actions import call_function
from webagent.browser.ax import ax_names
from webagent.browser.errors import CaptureError, SharedTargetError
from webagent.browser.models import ElementRef, Observation, Timings
from webagent.browser.timing import within
from webagent.errors import first_line
from webagent.html import clean_tree
from webagent.html.clean import serialise
from webagent.html.dom import LIVE_ATTRS

SNAPSHOT_TIMEOUT_S = 10.0
FRAME_TIMEOUT_S = 3.0
MAX_INVALID_FIELDS = 10
# The fields a person sees marked invalid: ``:user-invalid`` matches only after the user
# edited the field or a submit was blocked, not a required field nobody touched yet.
_INVALID_JS = f"[...document.querySelectorAll(':user-invalid')].slice(0, {MAX_INVALID_FIELDS})"
_MESSAGE_JS = "function () { return this.validationMessage; }"


async def _snapshot(cdp, timeout_s: float) -> dict:
    # Without includeDOMRects and includePaintOrder: the serialisation does not use them (element
    # boxes come with the layout anyway) and they add about a third to the snapshot's size and
    # time (see bench/observation.py).
    return await within(cdp.send("DOMSnapshot.captureSnapshot", {"computedStyles": snap.STYLES}), timeout_s)


async def _frame_capture(session, frame, timeout_s: float):
    """(cdp, snapshot, frameId) of an out-of-process frame; ``None`` when the frame
    shares its parent's process (its content is in the parent's snapshot)."""
    for attempt in (0, 1):
        try:
            cdp = await session.cdp_session(frame)
        except SharedTargetError:
            return None
        try:
            data = await _snapshot(cdp, timeout_s)
            break
        except TimeoutError:
            raise
        except Exception:  # noqa: BLE001 - a cached session whose target is gone: once more
            session.forget(frame)
            if attempt == 1 or frame.is_detached():
                raise
    docs = data.get("documents") or [{}]
    frame_id = data["strings"][docs[0]["frameId"]] if docs[0].get("frameId", -1) >= 0 else None
    return cdp, data, frame_id


async def invalid_fields(cdp, timeout_s: float = FRAME_TIMEOUT_S) -> dict[int, str]:
    """backendNodeId -> the browser's validation message ("Please fill out this field.") of
    each field of the page's own document that shows as invalid; {} when none or on error
    (the page still gets captured)."""
    group = "webagent-invalid"
    found: dict[int, str] = {}
    try:
        listed = await within(
            cdp.send("Runtime.evaluate", {"expression": _INVALID_JS, "objectGroup": group}), timeout_s
        )
        array = listed.get("result", {})
        if not array.get("objectId") or array.get("description") == "Array(0)":
            return found
        props = await within(
            cdp.send("Runtime.getProperties", {"objectId": array["objectId"], "ownProperties": True}), timeout_s
        )
        for prop in props.get("result", []):
            element = (prop.get("value") or {}).get("objectId")
            if not prop.get("name", "").isdigit() or not element:
                continue
            node = await within(cdp.send("DOM.describeNode", {"objectId": element}), timeout_s)
            message = await within(call_function(cdp, element, _MESSAGE_JS), timeout_s)
            found[node["node"]["backendNodeId"]] = str(message or "")
    except Exception:  # noqa: BLE001 - validity is extra state: never fail the capture for it
        return found
    finally:
        try:
            await within(cdp.send("Runtime.releaseObjectGroup", {"objectGroup": group}), timeout_s)
        except Exception:  # noqa: BLE001, S110 - the page navigated away: nothing left to release
            pass
    return found


def _owner_of(frame, oopif: set):
    """The nearest ancestor frame that has its own target (``None``: the page)."""
    parent = frame.parent_frame
    while parent is not None and parent.parent_frame is not None and parent not in oopif:
        parent = parent.parent_frame
    return parent if parent is not None and parent.parent_frame is not None else None


async def capture(
    session,
    *,
    max_nodes: int = 30000,
    timeout_s: float = SNAPSHOT_TIMEOUT_S,
    frame_timeout_s: float = FRAME_TIMEOUT_S,
    accessible_names: bool = True,
) -> Observation:
    """Observe ``session.page`` (see the module docstring).

    ``max_nodes`` bounds the elements written out (a page past it is cut in
    document order and ``truncated`` is set); ``timeout_s`` bounds the page's own
    snapshot, ``frame_timeout_s`` each out-of-process frame's.
    ``accessible_names`` reads each element's role and accessible name from Chromium's
    accessibility tree (``ax``) as ``ax_role`` / ``ax_name``; off, the agent's own rules name
    every control (the before/after of bench/view_names.py).
    """
    t0 = time.perf_counter()
    page = session.page
    cdp = await session.cdp_session(page)
    page_target = session.target_name(page)
    errors: list[str] = []

    frames = [f for f in page.frames if f.parent_frame is not None]
    jobs = [_frame_capture(session, f, frame_timeout_s) for f in frames]
    names = asyncio.ensure_future(ax_names(cdp, timeout_s)) if accessible_names else None
    try:
        results = await asyncio.gather(_snapshot(cdp, timeout_s), *jobs, return_exceptions=True)
    except Exception as exc:  # noqa: BLE001
        raise CaptureError(f"could not capture {page.url}: {exc}") from None
    main = results[0]
    page_ax = await names if names is not None else {}
    if isinstance(main, BaseException):
        why = "timed out" if isinstance(main, asyncio.TimeoutError) else first_line(main)
        raise CaptureError(f"could not capture {page.url}: {why}")
    invalid = await invalid_fields(cdp, timeout_s)  # after the snapshot: a page that hangs fails above
    captured: dict = {}
    for frame, res in zip(frames, results[1:]):
        if isinstance(res, BaseException):
            why = "timed out" if isinstance(res, asyncio.TimeoutError) else first_line(res)[:200]
            errors.append(f"{frame.url}: {why}")
        elif res is not None:
            captured[frame] = res
    t_snap = time.perf_counter()

    # Build the deepest frames first, then hand each to its owner's <iframe>.
    oopif = set(captured)
    inline: dict[object, dict[int, list]] = {}  # owner target (None: page) -> iframe bid -> roots
    elements: dict[str, ElementRef] = {}
    nodes, truncated = 0, False
    budget = max_nodes
    for frame in sorted(captured, key=_depth, reverse=True):
        fcdp, data, frame_id = captured[frame]
        owner = _owner_of(frame, oopif)
        owner_cdp = cdp if owner is None else captured[owner][0]
        try:
            found = await within(owner_cdp.send("DOM.getFrameOwner", {"frameId": frame_id}), frame_timeout_s)
            owner_bid = found["backendNodeId"]
            box = await within(owner_cdp.send("DOM.getBoxModel", {"backendNodeId": owner_bid}), frame_timeout_s)
            quad = box["model"]["content"]
            offset = (quad[0], quad[1])
        except Exception as exc:  # noqa: BLE001 - the frame detached meanwhile
            errors.append(f"{frame.url}: frame owner not found ({first_line(exc)[:120]})")
            continue
        name = session.target_name(frame)
        frame_ax = await ax_names(fcdp, frame_timeout_s) if accessible_names else {}
        built = snap.build(
            data, prefix=f"{name}-", inline=inline.get(frame), offset=offset, max_nodes=budget, ax=frame_ax
        )
        budget = max(0, budget - len(built.elements))
        nodes += built.nodes
        truncated |= built.truncated
        for ident, (bid, tag, pw) in built.elements.items():
            elements[ident] = ElementRef(target=name, backend_node_id=bid, tag=tag, is_password=pw)
        inline.setdefault(owner, {})[owner_bid] = built.roots
    built = snap.build(main, prefix="", inline=inline.get(None), max_nodes=budget, invalid=invalid, ax=page_ax)
    nodes += built.nodes
    truncated |= built.truncated
    for ident, (bid, tag, pw) in built.elements.items():
        elements[ident] = ElementRef(target=page_target, backend_node_id=bid, tag=tag, is_password=pw)
    if built.roots:
        root = built.roots[0]
        for extra in built.roots[1:]:
            root.append(extra)
    else:
        root = etree.Element("html")
    raw_html = etree.tostring(root, encoding="unicode")
    # The landed cleaning, on the tree we already hold (clean_html would parse
    # raw_html back into this very tree first); Mind2Web's attributes plus the few the
    # agent view reads (label targets, contenteditable, disabled).
    cleaned = serialise(clean_tree(root, LIVE_ATTRS))
    title = _title(main)
    return Observation(
        url=page.url,
        title=title,
        raw_html=raw_html,
        cleaned_html=cleaned,
        elements=elements,
        timings=Timings(snapshot_s=t_snap - t0),
        nodes=nodes,
        truncated=truncated,
        frame_errors=errors,
    )


def _title(snapshot: dict) -> str:
    """The top document's title, as the snapshot reports it (no extra round trip)."""
    docs = snapshot.get("documents") or [{}]
    k = docs[0].get("title", -1)
    return snapshot["strings"][k] if isinstance(k, int) and 0 <= k < len(snapshot.get("strings", ())) else ""


def _depth(frame) -> int:
    d = 0
    while frame.parent_frame is not None:
        frame = frame.parent_frame
        d += 1
    return d
