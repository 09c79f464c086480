"""What a person does in the session's browser, as events: every click, the final value typed
into each field, every select, every form sent with Enter, every navigation the person made
(an address typed, back or forward). ``webagent teach`` turns them into a run's steps.

A script in every document (``add_init_script``) listens in the capture phase and calls a
binding (``expose_binding``) with each event. A click (but on a checkbox or radio, which
toggles in place) is held: its default action and the
page's own handlers wait until the recorder has read the page as it was before the click (the
element's backend node id, an observation), then the script clicks the element again
(``el.click()``), so the page sees one click and nothing navigates away before it is read.
A field's value is sent when the field changes (on leaving it) or when a form is sent while
it is being edited; a password field's value is never an event's value: it is kept in
``Recorder.secrets`` (memory only) so that the trace can scrub it from URLs and titles.

The script calls the binding for every event of one gesture at once, in order (a field still
being edited, then the select or click that left it), never after awaiting an earlier call:
a select recorded only after the field it flushed came back let the click that followed
overtake it, on a machine under load. ``Recorder.events`` holds ``RecordedEvent``s in the
order the person made them; each carries
the observation the element was read from (``obs``) and its id there (``element_id``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from webagent.browser.models import Observation
from webagent.errors import first_line

BINDING = "__webagentTeachEvent"
NAV_AFTER_ACTION_S = 3.0  # a navigation this soon after a recorded click or Enter is that action's doing

SCRIPT = """(() => {
  if (window.__webagentTeach) return;
  const T = window.__webagentTeach = {held: [], dirty: new Set(), replaying: false, enter: null, pending: 0};
  const TEXT = new Set(['', 'text', 'search', 'email', 'password', 'tel', 'url', 'number', 'date',
                        'datetime-local', 'time', 'month', 'week']);
  const isText = (el) => !!el && ((el.tagName === 'INPUT' && TEXT.has((el.getAttribute('type') || '').toLowerCase()))
                                  || el.tagName === 'TEXTAREA' || el.isContentEditable);
  const CLICKABLE = 'a,button,input,select,textarea,label,summary,[role=button],[role=link],[role=checkbox],' +
    '[role=radio],[role=switch],[role=tab],[role=menuitem],[role=option],[onclick]';
  const send = (kind, el, extra) => {
    T.held.push(el);
    return window.__webagentTeachEvent(Object.assign({kind: kind, seq: T.held.length - 1}, extra || {}));
  };
  const typed = (el, enter) => {
    T.dirty.delete(el);
    const password = el.tagName === 'INPUT' && (el.getAttribute('type') || '').toLowerCase() === 'password';
    const value = el.isContentEditable ? el.innerText : el.value;
    // a password's value is handed over only to be scrubbed from what is written (a URL, a title)
    return send('type', el, {value: password ? '' : value, password: password, secret: password ? value : '',
                             enter: !!enter});
  };
  const flush = (except) => Promise.all([...T.dirty].filter((el) => el !== except).map((el) => typed(el, false)));
  const target = (e) => {
    const first = e.composedPath()[0];
    return first instanceof Element ? (first.closest(CLICKABLE) || first) : null;
  };
  document.addEventListener('input', (e) => { const el = e.composedPath()[0]; if (isText(el)) T.dirty.add(el); }, true);
  document.addEventListener('change', (e) => {
    const el = e.composedPath()[0];
    if (isText(el)) { if (T.dirty.has(el)) typed(el, false); }
    else if (el && el.tagName === 'SELECT') {
      const opt = el.selectedOptions[0];
      const value = opt ? opt.text.replace(/\\s+/g, ' ').trim() : '';
      flush(el); send('select', el, {value: value});  // fields typed before it come first
    }
  }, true);
  document.addEventListener('keydown', (e) => {
    const el = e.composedPath()[0];
    T.enter = (e.key === 'Enter' && isText(el) && el.tagName === 'INPUT') ? el : null;
  }, true);
  document.addEventListener('submit', (e) => {
    const el = T.enter;
    T.enter = null;
    if (!el || !e.target.contains(el) || T.replaying) return;
    // sent with Enter from a field: the field's value, with Enter, is the step (then the form goes)
    e.preventDefault(); e.stopImmediatePropagation();
    const form = e.target;
    Promise.all([flush(el), typed(el, true)]).finally(() => { T.replaying = true; try { form.requestSubmit(); } finally { T.replaying = false; } });
  }, true);
  document.addEventListener('click', (e) => {
    if (T.replaying || !e.isTrusted) return;
    const el = target(e);
    if (!el) return;
    const tag = el.tagName;
    // focusing a field, opening a select, or a label that clicks its own control: not steps
    if (isText(el) || tag === 'SELECT' || tag === 'OPTION' || (tag === 'LABEL' && el.control)) return;
    const kind = (el.getAttribute('type') || '').toLowerCase();
    if (tag === 'INPUT' && (kind === 'checkbox' || kind === 'radio')) {
      // a box toggles in place (nothing navigates): recorded as it is, the click not held
      flush(null); send('click', el);
      return;
    }
    e.preventDefault(); e.stopImmediatePropagation();
    T.pending++;
    const enter = T.enter;
    T.enter = null;
    // Enter in a field clicks its form's default button for it: the step is the field's Enter
    const implicit = enter && el.form && el.form === enter.form && (el.type || '').toLowerCase() === 'submit';
    const step = implicit ? Promise.all([flush(enter), typed(enter, true)]) : Promise.all([flush(null), send('click', el)]);
    step.finally(() => {
      T.replaying = true;
      try { el.click(); } finally { T.replaying = false; T.pending--; }
    });
  }, true);
  window.addEventListener('pagehide', () => { flush(null); }, true);
})();"""


@dataclass
class RecordedEvent:
    kind: str  # click | type | select | goto
    value: str = ""
    password: bool = False
    press_enter: bool = False
    element_id: str | None = None
    obs: Observation | None = None
    url: str = ""


class Recorder:
    """Records what a person does in ``session`` (see the module docstring)."""

    def __init__(self, session, observe: Callable[[], Awaitable[Observation]] | None = None):
        self.session = session
        self.observe = observe or session.observe
        self.events: list[RecordedEvent] = []
        self.errors: list[str] = []
        self.secrets: set[str] = set()  # values typed into password fields (never written)
        self.closed = asyncio.Event()
        self._lock = asyncio.Lock()
        self._obs: Observation | None = None
        self._last_action = 0.0
        self._nav_pending = False  # a recorded click or Enter may navigate once: that is its doing
        self._expected_urls: set[str] = set()

    async def install(self) -> None:
        """Before the first page opens: the script in every document, the binding, the page events."""
        context = self.session.context
        await context.expose_binding(BINDING, self._on_event)
        await context.add_init_script(SCRIPT)
        context.on("page", self._watch)
        for page in context.pages:
            self._watch(page)

    def _watch(self, page) -> None:
        page.on("framenavigated", lambda frame: self._on_navigated(page, frame))
        page.on("load", lambda _: asyncio.ensure_future(self._refresh(page)))
        page.on("close", lambda _: self._on_close())

    def _on_close(self) -> None:
        if not [p for p in self.session.context.pages if not p.is_closed()]:
            self.closed.set()  # the person closed the (last) window: the recording ends

    def expect(self, url: str) -> None:
        """A navigation to ``url`` is the caller's own (the start page), not the person's."""
        self._expected_urls.add(url)

    def _on_navigated(self, page, frame) -> None:
        if frame.parent_frame is not None or frame.url in ("about:blank", ""):
            return
        if frame.url in self._expected_urls:
            self._expected_urls.discard(frame.url)
            return
        if self._nav_pending and time.monotonic() - self._last_action < NAV_AFTER_ACTION_S:
            self._nav_pending = False
            return  # a recorded click or Enter sent it
        self.events.append(RecordedEvent("goto", value=frame.url, url=frame.url))

    async def _refresh(self, page) -> None:
        if page is not self.session.page:
            return
        async with self._lock:
            try:
                self._obs = await self.observe()
            except Exception as exc:  # noqa: BLE001 - a page between documents: read again at the next event
                self.errors.append(f"observe {page.url}: {first_line(exc)}")

    async def _on_event(self, source, event: dict) -> None:
        async with self._lock:  # in the order the person made them
            try:
                await self._record(source["page"], event)
            except Exception as exc:  # noqa: BLE001 - one unreadable event must not end the recording
                self.errors.append(f"{event.get('kind')}: {first_line(exc)}")

    async def _record(self, page, event: dict) -> None:
        bid = await self._backend_id(page, int(event["seq"]))
        obs = self._obs
        if obs is None or obs.url != page.url or not any(ref.backend_node_id == bid for ref in obs.elements.values()):
            obs = self._obs = await self.observe()  # the page changed since it was read: read it now
        element_id = next((i for i, ref in obs.elements.items() if ref.backend_node_id == bid), None)
        if element_id is None:
            self.errors.append(f"{event['kind']}: the element is not on the page as the agent reads it")
            return
        kind = event["kind"]
        if event.get("secret"):
            self.secrets.add(str(event["secret"]))  # kept in memory only, to scrub what is written
        last = self.events[-1] if self.events else None
        if (
            kind == "type"
            and event.get("enter")
            and last is not None
            and (last.kind, last.element_id, last.value) == ("type", element_id, str(event.get("value") or ""))
        ):  # the field's change came just before its Enter: one step, typed then sent
            last.press_enter = True
            self._last_action, self._nav_pending = time.monotonic(), True
            return
        self.events.append(
            RecordedEvent(
                kind,
                value=str(event.get("value") or ""),
                password=bool(event.get("password")),
                press_enter=bool(event.get("enter")),
                element_id=element_id,
                obs=obs,
                url=obs.url,
            )
        )
        if kind == "click" or event.get("enter"):
            self._last_action, self._nav_pending = time.monotonic(), True

    async def _backend_id(self, page, seq: int) -> int:
        cdp = await self.session.cdp_session(page)
        held = await cdp.send(
            "Runtime.evaluate", {"expression": f"window.__webagentTeach.held[{seq}]", "objectGroup": "teach"}
        )
        try:
            node = await cdp.send("DOM.describeNode", {"objectId": held["result"]["objectId"]})
            return int(node["node"]["backendNodeId"])
        finally:
            await cdp.send("Runtime.releaseObjectGroup", {"objectGroup": "teach"})

    async def settle(self, timeout_s: float = 10.0) -> None:
        """Until a held click was clicked again and the page it led to loaded (for a script that
        drives the page: Playwright's own waiting does not see a click the recorder holds)."""
        page = self.session.page
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if await page.evaluate("() => !window.__webagentTeach || window.__webagentTeach.pending === 0"):
                    break
            except Exception:  # noqa: BLE001 - the page is between documents: ask the next one
                pass
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.1)  # a navigation the click started begins
        async with self._lock:
            pass  # the events sent so far are recorded
        try:
            await self.session.page.wait_for_load_state("load", timeout=timeout_s * 1000)
        except Exception:  # noqa: BLE001 - a slow page: recorded as it is
            pass

    async def flush(self) -> None:
        """Fields still being edited when the recording ends: their values become steps."""
        page = self.session.page
        if page is None or page.is_closed():
            return
        try:
            await page.evaluate(
                "() => window.__webagentTeach && Promise.all([...window.__webagentTeach.dirty].map((el) => "
                "el.dispatchEvent(new Event('change', {bubbles: true}))))"
            )
            await asyncio.sleep(0.2)
            async with self._lock:
                pass  # the events those changes sent are recorded
        except Exception as exc:  # noqa: BLE001 - the page is gone: nothing left to flush
            self.errors.append(f"flush: {first_line(exc)}")
