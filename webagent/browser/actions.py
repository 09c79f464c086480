"""Execute one ``Action`` on the active page; every outcome is an ``ActionResult``.

Elements are found by the ids of the last observation through CDP:
``DOM.resolveNode`` (which also reaches closed shadow roots). A click waits (each wait
bounded by ``CLICK_SETTLE_MS``) for the page to stop moving (a smooth scroll after an
in-page link), ``DOM.scrollIntoViewIfNeeded``, waits until the element's box stays put
across animation frames, takes the centre of ``DOM.getContentQuads`` of that settled box,
and checks with ``elementFromPoint`` (through shadow roots) at that very point that the
click lands on the element (or inside it, or on its <label>); then real mouse events
click it. A click that would land elsewhere, an element still moving, or one without a
box, is clicked with JS ``click()`` instead: ``method="js"`` says so and ``note`` says
why (what is at the point). An id whose node is gone ("No node with given id found",
"Node with given id does not belong to the document") is ``page_changed``: the page
was reloaded or navigated since the observation -- observe again.

* CLICK id -- also opens custom dropdowns made of divs (click the box, observe,
  click the option); a tab it opens becomes the active page (``new_tab``).
* TYPE id value [press_enter] -- replaces the field's value as typed text (input
  events fire); date/colour/range inputs get their value set and input/change fired.
* SELECT id value -- a ``<select>`` (or one of its options): the option whose text
  or value equals ``value`` (then case-insensitive, then contained), input/change fired;
  an option of an ``<optgroup>`` is also named "group / text", and a text that options of
  several groups share is refused, naming each.
* SCROLL [id] up|down -- the element, or the page, by 80% of its visible height.
* GOTO url (checked by the session's guard) and BACK.
* DIALOG accept|dismiss [text] -- answers the confirm or prompt an action left open. A
  CLICK, TYPE or SELECT that raises one returns as soon as the dialog is open, with it in
  ``dialog`` and a note that says how to answer; answering finishes the action (see
  ``dialogs``). Any other action dismisses a dialog left open first.

After an action the session waits (bounded) for the load event and a quiet network, for
a tab the action opened and for downloads being saved. A navigation the guard refused
makes the action ``ok=False`` (``blocked_navigation``, the reason in ``error``). The
browser events of the action (dialogs, tabs, downloads, crashes) are its ``note``, and
those that came since the previous action follow under "before this action:". A click whose
form submission the browser blocked says which fields were invalid ("the form was not sent").
"""

from __future__ import annotations

import time

from webagent.browser import dialogs
from webagent.browser.forms import take_invalid_fields
from webagent.browser.guard import redact
from webagent.browser.models import Action, ActionResult, ElementRef, Observation
from webagent.browser.timing import within
from webagent.errors import RuntimeFailure, first_line

_STALE = (
    "No node with given id found",
    "does not belong to the document",
    "Cannot find context",
    "Could not find node",
    "Execution context was destroyed",
    "Target closed",
    "Session closed",
    "has been closed",
)
# How long a click waits for its element's box to stop moving (a smooth scroll, a slide-in).
CLICK_SETTLE_MS = 500
_VALUE_SET_TYPES = ("date", "datetime-local", "month", "week", "time", "color", "range")

# Runs on the resolved element: its state (gone, hidden, disabled, whether it has a box).
_PROBE = """function() {
  const el = this;
  if (!el.isConnected) return {gone: true};
  const rects = el.getClientRects();
  const box = rects.length ? rects[0] : null;
  return {tag: el.tagName.toLowerCase(), disabled: !!el.disabled || el.getAttribute('aria-disabled') === 'true',
          hidden: (el.checkVisibility ? !el.checkVisibility({visibilityProperty: true}) : !rects.length),
          sized: !!box && box.width > 0 && box.height > 0};
}"""

