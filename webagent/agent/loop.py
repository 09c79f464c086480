"""The live loop: observe → snippets in the agent view → (gists → look-up) → action →
execute → observe again, until the model answers DONE, the site shows the result
(``after_step``), ``max_steps`` is reached, or the same action on the same-looking page
comes a third time in the run (``stuck``; this also catches loops between pages).

* Every action's result says what happened (``webagent.agent.act``): "ok" and what the
  page now shows, "no visible change" (decided after the page went quiet; a clock's ticking
  does not count), or "failed: why". It goes into the history the next prompt shows; the
  second time the same action meets the same-looking page adds a warning, as does a TYPE,
  SELECT or FILL setting the same values again at the same address, however the page looks. An
  unusable model reply (after the one re-ask) is a failed step with no action; nothing is defaulted.
* Only validity limits what the model may answer (``webagent.web.live_action``): every
  control the page shows (a disabled one is shown, not offered), BACK when this run has an
  earlier page, DONE at any step (its answer not a quote of the prompt's own words: its
  warning, a secret's placeholder). Nothing reads the task to hide or refuse an action.
* A confirm or prompt the model's own action raised is held open (``BrowserSession.dialog``,
  unless the session accepts dialogs at once): the step's result says what the page asks;
  the next step shows the same page with the dialog's text, and the choices are the
  dialog's answers (DIALOG accept/dismiss) and DONE -- the page can do nothing else. The
  answer finishes the action, and its result says what the page did. A dialog still open
  when the run ends is dismissed (``run.json`` says so).
* What the run carries from step to step, and the model's copy of the page with what the
  run did to each control, is ``webagent.agent.state``.
* Each step's record keeps the exact prompt and reply of every model call (``calls``).
* A model endpoint that is down, or a page that cannot be captured, ends the run with
  status ``error``.
* ``dry_run``: actions are predicted and reported, never executed (the page stays as it is).
* Issue 47's guards, each an option: ``loop_breaker`` (``webagent.agent.loop_breaker``: an
  action done on a page state leaves that state's choices, at once if it changed nothing, on a
  return if it led away; the model is told what the page already shows; a third repeat
  re-plans -- ``StepOutcome.loop.replan``, ``_replan``; without it, the warning and ``stuck``
  above), ``grounded_done`` (``webagent.agent.grounding``:
  a DONE refused once when no page showed its answer, or when it gives none and nothing on the
  site changed; the refusal is the step's problem, counted with the refusals) and ``reason``
  (a short reason before the action, in the step's record).
* Per-step accounting uses ``client.scoped()``.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any

from webagent.agent import elements
from webagent.agent.act import Acted, act, to_browser_action
from webagent.agent.decide import DecideContext, Decision, decide, decide_page
from webagent.agent.grounding import form_method, site_change
from webagent.agent.loop_breaker import LoopVerdict
from webagent.agent.mind2web_export import Mind2WebRecorder
from webagent.agent.options import AgentOptions, RunStatus
from webagent.agent.secrets import mask, mask_task, placeholder, uses_secret
from webagent.agent.state import DID, RunState, did_key, page_key
from webagent.browser import Observation
from webagent.browser.errors import CaptureError
from webagent.browser.models import Dialog
from webagent.errors import UserError
from webagent.llm.client import LLMClient
from webagent.problems import Problem
from webagent.skills import store as skill_store
from webagent.skills.learn import site_of
from webagent.skills.offer import Offer
from webagent.skills.plan import asker
from webagent.trace.record import StepLine, StepRecord, history_line, step_record
from webagent.trace.writer import TraceWriter, screenshot, scrub
from webagent.web.agent_view import Control
from webagent.web.form_check import check_form, form_fields
from webagent.web.live_action import LiveAction, LiveOutcome
from webagent.web.live_chat import LiveChat

STUCK_REPEATS = 3
# The conversation (after the fixed instructions and examples) restarts beyond this many
# words per context token: words run about 1.5 tokens here, and the reply needs room.
CHAT_SHARE = 0.4


@dataclass
class AgentResult:
    status: RunStatus
    answer: str | None = None
    steps: int = 0
    trace_dir: str | None = None
    usage: dict = field(default_factory=dict)
    error: str | None = None
    failed_steps: int = 0
    final_url: str = ""  # the page the run ended on (after the last action)
    final_title: str = ""

    def to_json(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(AgentResult)}  # a subclass adds its own


class _Repeats:
    """The same action on the same-looking page, anywhere in the run: an action that failed
    or changed nothing, or a loop between pages (search, back to the start, search...).
    The second time earns a warning in the prompt, the third ends the run as ``stuck``."""

    def __init__(self) -> None:
        self.seen: dict[tuple, int] = {}
        self.steps: dict[tuple, int] = {}  # a value-setting action at an address -> the step that first did it

    def see(self, key: tuple) -> int:
        self.seen[key] = self.seen.get(key, 0) + 1
        return self.seen[key]

    def first(self, key: tuple | None, step: int) -> int | None:
        """The step that first did ``key`` if it is not this one (None the first time, or no key)."""
        if key is None:
            return None
        then = self.steps.setdefault(key, step)
        return then if then != step else None


async def run_agent(
    browser,
    client: LLMClient,
    task: str,
    *,
    options: AgentOptions | None = None,
    trace: TraceWriter | None = None,
    recorder: Mind2WebRecorder | None = None,
    progress: Callable[[str], None] | None = None,
    after_step: Callable[[int], Awaitable[str | None]] | None = None,
    secrets: dict[str, str] | None = None,
    skills: list | None = None,
) -> AgentResult:
    """Run ``task`` from the browser's current page. ``after_step(n)`` (the site's word:
    MiniWoB's reward, an app's check, the demo shop's order), called after the action of step
    ``n``, may end the run by returning a reason (the run is then ``done``).
    ``secrets`` (name -> value), with those in the task, reach the model only as
    placeholders (``webagent.agent.secrets``)."""
    started = time.perf_counter()
    options = options or AgentOptions()
    client = client.scoped()  # this run's usage (the caller's client may serve several runs)
    result = AgentResult(status="max_steps", trace_dir=str(trace.folder) if trace else None)
    task, named = mask_task(task, secrets)
    state = RunState(
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
        try:
            state.obs = await browser.observe()
        except CaptureError as exc:
            result.status, result.error = "error", f"the page could not be captured: {exc}"
            return result
        if options.skills:  # the start site's skills (``webagent skills``; none offered unless some were learned)
            state.skills.known = skills if skills is not None else skill_store.load(site_of(state.obs.url))
            state.skills.plan = options.plan
            state.skills.secrets = list(state.named)  # (a log-in is offered only with a password to give)
            state.skills.menu_for(state.task, skill_states=options.skill_states, menu=options.menu)
        for n in range(1, options.max_steps + 1):
            outcome = await _step(browser, client, state, n, trace, recorder, after_step)
            record, action = outcome.record, outcome.action
            result.steps = n
            result.failed_steps += not outcome.ok
            say(StepLine(f"step {n}: {record.url}  {record.action_text}  -> {record.result_text}", record))
            if outcome.fatal:
                result.status, result.error = "error", outcome.fatal
                break
            if outcome.finished:
                result.status, result.answer = "done", outcome.finished
                break
            if action is not None and action.operation == "DONE" and outcome.ok:  # (not a refused DONE)
                result.status, result.answer = "done", scrub(action.value, state.secrets) or None
                break
            if outcome.loop is not None:  # the loop breaker's word (``loop_breaker``)
                if outcome.loop.stuck:
                    result.status, result.error = "stuck", outcome.loop.stuck
                    break
                if outcome.loop.replan:
                    _replan(state)
            if outcome.loop is not None and (action is not None or outcome.loop.warning):
                earlier = repeats.first(_setting(action, record), n) if action else None
                state.warning = outcome.loop.warning or (
                    f"Warning: you already did {record.action_text} on this page at step {earlier}, with "
                    "the same values. Do something else."
                    if earlier
                    else ""
                )
                continue
            # The element by what it is (ids change with each new document), the page by what it shows.
            key = (
                ("FILL", record.element, json.dumps(_fields(record)), record.page)
                if action and action.operation == "FILL"
                else (action.operation, record.element, action.value, record.page)
                if action and action.operation != "SKILL"
                # a skill called again with the same values: a loop wherever it is called from
                # (each call may land on a new page: the record it created)
                else ("SKILL", record.element, json.dumps(action.args, sort_keys=True))
                if action
                else ("NONE", record.page)
            )
            count = repeats.see(key)
            if count >= STUCK_REPEATS:
                result.status = "stuck"
                result.error = f"the same action on the same page {STUCK_REPEATS} times: {record.action_text}"
                break
            # the same values set again at the same address, the page's look aside (a dropdown the
            # FILL's click toggled): the 1.5B filled the same search six times, its answer shown
            earlier = repeats.first(_setting(action, record), n) if action else None
            state.warning = (
                f"Warning: you already did {record.action_text} on this same page, and it "
                "did not help. Do something else."
                if count == 2
                else f"Warning: you already did {record.action_text} on this page at step {earlier}, with "
                "the same values. Do something else."
                if earlier
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
        left_open = await _close_dialog(browser)
        if trace is not None:  # with what a replay of it needs: the sites it may go to, the page it ended on
            run = {
                "task": task,
                **result.to_json(),
                "allow_domains": list(getattr(browser, "allowed_domains", None) or []),
                "wall_s": round(time.perf_counter() - started, 3),
                "options": vars(options),
            }
            if left_open:
                run["dialog_left_open"] = scrub(left_open, state.secrets)
            trace.write_run(run)
    return result


@dataclass
class StepOutcome:
    """What one step did, for the loop to end the run or go on."""

    record: StepRecord  # as the trace keeps it
    action: LiveAction | None  # the model's (None: no usable action)
    ok: bool
    fatal: str | None = None  # why the run cannot go on (the model endpoint, the page capture)
    finished: str | None = None  # the site's word (``after_step``): the run is done
    loop: LoopVerdict | None = None  # the loop breaker's word (None: it is off, or had nothing to say of a step)


@dataclass
class _Seen:
    """A step's page, observed and offered: what its decision reads and its record says of it."""

    obs: Observation
    dialog: Dialog | None  # a dialog the last action raised: the page waits for its answer
    shot: bytes | None
    snippets: list
    controls: dict[str, Control]
    before: list[str]  # its lines, ids aside (``RunState.lines``)
    page: dict[str, Any]  # what the step's record says of the page
    times: dict[str, float]  # the step's, phase by phase
    problem: str | None = None  # why there is nothing to decide on


