"""Carrying out one action and telling the model its outcome: "ok" (and what the page now
shows that it did not), "no visible change" (decided only after the page went quiet), or
"failed: why". Parts of a page that change on their own (a clock) do not count: the page is
captured once more just before acting, and lines that changed while the model was deciding
are left out of the comparison (``_changed``)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from webagent.agent.fill import noted, run_fill
from webagent.agent.secrets import reveal
from webagent.agent.stable_ids import keep_ids
from webagent.agent.state import RunState, page_key, shape
from webagent.browser import Action, ActionResult
from webagent.llm.cache import content_hash
from webagent.trace.engine import execute
from webagent.trace.record import InnerStep
from webagent.web.agent_view import LINE_ID
from webagent.web.live_action import LiveAction

NEWS_LINES = 2  # changed lines quoted in an action's result


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
    if op == "DIALOG":
        return Action(op="DIALOG", value=action.value, text=action.text or None)
    if op not in ("CLICK", "TYPE", "SELECT"):  # DONE ends the run; a SKILL or a FILL runs its own steps
        raise ValueError(f"{op} is not one browser action")
    value = reveal(action.value, secrets) if secrets and op == "TYPE" else action.value
    return Action(
        op=op, element_id=action.element_id, value=value or None, press_enter=action.press_enter and op == "TYPE"
    )


@dataclass
class Acted:
    executed: ActionResult | None  # None: nothing was done (no action, a DONE, a held form, a dry run)
    ok: bool
    changed: bool
    text: str  # the outcome the model reads: "ok; the page now shows ...", "no visible change", "failed: ..."
    finished: str | None = None  # the site's word (``after_step``)
    fatal: str | None = None
    inner: list[InnerStep] | None = None  # a SKILL's steps, or a FILL's fields and click, as each was done


_SETS = frozenset({"TYPE", "SELECT", "FILL"})  # actions that set a value (a FILL may also send its form)


async def act(
    browser,
    state: RunState,
    obs,
    before: list[str],
    action: LiveAction,
    after_step,
    times,
    held: str | None = None,
    repair=None,
) -> Acted:
    """Carry out ``action`` on ``obs``, observe the page again into ``state.obs``, and say what
    changed; the page is acted on by the step engine (``trace.engine.execute``, directly or
    through a FILL's or a SKILL's steps). ``held``: why the form check held the form a FILL
    would send (its fields are filled, its submit button is not clicked); ``repair``: how a
    SKILL's step whose page changed is asked of the model (``skills.run.Repair``)."""
    from webagent.browser.capture import CaptureError

    fatal = finished = None
    t0 = time.perf_counter()
    try:  # the page as it is now: what changed while the model decided changes on its own
        # (not while it holds a dialog open: nothing can be captured then, and nothing changes)
        during = before if _asks(browser) else state.lines(await browser.observe())
    except CaptureError:
        during = before
    recheck_s = time.perf_counter() - t0
    if len(before) == len(during):  # lines that changed while the model decided: on their own
        state.moving.update(shape(a) for a, b in zip(before, during) if a != b and shape(a) == shape(b))
    t0 = time.perf_counter()
    inner = None
    if action.operation == "FILL":
        filled = await run_fill(browser, obs, action, state.controls(obs), lambda v: reveal(v, state.named), held)
        executed, inner = filled.result, filled.steps
    elif action.operation == "SKILL":
        ran = await state.skills.run(
            browser,
            obs,
            action.element_id,
            action.args,
            (lambda v: reveal(v, state.named)) if state.named else None,  # no secret known: a password as itself
            repair,
        )
        executed, inner = noted(ran.result, f"the skill did {sum(1 for s in ran.steps if s.ok)} steps"), ran.steps
    else:
        executed = (await execute(browser, obs, to_browser_action(action, state.named))).result
    times["execute_s"] = time.perf_counter() - t0
    if _asks(browser):  # the action raised a dialog the page holds open: the model answers it next
        times["observe_s"] = recheck_s
        return Acted(executed, executed.ok, True, executed.note or "the page opened a dialog", inner=inner)
    if after_step is not None:
        finished = await after_step()
    t0 = time.perf_counter()
    try:
        # the next step's page, or the page the run ended on (a reload keeps the ids the model knows)
        state.obs = keep_ids(obs, await browser.observe(), state.controls)
    except CaptureError as exc:
        if not finished:
            fatal = f"the page could not be captured after the action: {exc}"
    times["observe_s"] = time.perf_counter() - t0 + recheck_s  # both captures of this step
    assert state.obs is not None  # this one, or (capture failed) the one acted on
    after = state.lines(state.obs)  # (the next step reads the same rendering)
    retyped = any([_retyped_password(state, obs, i, v) for i, v in _typed(action, executed, inner)])
    changed = bool(finished) or (not fatal and (state.obs.url != obs.url or retyped or _changed(before, during, after)))
    # A late effect is read once the page is quiet: an action that changed nothing may change it
    # after a timer or a request; a value set on the same page may have a later effect than its
    # own (a list a search filters as one types, after a pause and a request: the 1.5B read the
    # unfiltered helpdesk list as the result, and answered with another ticket's owner).
    late = not changed or (not finished and action.operation in _SETS and state.obs.url == obs.url)
    if executed.ok and not fatal and late:
        t0 = time.perf_counter()
        mutated = await browser.quiet()
        if (mutated or changed) and (again := await _look_again(browser, state, obs)) is not None:
            after = again
            changed = changed or state.obs.url != obs.url or _changed(before, during, after)
        times["quiet_s"] = time.perf_counter() - t0
    if changed:
        state.page = page_key(state.obs.url, after, state.moving)
    if not executed.ok:
        text = f"failed: {executed.error}"
    elif changed:
        text = "ok" + (f", now on {state.obs.url}" if state.obs.url != obs.url else "")
        if finished:
            text += f"; {finished}"
        elif news := _news(during, state.shown(state.obs), state.obs.url != obs.url, _acted_on(action), state.moving):
            text += f"; the page now shows {news}"
    else:
        text = "no visible change"
    if executed.note:
        text += f" ({executed.note})"
    return Acted(executed, executed.ok, changed, text, finished, fatal, inner)