# The element's first box (in the top viewport when its frames are same-origin), sampled each
# animation frame until it stays the same for two frames or ``limit`` ms have passed: a page
# still scrolling (``scroll-behavior: smooth`` after an in-page link) or an element still
# sliding in would move it between the aim and the click.
_SETTLE = """function(limit) {
  const el = this;
  const box = () => {
    const r = el.getClientRects()[0];
    if (!r) return null;
    let x = r.left, y = r.top;
    try {
      for (let w = el.ownerDocument.defaultView; w && w.frameElement; w = w.parent) {
        const f = w.frameElement.getBoundingClientRect(); x += f.left; y += f.top;
      }
    } catch (e) {}
    return [x, y, r.width, r.height];
  };
  const same = (a, b) => !!a && !!b && a.every((v, i) => Math.abs(v - b[i]) < 0.5);
  const frame = () => new Promise(done => { requestAnimationFrame(() => done()); setTimeout(done, 50); });
  return (async () => {
    const t0 = performance.now();
    let last = box(), still = 0;
    while (performance.now() - t0 < limit) {
      await frame();
      const now = box();
      still = same(now, last) ? still + 1 : 0;
      last = now;
      if (still >= 2) return {box: now, stable: true};
    }
    return {box: last, stable: still >= 1};  // frames come slowly (a throttled tab): one still pair will do
  })();
}"""

# What a click at the centre of the element's first box would hit, looked up through open
# shadow roots at that very point, while the box is still ``box`` (``_SETTLE``'s): {} when
# it is the element, inside it, or a <label> of it; ``at`` names what is there instead;
# ``outside`` when that point is off the viewport; ``moved`` when the box is no longer
# where it settled.
_HIT = """function(box) {
  const el = this;
  const r = el.getClientRects()[0];
  if (!r) return {moved: true};
  let ox = 0, oy = 0;
  try {
    for (let w = el.ownerDocument.defaultView; w && w.frameElement; w = w.parent) {
      const f = w.frameElement.getBoundingClientRect(); ox += f.left; oy += f.top;
    }
  } catch (e) {}
  if ([r.left + ox, r.top + oy, r.width, r.height].some((v, i) => Math.abs(v - box[i]) >= 0.5)) return {moved: true};
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  const view = el.ownerDocument.defaultView;
  if (x < 0 || y < 0 || x >= view.innerWidth || y >= view.innerHeight) return {outside: true};
  let hit = el.ownerDocument.elementFromPoint(x, y);
  while (hit && hit.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  if (!hit) return {at: 'nothing'};
  for (let n = hit; n; n = n.parentNode || n.host) if (n === el) return {};
  for (let root = el.getRootNode(); root && root.host; root = root.host.getRootNode()) {
    if (root.host === hit) return {};  // a closed shadow root: its host is as deep as the page shows
  }
  const label = hit.closest ? hit.closest('label') : null;
  if (label && label.control === el) return {};
  return {at: hit.tagName.toLowerCase() + (hit.id ? '#' + hit.id : '')};
}"""

# Focus the field and select all its text; returns its value before (null for no value).
_FOCUS_SELECT = """function() {
  const before = this.value ?? null;
  this.focus();
  if (typeof this.select === 'function') { this.select(); return before; }
  if (this.isContentEditable) {
    const r = document.createRange(); r.selectNodeContents(this);
    const s = window.getSelection(); s.removeAllRanges(); s.addRange(r);
  }
  return before;
}"""
_VALUE = "function() { return this.value ?? null; }"

_SET_VALUE = """function(v) {
  const proto = Object.getPrototypeOf(this);
  const setter = Object.getOwnPropertyDescriptor(proto, 'value').set;
  setter.call(this, v);
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return this.value;
}"""