@dataclass
class _Guarded:
    """The decided action as it may go: the secrets it carries, what it acts on, and the form
    check's word before it sends a form."""

    action: LiveAction | None  # the model's (None: no usable action)
    secret: bool  # a TYPE's value is a password given as itself
    hidden: set[str]  # a FILL's fields that take one
    offer: Offer | None  # the skill a SKILL calls
    control: Control | None
    description: str  # what it acts on, for the record
    held: str | None = None  # why the form check holds the form it would send
    refused: Problem | None = None  # why a DONE is refused (``grounding``): the run goes on


async def _step(browser, client, state: RunState, n, trace, recorder, after_step) -> StepOutcome:
    """One step on ``state.obs``, in phases: observe and offer, decide, guard, execute, record."""
    step_client = client.scoped(transcript=True)
    seen = await _observe(browser, state, trace)
    if seen.snippets:
        decision = await _decide(step_client, state, seen)
        seen.times.update(decision.times)
    else:  # nothing to act on: a failed step
        decision = Decision(LiveOutcome(problem=seen.problem, problem_kind="nothing_to_act_on"), "", [], failures=1)
    action = decision.outcome.action
    guard = await _guard(step_client, state, seen, action)
    check = (lambda: after_step(n)) if after_step is not None else None
    acted = await _execute(browser, step_client, state, seen, guard, check)
    if acted.executed is not None:
        _remember(state, seen, guard, acted, recorder, n)
    record = _record(state, step_client, n, seen, decision, guard, acted)
    loop = _guards_after(state, seen, guard, acted, decision, n, record.action_text)
    if trace is not None:
        box = elements.box(seen.obs.raw_html, action.element_id) if action and action.element_id else None
        record = trace.write_step(record, seen.shot, box)
    if not seen.snippets and seen.dialog is None:
        # An empty capture: a document still loading after a click that navigated (the
        # ceiling saw one on a loaded machine, while the screenshot already showed the page).
        # Nothing was done, so nothing would observe it again: look again before the next step
        # (a capture that fails leaves the page as it was seen; a held dialog is the model's to answer).
        with contextlib.suppress(CaptureError):
            state.obs = await browser.observe()
    fatal = f"the model endpoint failed: {decision.outcome.problem}" if decision.endpoint_failed else None
    return StepOutcome(record, action, acted.ok, fatal or acted.fatal, acted.finished, loop)


