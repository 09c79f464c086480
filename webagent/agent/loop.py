"""The live loop: observe → snippets in the agent view → (gists → look-up) → action →
execute → observe again, until the model answers DONE, the site shows the result
(``after_step``), ``max_steps`` is reached, or the same action on the same-looking page
comes a third time in the run (``stuck``; this also catches loops between pages).

* Every action's result says what happened: "ok" (the page changed; a new URL is named),
  "no change" (same URL, same view), or "failed: why" (element gone, hidden, disabled,
  covered, timeout, navigation refused). It goes into the history the next prompt shows;
  the second time the same action meets the same-looking page adds a warning. An unusable
  model reply (after the one re-ask) is a failed step with no action; nothing is defaulted.
* Parts of a page that change on their own (a clock, a ticker) do not count as a change:
  the page is captured once more just before acting, and lines that changed while the
  model was deciding are left out of the comparison (``_changed``).
* Only validity limits what the model may answer (``webagent.web.live_action``): every
  control the page shows (a disabled one is shown, not offered), BACK when this run has an
  earlier page, DONE at any step. Nothing reads the task to hide or refuse an action.
* "no change" is decided only after the page went quiet (``BrowserSession.quiet``): an
  effect that shows up a moment later (a timer, a request) counts as a change. An "ok"
  says briefly what the page now shows that it did not (``_news``).
* Each step's record keeps the exact prompt and reply of every model call (``calls``).
* A model endpoint that is down, or a page that cannot be captured, ends the run with
  status ``error``.
* ``dry_run``: actions are predicted and reported, never executed (the page stays as it is).
* Per-step accounting uses ``client.scoped()``.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from webagent.agent import elements
from webagent.agent.decide import Decision, decide
from webagent.agent.record import Recorder
from webagent.agent.secrets import mask, mask_task, reveal, uses_secret
from webagent.agent.trace import TraceWriter, scrub
from webagent.browser import REDACTED, Action, ActionResult, Observation
from webagent.errors import UserError
from webagent.llm.cache import content_hash
from webagent.llm.client import LLMClient
from webagent.replay.fingerprint import target_of
from webagent.web.agent_view import LINE_ID, view_snippets
from webagent.web.form_check import check_form, form_fields
from webagent.web.live_action import LiveAction
from webagent.web.live_chat import LiveChat
from webagent.web.memory import GistReuse

STATUSES = ("done", "max_steps", "stuck", "error")
STUCK_REPEATS = 3
NEWS_LINES = 2  # changed lines quoted in an action's result
_DID = {"TYPE": "typed", "SELECT": "chose", "CLICK": "clicked"}  # what the view says this run did to a control
# The conversation (after the fixed instructions and examples) restarts beyond this many
# words per context token: words run about 1.5 tokens here, and the reply needs room.
CHAT_SHARE = 0.4


@dataclass
class AgentOptions:
    max_steps: int = 15
    lookup: str = "auto"  # "auto": skip gists and look-up when the whole page fits; "always"
    max_lookup: int = 3
    context_tokens: int = 8192
    act_on: str = "looked-up"
    depth: int | str = "auto"
    budget_words: int = 300
    dry_run: bool = False
    screenshots: bool = True
    prompt: str = "chat"  # "chat": one growing conversation (prompt cache); "full": each step whole
    form_check: bool = False  # a short model call before a form is sent (webagent.web.form_check; the CLI's default)


@dataclass
class AgentResult:
    status: str
    answer: str | None = None
    steps: int = 0
    trace_dir: str | None = None
    usage: dict = field(default_factory=dict)
    error: str | None = None
    failed_steps: int = 0
    final_url: str = ""  # the page the run ended on (after the last action)
    final_title: str = ""

    def to_json(self) -> dict:
        return {
            "status": self.status,
            "answer": self.answer,
            "steps": self.steps,
            "trace_dir": self.trace_dir,
            "usage": self.usage,
            "error": self.error,
            "failed_steps": self.failed_steps,
            "final_url": self.final_url,
            "final_title": self.final_title,
        }


def to_browser_action(action: LiveAction, secrets: dict[str, str] | None = None) -> Action:
    """The browser's action; a secret's placeholder in a TYPE value becomes its value here, and only here."""
    op = action.operation
    if op == "SCROLL":
        return Action(
            op="SCROLL",
            element_id=action.element_id or None,
            direction="up" if action.value.lower() == "up" else "down",
        )
    if op == "GOTO":
        return Action(op="GOTO", value=action.value)
    if op == "BACK":
        return Action(op="BACK")
    if op == "DONE":
        raise ValueError("DONE ends the run: it is not a browser action")
    value = reveal(action.value, secrets) if secrets and op == "TYPE" else action.value
    return Action(
        op=op, element_id=action.element_id, value=value or None, press_enter=action.press_enter and op == "TYPE"
    )


class _Repeats:
    """The same action on the same-looking page, anywhere in the run: an action that failed
    or changed nothing, or a loop between pages (search, back to the start, search...).
    The second time earns a warning in the prompt, the third ends the run as ``stuck``."""

    def __init__(self) -> None:
        self.seen: dict[tuple, int] = {}

    def see(self, key: tuple) -> int:
        self.seen[key] = self.seen.get(key, 0) + 1
        return self.seen[key]


@dataclass
class _RunState:
    """What one run carries from step to step."""

    task: str
    options: AgentOptions
    obs: Observation | None = None  # the current observation (taken after the last action)
    history: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)  # the pages observed, in order (all on the allowed sites)
    warning: str = ""
    page: str = ""  # the current page's key: it changes only when an action changes the page
    reuse: GistReuse = field(default_factory=GistReuse)
    secrets: set[str] = field(default_factory=set)  # values never written anywhere (traces scrub them)
    named: dict[str, str] = field(default_factory=dict)  # the model's placeholders: name -> value
    chat: LiveChat | None = None  # the conversation the prompt cache keeps (``webagent.web.live_chat``)
    forms_checked: set = field(default_factory=set)  # (page, form id) checked before sending
    # (element id, ``Control.describe``) -> what this run did to that control. The id tells apart
    # controls of one kind and name (six "Quantity" selects); the description keeps an id that a
    # new document reuses from carrying the note to another control.
    did: dict[tuple[str, str], str] = field(default_factory=dict)
    # password field id -> a hash of what this run last typed into it (never the value itself)
    passwords_typed: dict[str, str] = field(default_factory=dict)
    _view: tuple | None = None  # (observation, snippets, view) of the last rendering

    def view(self, obs):
        """(snippets, view) of ``obs`` in the agent view, rendered once per observation."""
        if self._view is None or self._view[0] is not obs:
            try:
                snippets, view = view_snippets(
                    obs.cleaned_html, depth=self.options.depth, budget_words=self.options.budget_words
                )
            except UserError as exc:
                snippets, view = [], exc
            if self.named:  # a secret the page shows (typed into a text field) reads as its placeholder
                snippets = [replace(s, text=mask(s.text, self.named)) for s in snippets]
            self._view = (obs, snippets, view)
        return self._view[1], self._view[2]

    def annotated(self, snippets, controls: dict) -> list:
        """The snippets the model reads: a control this run typed into, chose or clicked says so
        ("you typed this at step 2"). Only the model's copy: change detection reads the page alone."""
        if not self.did:
            return snippets

        def note(line: str) -> str:
            m = LINE_ID.match(line)
            control = controls.get(m.group(1)) if m else None
            done = self.did.get(_did_key(control)) if control else None
            return f"{line} ({done})" if done else line

        return [replace(s, text="\n".join(note(line) for line in s.text.split("\n"))) for s in snippets]

    def shown(self, obs) -> list[str]:
        """The page's lines as the model reads them."""
        snippets, _ = self.view(obs)
        return "\n".join(s.text for s in snippets).splitlines()

    def lines(self, obs) -> list[str]:
        """What the model would see of a page, ids aside (a reload gives new ids)."""
        snippets, _ = self.view(obs)
        return LINE_ID.sub("[]", "\n".join(s.text for s in snippets)).splitlines()

    @property
    def can_back(self) -> bool:
        return bool(self.urls) and any(u != self.urls[-1] for u in self.urls[:-1])