# An option inside an <optgroup> is named "group / text" too ("Lyon / Airport", as the agent
# view shows it); a text several groups share names none of them (which one is asked).
_SELECT = """function(v) {
  let sel = this;
  if (sel.tagName === 'OPTION') sel = sel.closest('select');
  if (!sel || sel.tagName !== 'SELECT') return {error: 'not a <select> element: CLICK it to open it, then CLICK the option'};
  if (sel.disabled) return {error: 'the <select> is disabled'};
  const opts = Array.from(sel.options);
  const norm = s => s.replace(/\\s+/g, ' ').trim();
  const group = o => (o.parentElement && o.parentElement.tagName === 'OPTGROUP') ? norm(o.parentElement.label || '') : '';
  const shown = o => group(o) ? group(o) + ' / ' + norm(o.text) : norm(o.text);
  const want = norm(v), low = want.toLowerCase();
  const tries = [
    o => shown(o) === want || o.value === v,
    o => norm(o.text) === want,
    o => shown(o).toLowerCase() === low || o.value.toLowerCase() === low,
    o => norm(o.text).toLowerCase() === low,
    o => !!low && shown(o).toLowerCase().includes(low),
  ];
  let found = [];
  for (const t of tries) { found = opts.filter(t); if (found.length) break; }
  if (!found.length) return {error: 'no option ' + JSON.stringify(v) + '; options: ' + opts.slice(0, 15).map(o => JSON.stringify(shown(o))).join(', ')};
  if (new Set(found.map(group)).size > 1) {
    return {error: 'option ' + JSON.stringify(v) + ' is in several groups; choose one of: ' + found.map(o => JSON.stringify(shown(o))).join(', ')};
  }
  const pick = found[0];
  sel.value = pick.value;
  pick.selected = true;
  sel.dispatchEvent(new Event('input', {bubbles: true}));
  sel.dispatchEvent(new Event('change', {bubbles: true}));
  return {chosen: shown(pick)};
}"""

_SCROLL = """function(dy) {
  const el = (this === window || this === document || this === document.body || this === document.documentElement)
    ? (document.scrollingElement || document.documentElement) : this;
  const before = el.scrollTop;
  el.scrollBy(0, dy * (el.clientHeight || window.innerHeight) * 0.8);
  return el.scrollTop - before;
}"""


class ActionFailed(RuntimeFailure):
    def __init__(self, message: str, page_changed: bool = False):
        super().__init__(message)
        self.page_changed = page_changed


def _is_stale(message: str) -> bool:
    return any(s in message for s in _STALE)


async def execute(session, action: Action, observation: Observation | None = None) -> ActionResult:
    """Run ``action`` (see the module docstring); never raises for a failed action."""
    t0 = time.perf_counter()
    ref = None
    if action.element_id is not None and observation is not None:
        ref = observation.elements.get(action.element_id)
    logged = action
    if ref is not None and ref.is_password and action.value is not None:
        logged = action.model_copy(update={"value": redact(action.value, True)})
    result = ActionResult(ok=True, action=logged)
    if action.op != "DIALOG":
        await dialogs.close_open(session)  # left unanswered: dismissed, as before the action
    earlier = session.take_events()  # what happened since the last action (a timer's alert, ...)
    session.take_new_pages()  # tabs opened before this action are not its doing
    refused_before = len(session.guard.refused) if session.guard else 0
    popups_before = session.popups_announced()
    try:
        await _perform(session, action, ref, observation, result)
    except ActionFailed as exc:
        result.ok, result.error, result.page_changed = False, str(exc), exc.page_changed
    except TimeoutError:
        result.ok, result.error = False, f"{action.op} timed out"
    except Exception as exc:  # noqa: BLE001 - a failed action is a result, never a crash
        message = first_line(exc)
        if _is_stale(message):
            result.ok, result.page_changed = False, True
            result.error = f"page changed: element {action.element_id} is no longer on the page; observe again"
        else:
            result.ok, result.error = False, f"{action.op} failed: {message[:300]}"
    if session.popups_announced() > popups_before:
        await session.wait_for_new_page(session.popup_wait_s)  # Playwright announces it late
    await session.guard_work()
    new_pages = session.take_new_pages()
    if new_pages:
        await session.settle()
    await session.enforce_guard(new_pages)
    refused = session.guard is not None and len(session.guard.refused) > refused_before
    for page in new_pages:
        if refused and page.url == "about:blank" and not page.is_closed():
            await session.close_tab(page)  # a tab whose navigation was refused: back to where we were
    result.new_tab = any(not p.is_closed() for p in new_pages)
    await session.wait_for_downloads(session.settle_timeout_s)
    during = session.take_events()
    if refused:  # a refused navigation is a failed step, whatever else the action did
        result.blocked_navigation = session.guard.refused[-1]
        reason = f"navigation refused: {session.guard.reasons[-1]}"
        result.ok, result.error = False, result.error or reason
        during = [line for line in during if line != result.error]
    notes = [result.note] if result.note else []
    if session.dialog is not None:  # the page waits for an answer: no script runs in it now
        result.dialog = session.dialog
        notes.insert(0, dialogs.ask_line(session.dialog))
    elif action.op in ("CLICK", "DIALOG") and (invalid := await take_invalid_fields(session.page)):
        notes.append("the form was not sent: " + "; ".join(invalid))
    notes += during
    if earlier:
        notes.append("before this action: " + "; ".join(earlier))
    result.note = "; ".join(notes) or None
    try:
        result.url = session.page.url
    except Exception:  # noqa: BLE001
        result.url = ""
    result.elapsed_s = time.perf_counter() - t0
    return result