async def _observe(browser, state: RunState, trace) -> _Seen:
    """Phase 1: the page in the agent view (rendered once), where the run is, the skills it offers."""
    obs = state.obs
    assert obs is not None, "the run observes the page before its first step"
    times: dict[str, float] = {}
    shot = None
    dialog = getattr(browser, "dialog", None)
    if trace is not None and state.options.screenshots and dialog is None:  # (a screenshot would wait too)
        shot = await screenshot(browser, times)
    t0 = time.perf_counter()
    problem: str | None = None
    try:
        snippets, view = state.view(obs)
        if not snippets and dialog is None:
            # An empty capture: a document still loading after a click that navigated. Look once
            # more after the page settled, rather than spend a step on it (a capture that fails
            # leaves the page as it was seen).
            with contextlib.suppress(CaptureError):
                if hasattr(browser, "settle_any"):
                    await browser.settle_any()
                state.obs = obs = await browser.observe()
                snippets, view = state.view(obs)
        controls = view.controls
        if not snippets:
            problem = "the page shows nothing to act on"
    except UserError as exc:
        snippets, controls, problem = [], {}, f"the page has nothing to act on: {exc}"
    times["view_s"] = time.perf_counter() - t0
    before = state.lines(obs)
    if not state.page:
        state.page = page_key(obs.url, before, state.moving)
    if not state.urls or state.urls[-1] != obs.url:
        state.urls.append(obs.url)
    page: dict[str, Any] = dict(
        page=state.page,
        snippets=len(snippets),
        raw_words=sum(s.words for s in snippets),
        controls=len(controls),
        frame_errors=obs.frame_errors,
        truncated=obs.truncated,
    )
    if dialog is not None:
        page["dialog"] = dialog.model_dump(exclude_none=True)
    if state.skills.known and hasattr(browser, "lands_on"):  # where the menu's start pages lead now
        await state.skills.look_ahead(browser.lands_on, obs.url)
    state.skills.offer(obs, controls, dialog is not None)
    if state.options.grounded_done:  # what a DONE's answer is checked against
        state.grounds.see(before, obs.cleaned_html)
    return _Seen(obs, dialog, shot, snippets, controls, before, page, times, problem)