def _asks(browser) -> bool:
    """Whether the page holds a dialog open (``BrowserSession.dialog``): then it runs no script,
    so it is neither captured nor asked anything until the dialog is answered."""
    return getattr(browser, "dialog", None) is not None


def _typed(action: LiveAction, executed: ActionResult, fill_steps: list[InnerStep] | None) -> list[tuple[str, str]]:
    """(id, value) of what was typed: a TYPE's, or each of a FILL's fields typed (some may be
    even when a later part failed)."""
    if action.operation == "TYPE":
        return [(action.element_id, action.value)] if executed.ok else []
    done = {s.element_id for s in fill_steps or () if s.ok and s.op == "TYPE"}
    return [(f.element_id, f.value) for f in action.fields if f.element_id in done]


def _acted_on(action: LiveAction) -> tuple[str, ...]:
    """The controls whose own lines say what the action did (left out of its news)."""
    ids = (*(f.element_id for f in action.fields), action.element_id)
    return tuple(i for i in ids if i)


def _retyped_password(state: RunState, obs, element_id: str, value: str) -> bool:
    """Whether a TYPE put another value into a password field than this run typed there before:
    the page shows any value as the same dots, so only the run can tell that it changed."""
    ref = obs.elements.get(element_id)
    if ref is None or not ref.is_password:
        return False
    typed = content_hash(reveal(value, state.named))
    before, state.passwords_typed[element_id] = state.passwords_typed.get(element_id), typed
    return before is not None and before != typed


async def _look_again(browser, state: RunState, obs) -> list[str] | None:
    """The page captured again into ``state.obs`` (the ids the model knows kept), its lines;
    None when it cannot be captured (``state.obs`` stays as it was)."""
    from webagent.browser.capture import CaptureError

    try:
        state.obs = keep_ids(obs, await browser.observe(), state.controls)
    except CaptureError:
        return None
    return state.lines(state.obs)


def _changed(before: list[str], during: list[str], after: list[str]) -> bool:
    """Whether the action changed the page: ``after`` (just after it) differs from ``during``
    (just before it) other than in the lines that already differed between ``before`` (the
    page the model was shown) and ``during`` -- those change on their own."""
    if len(after) != len(during):
        return True
    moving = {i for i, (a, b) in enumerate(zip(before, during)) if a != b} if len(before) == len(during) else set()
    return any(a != b for i, (a, b) in enumerate(zip(during, after)) if i not in moving)


def _news(
    before: list[str],
    after: list[str],
    new_page: bool,
    acted_on: tuple[str, ...] = (),
    moving: set[str] | frozenset[str] = frozenset(),
) -> str:
    """A few of the lines the page shows now that it did not (a flash message, a changed
    total), briefly: what the model needs to see that its action worked. ``before`` is
    without ids (``RunState.lines``), ``after`` as the model reads it."""
    if new_page:
        return ""
    seen = set(before)
    own = tuple(f"[{i}] " for i in acted_on)  # the controls acted on: their lines say what was done
    added = [
        line.strip()
        for line in after
        if LINE_ID.sub("[]", line) not in seen
        and line.strip()
        and not (own and line.startswith(own))
        and shape(line) not in moving  # (a clock's tick is no news of the action)
    ]
    if not added:
        return ""
    shown = "; ".join(f'"{line[:70]}"' for line in added[:NEWS_LINES])
    return shown + (f" and {len(added) - NEWS_LINES} more changed lines" if len(added) > NEWS_LINES else "")