async def _perform(session, action: Action, ref, observation, result: ActionResult) -> None:
    """The action, bounded in time; one that may raise a dialog holds it (``dialogs``)."""
    limit = session.action_timeout_s + session.settle_timeout_s + 5
    if action.op == "DIALOG":
        if (action.value or "").lower() not in ("accept", "dismiss"):
            raise ActionFailed('DIALOG takes the value "accept" or "dismiss"')
        if session.dialog is None:
            raise ActionFailed("DIALOG: no dialog is open")
        held, session._held_result = session._held_result, None  # the result of the action that raised it
        try:
            result.dialog = await dialogs.answer(session, (action.value or "").lower() == "accept", action.text, limit)
        finally:
            if session.dialog is not None:  # it raised the next one
                session._held_result = held
        if held is not None and session.dialog is None:  # what the action itself said (JS click, option chosen)
            result.method, result.note = held.method, held.note
    elif action.op in dialogs.HOLDING_OPS:
        await dialogs.run(session, _dispatch(session, action, ref, observation, result), limit)
        if session.dialog is not None:
            session._held_result = result
    else:
        await within(_dispatch(session, action, ref, observation, result), limit)


async def _dispatch(session, action: Action, ref, observation, result: ActionResult) -> None:
    op = action.op
    if op == "GOTO":
        await _goto(session, action.value or "", result)
        return
    if op == "BACK":
        response_url = session.page.url
        await session.page.go_back(timeout=session.action_timeout_s * 1000, wait_until="commit")
        if session.page.url == response_url:
            raise ActionFailed("BACK: there is no previous page")
        await session.settle()
        return
    if op == "SCROLL" and action.element_id is None:
        cdp = await session.cdp_session(session.page)
        found = await cdp.send("Runtime.evaluate", {"expression": "document.documentElement", "returnByValue": False})
        moved = await call_function(cdp, found["result"]["objectId"], _SCROLL, 1 if action.direction == "down" else -1)
        result.moved = bool(moved)
        result.note = (
            None
            if moved
            else f"the page did not move: already at the {'bottom' if action.direction == 'down' else 'top'}"
        )
        return
    if action.element_id is None:
        raise ActionFailed(f"{op} needs an element id")
    if observation is None:
        raise ActionFailed(f"{op} needs the observation its id {action.element_id} comes from")
    if ref is None:
        raise ActionFailed(f"element {action.element_id} is not in the observation")
    owner_cdp = session.target(ref.target)
    if owner_cdp is None:
        raise ActionFailed(
            f"page changed: the frame or tab of element {action.element_id} is gone; observe again", True
        )
    owner, cdp = owner_cdp
    if hasattr(owner, "is_closed") and owner is not session.page:
        raise ActionFailed(f"page changed: element {action.element_id} belongs to another tab; observe again", True)
    object_id = await _resolve(cdp, ref, action.element_id)
    if op == "CLICK":
        await _click(session, owner, cdp, ref, object_id, action.element_id, result)
    elif op == "TYPE":
        await _type(session, cdp, ref, object_id, action, result)
    elif op == "SELECT":
        out = await call_function(cdp, object_id, _SELECT, action.value or "")
        if "error" in out:
            raise ActionFailed(f"SELECT {action.element_id}: {out['error']}")
        result.note = f"selected {out['chosen']!r}"
    elif op == "SCROLL":
        moved = await call_function(cdp, object_id, _SCROLL, 1 if action.direction == "down" else -1)
        result.moved = bool(moved)
        result.note = None if moved else "the element did not move (not scrollable or at its end)"
    await session.settle()