async def _decide(client, state: RunState, seen: _Seen) -> Decision:
    """Phase 2: the model's action on the page (``agent.decide``)."""
    obs, dialog = seen.obs, seen.dialog
    known = tuple(map(placeholder, state.named))  # the run's secrets as the model writes them
    return await decide(
        client,
        DecideContext(
            snippets=state.annotated(seen.snippets, seen.controls),
            controls=seen.controls,
            task=state.task,
            history=state.history,
            options=state.options,
            url=mask(obs.url, state.named),  # (a GET form puts what was typed in the address: a password too)
            title=mask(obs.title, state.named),
            dialog=dialog.kind if dialog is not None else "",
            can_back=state.can_back,
            warning="\n".join(text for text in (_dialog_text(dialog), state.warning) if text),
            notes=tuple(x for x in (state.warning, *known) if x),
            skills=state.skills.block(),
            skill_params=state.skills.params(),
            reuse=state.reuse,
            chat=state.chat,
            repeated=state.loops.banned(state.page, obs.url, seen.controls) if _breaks_loops(state.options) else {},
        ),
    )


async def _guard(client, state: RunState, seen: _Seen, action: LiveAction | None) -> _Guarded:
    """Phase 3: the secrets the action carries (never written anywhere), what it acts on, and
    the form check before it sends a form (``_check_form``)."""
    obs, secrets = seen.obs, state.secrets
    secret = bool(action and action.operation == "TYPE" and _secret(state, obs, action.element_id, action.value))
    if secret and action and action.value:
        secrets.add(action.value)
    # a FILL's password fields given real values: each a secret, as a single TYPE's
    fills = action.fields if action else []
    hidden = {f.element_id for f in fills if _secret(state, obs, f.element_id, f.value)}
    secrets.update(f.value for f in fills if f.element_id in hidden and f.value)
    offer = state.skills.offers.get(action.element_id) if action and action.operation == "SKILL" else None
    if offer is not None and action is not None:  # a password given as a skill's argument, not as its placeholder
        for param in offer.skill.params:
            given = action.args.get(param.name, "")
            if param.kind == "secret" and given and not uses_secret(given, state.named):
                secrets.add(given)
    control = seen.controls.get(action.element_id) if action and action.element_id else None
    description = (
        control.describe()
        if control
        else f'skill "{offer.skill.name}"'
        if offer is not None
        else (elements.describe(obs.cleaned_html, action.element_id) if action and action.element_id else "")
    )
    guarded = _Guarded(action, secret, hidden, offer, control, description)
    if action is not None and action.operation == "DONE" and state.options.grounded_done and not state.options.dry_run:
        answer = scrub(action.value, secrets)
        again = state.loops.done_again(seen.page["page"], answer, seen.before) if _breaks_loops(state.options) else ""
        guarded.refused = Problem("repeated", again) if again else state.grounds.refusal(answer)
    if not state.options.dry_run:
        guarded.held, form_check = await _check_form(client, state, seen.controls, control, action)
        if form_check is not None:
            seen.page["form_check"] = form_check
    return guarded