async def run_agent(
    browser,
    client: LLMClient,
    task: str,
    *,
    options: AgentOptions | None = None,
    trace: TraceWriter | None = None,
    recorder: Recorder | None = None,
    progress: Callable[[str], None] | None = None,
    after_step: Callable[[], Awaitable[str | None]] | None = None,
    secrets: dict[str, str] | None = None,
) -> AgentResult:
    """Run ``task`` from the browser's current page. ``after_step`` (MiniWoB) may end the
    run after an executed action by returning a reason (the run is then ``done``).
    ``secrets`` (name -> value), with those in the task, reach the model only as
    placeholders (``webagent.agent.secrets``)."""
    options = options or AgentOptions()
    client = client.scoped()  # this run's usage (the caller's client may serve several runs)
    result = AgentResult(status="max_steps", trace_dir=str(trace.folder) if trace else None)
    task, named = mask_task(task, secrets)
    state = _RunState(
        task,
        options,
        secrets=trace.secrets if trace else set(),
        named=named,
        chat=LiveChat(budget_words=int(options.context_tokens * CHAT_SHARE)) if options.prompt == "chat" else None,
    )
    state.secrets.update(named.values())
    repeats = _Repeats()
    say = progress or (lambda message: None)
    try:
        from webagent.browser.capture import CaptureError

        try:
            state.obs = await browser.observe()
        except CaptureError as exc:
            result.status, result.error = "error", f"the page could not be captured: {exc}"
            return result
        for n in range(1, options.max_steps + 1):
            record, outcome = await _step(browser, client, state, n, trace, recorder, after_step)
            result.steps = n
            action = outcome["action"]
            failed = not outcome["ok"]
            result.failed_steps += failed
            say(f"step {n}: {record['url']}  {record['action_text']}  -> {record['result_text']}")
            if outcome["fatal"]:
                result.status, result.error = "error", outcome["fatal"]
                break
            if outcome["finished"]:
                result.status, result.answer = "done", outcome["finished"]
                break
            if action is not None and action.operation == "DONE":
                result.status, result.answer = "done", scrub(action.value, state.secrets) or None
                break
            # The element by what it is (ids change with each new document), the page by what it shows.
            key = (
                (action.operation, record.get("element"), action.value, record.get("page"))
                if action
                else ("NONE", record.get("page"))
            )
            count = repeats.see(key)
            if count >= STUCK_REPEATS:
                result.status = "stuck"
                result.error = f"the same action on the same page {STUCK_REPEATS} times: {record['action_text']}"
                break
            state.warning = (
                f"Warning: you already did {record['action_text']} on this same page, and it "
                "did not help. Do something else."
                if count == 2
                else ""
            )
    except BaseException as exc:  # the trace says how the run ended, then the error goes on
        result.status = "error" if isinstance(exc, Exception) else "interrupted"
        result.error = f"{type(exc).__name__}: {exc}" if isinstance(exc, Exception) else "interrupted"
        raise
    finally:
        result.usage = client.usage.to_dict()
        if state.obs is not None:
            result.final_url, result.final_title = state.obs.url, state.obs.title
        if trace is not None:
            trace.write_run({"task": task, **result.to_json(), "options": vars(options)})
    return result