async def _goto(session, url: str, result: ActionResult) -> None:
    if not url:
        raise ActionFailed("GOTO needs a URL")
    if session.guard is not None:
        reason = session.guard.check(url)
        if reason is not None:
            result.blocked_navigation = url
            raise ActionFailed(f"GOTO refused: {reason}")
    try:
        await session.page.goto(url, wait_until="domcontentloaded", timeout=session.action_timeout_s * 1000)
    except Exception as exc:  # noqa: BLE001
        raise ActionFailed(f"GOTO {url} failed: {first_line(exc)}") from None
    await session.settle()


async def _resolve(cdp, ref: ElementRef, element_id: str) -> str:
    try:
        found = await cdp.send("DOM.resolveNode", {"backendNodeId": ref.backend_node_id})
    except Exception as exc:  # noqa: BLE001
        message = str(exc)
        if _is_stale(message):
            raise ActionFailed(
                f"page changed: element {element_id} is no longer on the page (reloaded or navigated); observe again",
                True,
            ) from None
        raise
    return found["object"]["objectId"]


async def call_function(cdp, object_id: str, function: str, *args):
    """``function`` run on the object (``this``) with ``args``: its value; an ``ActionFailed`` when it throws."""
    reply = await cdp.send(
        "Runtime.callFunctionOn",
        {
            "objectId": object_id,
            "functionDeclaration": function,
            "arguments": [{"value": a} for a in args],
            "returnByValue": True,
            "awaitPromise": True,
        },
    )
    if "exceptionDetails" in reply:
        detail = reply["exceptionDetails"].get("exception", {}).get("description") or reply["exceptionDetails"].get(
            "text"
        )
        raise ActionFailed(f"page script error: {str(detail).splitlines()[0]}")
    return reply["result"].get("value")


async def _frame_offset(owner) -> tuple[float, float]:
    """Where an out-of-process frame's viewport starts in the top viewport."""
    element = await owner.frame_element()
    box = await element.bounding_box()
    if box is None:
        raise ActionFailed("the element's frame is not displayed")
    inset = await element.evaluate(
        "e => { const s = getComputedStyle(e);"
        " return [e.clientLeft + parseFloat(s.paddingLeft), e.clientTop + parseFloat(s.paddingTop)]; }"
    )
    return box["x"] + inset[0], box["y"] + inset[1]


async def _probe(cdp, object_id, element_id: str) -> dict:
    """The element's ``_PROBE``; an ActionFailed when it is gone, hidden or disabled."""
    probe = await call_function(cdp, object_id, _PROBE)
    if probe.get("gone"):
        raise ActionFailed(f"page changed: element {element_id} was removed from the page; observe again", True)
    if probe["hidden"]:
        raise ActionFailed(f"element {element_id} ({probe['tag']}) is hidden")
    if probe["disabled"]:
        raise ActionFailed(f"element {element_id} ({probe['tag']}) is disabled")
    return probe


async def _click(session, owner, cdp, ref, object_id, element_id, result) -> None:
    probe = await _probe(cdp, object_id, element_id)
    point, why = None, "no box on screen"
    if probe["sized"]:
        offset = None
        if not hasattr(owner, "is_closed"):  # an out-of-process frame: its quads are frame-relative
            offset = await _frame_offset(owner)
        point, why = await _aim(cdp, ref, object_id)
        if point is not None and offset is not None:
            point = (point[0] + offset[0], point[1] + offset[1])
    if point is None:
        await call_function(cdp, object_id, "function() { this.click(); return true; }")
        result.method, result.note = "js", f"clicked with JS click(): {why}"
        return
    await session.page.mouse.click(point[0], point[1])
    result.method = "mouse"