async def _execute(browser, client, state: RunState, seen: _Seen, guard: _Guarded, check) -> Acted:
    """Phase 4: the action done through the step engine (``act.act``), or why it was not."""
    action = guard.action
    if action is None:
        return Acted(None, False, False, "failed: no usable action")
    if guard.refused is not None:
        return Acted(None, False, False, f"refused: {guard.refused}")
    if guard.held is not None and action.operation != "FILL":  # a FILL fills its fields, then holds (``act``)
        held = f"not sent: a check of the form before sending says: {guard.held} (send it again if the form is right)"
        return Acted(None, False, False, held)
    if action.operation == "DONE":
        return Acted(None, True, True, "done" + (f": {scrub(action.value, state.secrets)}" if action.value else ""))
    if state.options.dry_run:
        return Acted(None, True, False, "not executed (dry run)")
    repair = _repairer(client, state)
    if action.operation == "SKILL":  # a skill on the goal's way: its values from the secrets, or one short call
        state.skills.ask, state.skills.secrets = asker(client, state.task), list(state.named)
    return await act(browser, state, seen.obs, seen.before, action, check, seen.times, guard.held, repair)


def _remember(state: RunState, seen: _Seen, guard: _Guarded, acted: Acted, recorder, n: int) -> None:
    """After an action was done: what the view says of the controls it set ("you typed this at
    step 3"), ``--record``'s steps, the form check's word kept, the skills' lifecycle."""
    action, control, ok = guard.action, guard.control, acted.ok
    assert action is not None, "an action was done"
    if action.operation == "FILL":  # a FILL's fields and click, each as it went
        values = {f.element_id: f.value for f in action.fields}
        parts = [
            (s.op, s.element_id, values.get(s.element_id or "", ""), s.element_id in guard.hidden)
            for s in acted.inner or ()
            if s.ok
        ]
    else:
        parts = [(action.operation, action.element_id, action.value, guard.secret)] if ok else []
    for op, element_id, value, secret in parts:  # (operation, element id, value, whether it is a secret)
        if op not in DID or not element_id:
            continue
        if (c := seen.controls.get(element_id)) is not None:
            state.did[did_key(c)] = f"you {DID[op]} this at step {n}"
        if recorder is not None:
            recorder.add(seen.obs, op, element_id, value, secret)
    if action.operation == "FILL" and guard.held is not None and control is not None:
        state.forms_checked.add((state.page, control.form))  # held once: a CLICK on the filled form is sent
    state.skills.acted(guard.offer, ok, acted.inner, ok and _sends_form(action, control), n)


def _record(
    state: RunState, client, n: int, seen: _Seen, decision: Decision, guard: _Guarded, acted: Acted
) -> StepRecord:
    """Phase 5: the step's record (``trace.record.step_record``) and its line in the history."""
    obs = seen.obs
    done = guard.action.operation if guard.action is not None and acted.inner is not None else None
    inner = {f"{done.lower()}_steps": acted.inner} if done else {}  # a SKILL's or a FILL's own steps
    record = step_record(
        n,
        guard.action,
        url=obs.url,
        title=obs.title,
        obs=obs,
        description=guard.description,
        problem=str(guard.refused) if guard.refused is not None else decision.outcome.problem,
        problem_kind=guard.refused.kind if guard.refused is not None else decision.outcome.problem_kind,
        executed=acted.executed,
        result_text=acted.text,
        ok=acted.ok,
        secret=guard.secret,
        hidden=guard.hidden,
        dry_run=state.options.dry_run,
        times=seen.times,
        **seen.page,
        **decision.trace_fields(),
        **inner,
        changed=acted.changed,
        warning=state.warning or None,
        calls=client.transcript,
        usage=client.usage.to_dict(),
    )
    state.remember(history_line(record))
    return record