async def _step(browser, client, state: _RunState, n, trace, recorder, after_step):
    """Decide on ``state.obs``, act, observe again; returns (record, outcome)."""
    options, obs, secrets = state.options, state.obs, state.secrets
    assert obs is not None, "the run observes the page before its first step"
    step_client = client.scoped(transcript=True)
    times: dict[str, float] = {}
    record: dict = {"step": n}
    shot = None
    if trace is not None and options.screenshots:
        t0 = time.perf_counter()
        try:
            shot = await browser.page.screenshot(full_page=True, timeout=5000)
        except Exception:  # noqa: BLE001 - a step without a picture is still a step
            shot = None
        times["screenshot_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    snippets, view = state.view(obs)
    problem = None if snippets else "the page shows nothing to act on"
    if isinstance(view, UserError):
        problem, view = f"the page has nothing to act on: {view}", None
    times["view_s"] = time.perf_counter() - t0
    before = state.lines(obs)
    if not state.page:
        state.page = _page_key(obs.url, before)
    if not state.urls or state.urls[-1] != obs.url:
        state.urls.append(obs.url)
    controls = view.controls if view else {}
    record.update(
        url=obs.url,
        title=obs.title,
        page=state.page,
        snippets=len(snippets),
        raw_words=sum(s.words for s in snippets),
        controls=len(controls),
        frame_errors=obs.frame_errors,
        truncated=obs.truncated,
    )
    decision: Decision | None = None
    if snippets:
        decision = await decide(
            step_client,
            state.annotated(snippets, controls),
            task=state.task,
            history=state.history,
            controls=controls,
            lookup=options.lookup,
            max_lookup=options.max_lookup,
            context_tokens=options.context_tokens,
            act_on=options.act_on,
            reuse=state.reuse,
            url=obs.url,
            title=obs.title,
            can_back=state.can_back,
            chat=state.chat,
            warning=state.warning,
        )
        times.update(decision.times)
        problem = decision.outcome.problem
    action = decision.outcome.action if decision else None
    secret = bool(
        action
        and action.element_id
        and action.operation == "TYPE"
        and (ref := obs.elements.get(action.element_id)) is not None
        and ref.is_password
        and not uses_secret(action.value, state.named)
    )  # a placeholder is safe to show
    if secret and action and action.value:
        secrets.add(action.value)
    control = controls.get(action.element_id) if action and action.element_id else None
    description = (
        control.describe()
        if control
        else (elements.describe(obs.cleaned_html, action.element_id) if action and action.element_id else "")
    )
    action_text = _action_text(action, description, secret) if action else f"no usable action ({problem})"
    fatal = finished = None
    if decision is not None and decision.endpoint_failed:
        fatal = f"the model endpoint failed: {problem}"
    held = await _check_form(step_client, state, controls, control, action, record) if not options.dry_run else None
    executed: ActionResult | None = None
    ok = changed = False
    if action is None:
        result_text = "failed: no usable action"
    elif held is not None:
        result_text = f"not sent: a check of the form before sending says: {held} (send it again if the form is right)"
    elif action.operation == "DONE":
        ok, changed, result_text = True, True, "done" + (f": {scrub(action.value, secrets)}" if action.value else "")
    elif options.dry_run:
        ok, result_text = True, "not executed (dry run)"
    else:
        act = await _act(browser, state, obs, before, action, after_step, times)
        executed, ok, changed, finished, result_text = act.executed, act.ok, act.changed, act.finished, act.text
        fatal = fatal or act.fatal
        if ok and recorder is not None and action.operation in ("CLICK", "TYPE", "SELECT"):
            recorder.add(obs, action.operation, action.element_id, action.value, secret)
        if ok and control is not None and action.operation in _DID:
            state.did[_did_key(control)] = f"you {_DID[action.operation]} this at step {n}"
    state.history.append(scrub(f"{n}. {action_text} -> {result_text}", secrets))
    no_decision: dict[str, Any] = {
        "context_words": 0,
        "lookup_skipped": None,
        "gists": [],
        "gist_fallbacks": [],
        "gists_reused": 0,
        "lookup": None,
        "expanded": [],
        "dropped_for_context": [],
        "replies": [],
        "failures": 1,
    }
    record.update(
        decision.trace_fields() if decision else no_decision,
        action=action.model_dump() if action else None,
        action_text=action_text,
        element=description or None,
        problem=problem,
        result=executed.model_dump() if executed else None,
        result_text=result_text,
        ok=ok,
        changed=changed,
        warning=state.warning or None,
        dry_run=options.dry_run,
        calls=step_client.transcript,
        usage=step_client.usage.to_dict(),
        times={k: round(v, 4) for k, v in times.items()},
    )
    record["target"] = (
        target_of(obs, action) if executed is not None and ok else None
    )  # replay: the element, findable again
    if secret and record["action"]:
        record["action"]["value"] = REDACTED
    if trace is not None:
        box = elements.box(obs.raw_html, action.element_id) if action and action.element_id else None
        record = trace.write_step(record, shot, box)
    return record, {"action": action, "ok": ok, "changed": changed, "fatal": fatal, "finished": finished}


@dataclass
class _Acted:
    executed: ActionResult
    ok: bool
    changed: bool
    text: str  # the outcome the model reads: "ok; the page now shows ...", "no visible change", "failed: ..."
    finished: str | None = None  # the site's word (``after_step``)
    fatal: str | None = None


async def _act(browser, state: _RunState, obs, before: list[str], action: LiveAction, after_step, times) -> _Acted:
    """Carry out ``action`` on ``obs``, observe the page again into ``state.obs``, and say what changed."""
    from webagent.browser.capture import CaptureError

    fatal = finished = None
    t0 = time.perf_counter()
    try:  # the page as it is now: what changed while the model decided changes on its own
        during = state.lines(await browser.observe())
    except CaptureError:
        during = before
    recheck_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    executed = await browser.act(to_browser_action(action, state.named), obs)
    times["execute_s"] = time.perf_counter() - t0
    if after_step is not None:
        finished = await after_step()
    t0 = time.perf_counter()
    try:
        state.obs = await browser.observe()  # the next step's page, or the page the run ended on
    except CaptureError as exc:
        if not finished:
            fatal = f"the page could not be captured after the action: {exc}"
    times["observe_s"] = time.perf_counter() - t0 + recheck_s  # both captures of this step
    assert state.obs is not None  # this one, or (capture failed) the one acted on
    after = state.lines(state.obs)  # (the next step reads the same rendering)
    retyped = executed.ok and _retyped_password(state, obs, action)
    changed = bool(finished) or (not fatal and (state.obs.url != obs.url or retyped or _changed(before, during, after)))
    if executed.ok and not changed and not fatal:  # a late effect (a timer, a request) is a change too
        t0 = time.perf_counter()
        if await browser.quiet():
            try:
                state.obs = await browser.observe()
                after = state.lines(state.obs)
                changed = state.obs.url != obs.url or _changed(before, during, after)
            except CaptureError:
                pass
        times["quiet_s"] = time.perf_counter() - t0
    if changed:
        state.page = _page_key(state.obs.url, after)
    if not executed.ok:
        text = f"failed: {executed.error}"
    elif changed:
        text = "ok" + (f", now on {state.obs.url}" if state.obs.url != obs.url else "")
        if finished:
            text += f"; {finished}"
        elif news := _news(during, state.shown(state.obs), state.obs.url != obs.url, action.element_id):
            text += f"; the page now shows {news}"
    else:
        text = "no visible change"
    if executed.note:
        text += f" ({executed.note})"
    return _Acted(executed, executed.ok, changed, text, finished, fatal)


def _did_key(control) -> tuple[str, str]:
    """The key of ``_RunState.did``: one control, however many share its kind and name."""
    return control.id, control.describe()


def _retyped_password(state: _RunState, obs, action: LiveAction) -> bool:
    """Whether a TYPE put another value into a password field than this run typed there before:
    the page shows any value as the same dots, so only the run can tell that it changed."""
    ref = obs.elements.get(action.element_id or "") if action.operation == "TYPE" else None
    if ref is None or not ref.is_password:
        return False
    typed = content_hash(reveal(action.value, state.named))
    before, state.passwords_typed[action.element_id] = state.passwords_typed.get(action.element_id), typed
    return before is not None and before != typed


def _page_key(url: str, lines: list[str]) -> str:
    """A page by what the model sees of it (``_RunState.lines``) and its URL."""
    return content_hash(url, "\n".join(lines))


def _changed(before: list[str], during: list[str], after: list[str]) -> bool:
    """Whether the action changed the page: ``after`` (just after it) differs from ``during``
    (just before it) other than in the lines that already differed between ``before`` (the
    page the model was shown) and ``during`` -- those change on their own."""
    if len(after) != len(during):
        return True
    moving = {i for i, (a, b) in enumerate(zip(before, during)) if a != b} if len(before) == len(during) else set()
    return any(a != b for i, (a, b) in enumerate(zip(during, after)) if i not in moving)


async def _check_form(client, state: _RunState, controls: dict, control, action, record: dict) -> str | None:
    """Before a form is sent, once per page state: a short model call on the task and the
    form's fields (``webagent.web.form_check``); what it finds missing, or None to send."""
    if not (state.options.form_check and action is not None and action.operation == "CLICK" and control is not None):
        return None
    fields = form_fields(controls, control)
    if not fields or (state.page, control.form) in state.forms_checked:
        return None
    state.forms_checked.add((state.page, control.form))
    check = await check_form(client, state.task, fields)
    record["form_check"] = {"ready": check.ready, "fix": check.fix, "calls": check.calls, "failures": check.failures}
    return None if check.ready else (check.fix or "a field does not hold what the task asks yet")


def _news(before: list[str], after: list[str], new_page: bool, acted_on: str = "") -> str:
    """A few of the lines the page shows now that it did not (a flash message, a changed
    total), briefly: what the model needs to see that its action worked. ``before`` is
    without ids (``_RunState.lines``), ``after`` as the model reads it."""
    if new_page:
        return ""
    seen = set(before)
    own = f"[{acted_on}] " if acted_on else None  # the control acted on: its line says what was done
    added = [
        line.strip()
        for line in after
        if LINE_ID.sub("[]", line) not in seen and line.strip() and not (own and line.startswith(own))
    ]
    if not added:
        return ""
    shown = "; ".join(f'"{line[:70]}"' for line in added[:NEWS_LINES])
    return shown + (f" and {len(added) - NEWS_LINES} more changed lines" if len(added) > NEWS_LINES else "")


def _action_text(action: LiveAction, description: str, secret: bool) -> str:
    shown = action.model_copy(update={"value": REDACTED}) if secret else action
    text = shown.describe()
    return f"{text} {description}" if description else text