async def _aim(cdp, ref, object_id) -> tuple[tuple[float, float] | None, str]:
    """(where a real click hits the element, in its target's viewport; or None and why not):
    scrolled into view once the page has stopped moving (a smooth scroll still running would
    add our scroll to its own and carry the element off screen), the centre of its box once
    the box has stopped moving (``_SETTLE``), checked at that very point (``_HIT``) while the
    box is still there."""
    await call_function(cdp, object_id, _SETTLE, CLICK_SETTLE_MS)
    await _scroll_into_view(cdp, ref)
    why = "it kept moving"
    for _ in range(3):  # a box that moved again, or went off screen, since: once more
        settled = await call_function(cdp, object_id, _SETTLE, CLICK_SETTLE_MS)
        if not settled or not settled.get("box"):
            return None, "no box on screen"
        quads = (await cdp.send("DOM.getContentQuads", {"backendNodeId": ref.backend_node_id})).get("quads") or []
        if not quads:
            return None, "no box on screen"
        hit = await call_function(cdp, object_id, _HIT, settled["box"])
        if hit.get("moved"):
            continue
        if not settled["stable"]:
            return None, f"it was still moving after {CLICK_SETTLE_MS} ms"
        if hit.get("outside"):
            why = "its centre stayed off screen"
            await _scroll_into_view(cdp, ref)
            continue
        if hit.get("at"):
            return None, f"covered by <{hit['at']}> at the centre of its box"
        q = quads[0]
        return (sum(q[0::2]) / 4, sum(q[1::2]) / 4), ""
    return None, why


async def _scroll_into_view(cdp, ref) -> None:
    try:
        await cdp.send("DOM.scrollIntoViewIfNeeded", {"backendNodeId": ref.backend_node_id})
    except Exception as exc:  # noqa: BLE001 - inline elements without a layout object
        if _is_stale(str(exc)):
            raise


async def _type(session, cdp, ref, object_id, action: Action, result: ActionResult) -> None:
    value = action.value or ""
    await _probe(cdp, object_id, action.element_id or "")
    kind = await call_function(
        cdp,
        object_id,
        "function() { return [this.tagName.toLowerCase(), (this.type || '').toLowerCase(), !!this.readOnly, !!this.isContentEditable]; }",
    )
    tag, input_type, readonly, editable = kind
    if not (tag in ("input", "textarea") or editable):
        raise ActionFailed(f"element {action.element_id} ({tag}) is not a text field; CLICK it or pick a field")
    if readonly:
        raise ActionFailed(f"element {action.element_id} is read-only")
    if tag == "input" and input_type in ("checkbox", "radio", "button", "submit", "reset", "file", "image"):
        raise ActionFailed(f"element {action.element_id} is an input of type {input_type}: use CLICK")
    await _scroll_into_view(cdp, ref)
    if tag == "input" and input_type in _VALUE_SET_TYPES:
        await call_function(cdp, object_id, "function() { this.focus(); }")
        await call_function(cdp, object_id, _SET_VALUE, value)
        result.method = "set-value"
    else:
        before = await call_function(cdp, object_id, _FOCUS_SELECT)
        keyboard = session.page.keyboard
        if value:
            await keyboard.insert_text(value)
        else:
            await keyboard.press("Delete")
        result.method = "keyboard"
        now = await call_function(cdp, object_id, _VALUE)
        if before and value and now == before + value:
            # the page moved the caret to the end when the field was focused, so the old text
            # stayed in front of the new: the value is set as a whole instead
            await call_function(cdp, object_id, _SET_VALUE, value)
            result.method = "keyboard, then set-value (the old text had stayed)"
    if action.press_enter:
        await session.page.keyboard.press("Enter")