def _breaks_loops(options: AgentOptions) -> bool:
    """Whether the loop breaker is on (a dry run changes nothing: every action would be a repeat)."""
    return options.loop_breaker and not options.dry_run


def _guards_after(
    state: RunState, seen: _Seen, guard: _Guarded, acted: Acted, decision: Decision, n: int, text: str
) -> LoopVerdict | None:
    """After a step: what it changed on the site (``grounding``: a DONE with no answer needs a
    change), and the loop breaker's word on it (None when it is off)."""
    action, control, options = guard.action, guard.control, state.options
    if options.dry_run:
        return None
    if options.grounded_done and action is not None and acted.executed is not None and acted.ok:
        _note_change(state, seen, guard, acted, n, text)
    if not options.loop_breaker:
        return None
    if action is None:  # a reply of nothing but actions already repeated here: the third repeat
        if decision.outcome.problem_kind == "repeated":
            return state.loops.refused(seen.page["page"], seen.obs.url, decision.outcome.problem or "")
        return None
    if guard.refused is not None:  # a DONE refused: by grounding (kept), or as one refused here before
        if guard.refused.kind == "repeated":
            return state.loops.refused(seen.page["page"], seen.obs.url, "")  # (its result line says why)
        if guard.refused.kind == "ungrounded_answer":  # (an empty DONE's "nothing changed" may be wrong: a GET form)
            state.loops.done_refused(n, seen.page["page"], scrub(action.value, state.secrets))
        return LoopVerdict()
    if acted.executed is None or guard.held is not None:  # nothing was done (a DONE, a form held by the check)
        return LoopVerdict()
    after = state.lines(state.obs) if state.obs is not None else seen.before
    verdict = state.loops.after(
        n,
        action,
        text,
        # (keyed again with the lines now known to change on their own: the first step's key
        # held the clock its action taught, and a return to that page was missed)
        page=page_key(seen.obs.url, seen.before, state.moving),
        now=state.page,
        url=seen.obs.url,
        controls=seen.controls,
        control=control,
        changed=acted.changed,
        before=seen.before,
        after=after,
        moved=acted.executed.moved is not False,  # (a SCROLL that could not move: ``ActionResult.moved``)
    )
    if acted.changed and not verdict.warning and state.obs is not None:  # back where it was: what it did there
        verdict.warning = state.loops.returned(state.page, state.obs.url)
    return verdict


def _note_change(state: RunState, seen: _Seen, guard: _Guarded, acted: Acted, n: int, text: str) -> None:
    """A step that changed the site (``grounding.site_change``), or set fields of a form it did
    not send; and what it typed (no page's word for an answer: ``Grounds.typed_by_run``)."""
    action, control = guard.action, guard.control
    assert action is not None
    if action.operation in ("TYPE", "FILL", "SKILL"):  # what it typed is no page's word for an answer
        state.grounds.typed_by_run(
            [action.value or "", *(f.value for f in action.fields), *(action.args or {}).values()]
        )
    op = action.operation if action.operation != "DIALOG" or action.value == "accept" else ""
    kind, form = (control.kind, control.form) if control is not None else ("", "")
    if guard.held is None and acted.changed and site_change(op, kind, form, action.press_enter, seen.obs.raw_html):
        state.grounds.changed(f"step {n}: {text}", form if form else None)
        return
    unsent = (op == "TYPE" and not action.press_enter) or op == "SELECT" or (op == "FILL" and not action.element_id)
    if not (unsent or (op == "FILL" and guard.held is not None)):
        return
    fields = [seen.controls.get(f.element_id) for f in action.fields] if op == "FILL" else [control]
    for field_ in fields:  # (a GET form's field is a search's, not a change left unsent)
        if field_ is not None and field_.form and form_method(seen.obs.raw_html, field_.form) != "get":
            state.grounds.filled(field_.form, f"{field_.describe()} (step {n})")


def _replan(state: RunState) -> None:
    """A third repeat: the run re-plans. The place for a planner (``StepOutcome.loop.replan``);
    until there is one, the model is asked afresh (its conversation restarted), the repeated
    actions still out of its choices."""
    if state.chat is not None:
        state.chat.reset()


def _repairer(client, state: RunState):
    """How a skill's step whose element is gone is repaired: one decision on the live page
    (``decide_page``, as replay repairs a recorded step), the engine's line for it (the
    recorded step as a hint, why it was not found) after the run's history."""

    async def repair(obs, line: str):
        decision = await decide_page(client, obs, state.task, [*state.history, line], state.options, can_back=False)
        action = decision.outcome.action if decision is not None else None
        if action is None or action.operation not in ("CLICK", "TYPE", "SELECT"):
            return None
        return to_browser_action(action, state.named)

    return repair


def _setting(action: LiveAction, record: StepRecord) -> tuple | None:
    """A TYPE, SELECT or FILL by what it sets, at its page's address (None for other actions):
    setting the same values again there can only send the same form again."""
    if action.operation == "FILL":
        return ("FILL", record.url, json.dumps(_fields(record)), action.element_id)
    if action.operation in ("TYPE", "SELECT"):
        return (action.operation, record.url, record.element, action.value, action.press_enter)
    return None


def _sends_form(action: LiveAction, control) -> bool:
    """Whether an action that worked sent a form (what a site's state changes by): a submit
    button clicked, a FILL ending on its button, a field sent with Enter, a skill."""
    op = action.operation
    return (
        op == "SKILL"
        or (op == "FILL" and bool(action.element_id))
        or (op == "TYPE" and action.press_enter)
        or (op == "CLICK" and control is not None and control.kind == "submit button")
    )


def _dialog_text(dialog) -> str:
    """What the step prompt says of a dialog the page holds open (after the page, before the task)."""
    if dialog is None:
        return ""
    message = " ".join(dialog.message.split())
    if dialog.kind == "prompt":
        how = 'DIALOG "accept" with a "text" to answer, or DIALOG "dismiss" (Cancel)'
    else:
        how = 'DIALOG "accept" (OK) or DIALOG "dismiss" (Cancel)'
    return f'The page shows a dialog ({dialog.kind}): "{message}"\nThe page cannot be used until it is answered: {how}.'


async def _close_dialog(browser) -> str:
    """Dismiss a dialog the run left open (never left hanging); the event line, or ""."""
    if getattr(browser, "dialog", None) is None:
        return ""
    try:
        return await browser.dismiss_dialog("the run ended")
    except Exception:  # noqa: BLE001 - the browser may be gone already
        return ""


async def _check_form(client, state: RunState, controls: dict, control, action) -> tuple[str | None, dict | None]:
    """Before a form is sent, once per page state: a short model call on the task and the
    form's fields (``webagent.web.form_check``); (what it finds missing, or None to send; what
    the step's record keeps of the check, or None when there was none). A FILL's fields are
    shown as the FILL will leave them."""
    sends = action is not None and (action.operation == "CLICK" or (action.operation == "FILL" and action.element_id))
    if not (state.options.form_check and sends and control is not None):
        return None, None
    planned = {f.element_id: f.value for f in action.fields} if action is not None else {}
    fields = [replace(c, value=planned.get(c.id, c.value)) for c in form_fields(controls, control)]
    if not fields or (state.page, control.form) in state.forms_checked:
        return None, None
    state.forms_checked.add((state.page, control.form))
    check = await check_form(client, state.task, fields)
    kept = {"ready": check.ready, "fix": check.fix, "calls": check.calls, "failures": check.failures}
    return (None if check.ready else (check.fix or "a field does not hold what the task asks yet")), kept


def _secret(state: RunState, obs, element_id: str, value: str) -> bool:
    """Whether ``value`` typed into ``element_id`` is a password given as itself (a placeholder is safe to show)."""
    ref = obs.elements.get(element_id) if element_id else None
    return ref is not None and ref.is_password and not uses_secret(value, state.named)


def _fields(record: StepRecord) -> list[dict]:
    """A FILL's fields as its record keeps them (a password's value REDACTED)."""
    return [f.model_dump() for f in record.action.fields] if record.action is not None else []
