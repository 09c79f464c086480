"""Carrying out a FILL: each field typed or chosen through the browser layer, in order, on the
page the model read (its ids hold while the document does), then the form's submit button
clicked. The batch stops where the page changes under it (another URL, a new tab, a dialog),
as browser-use stops a multi-action batch when the page changes: the rest was chosen for a
page that is gone. Each part is done by the step engine (``trace.engine.execute``; the model
chose each element on this page: nothing to find again or repair) and kept for the trace, a
password field's value as REDACTED."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from webagent.browser import REDACTED, Action, ActionResult, Observation
from webagent.trace.engine import execute
from webagent.trace.record import InnerStep
from webagent.web.agent_view import Control
from webagent.web.live_action import LiveAction


@dataclass
class FillRun:
    result: ActionResult  # the click's, else the last field's (a failed one's, with why the batch stopped)
    steps: list[InnerStep] = field(default_factory=list)  # what each part did, for the trace


def _stopped(browser, obs: Observation, result: ActionResult) -> str:
    """Why the rest of the batch cannot go on after ``result`` ("" when it can)."""
    if getattr(browser, "dialog", None) is not None:
        return "the page opened a dialog"
    if result.new_tab:
        return "a new tab opened"
    if result.url and result.url != obs.url:
        return f"the page moved to {result.url}"
    return ""


async def run_fill(
    browser,
    obs: Observation,
    action: LiveAction,
    controls: dict[str, Control],
    reveal: Callable[[str], str],
    held: str | None = None,
) -> FillRun:
    """``action``'s fields on ``obs`` (``controls`` says which takes TYPE and which SELECT;
    ``reveal`` puts a secret's value in place of its placeholder), then its submit button,
    unless the form check held the form (``held``: what it found)."""
    n = len(action.fields)
    done: list[InnerStep] = []
    result = ActionResult(ok=False, action=Action(op="CLICK"), error="FILL has no fields")
    for k, f in enumerate(action.fields, 1):
        op: Literal["TYPE", "SELECT"] = "SELECT" if controls[f.element_id].op == "SELECT" else "TYPE"
        ref = obs.elements.get(f.element_id)
        value = reveal(f.value) if op == "TYPE" else f.value
        shown = REDACTED if ref is not None and ref.is_password and f.value else f.value
        part = await execute(
            browser,
            obs,
            Action(op=op, element_id=f.element_id, value=value or None),
            shown=shown,
            element=_name(controls[f.element_id]),
        )
        result = part.result
        done.append(part.step)
        if not result.ok:
            why = f"field {k} of {n} ([{f.element_id}]) failed: {result.error}"
            return FillRun(result.model_copy(update={"error": why}), done)
        if stop := _stopped(browser, obs, result):
            return FillRun(noted(result, f"filled {k} of {n} fields, then stopped: {stop}"), done)
    summary = f"filled {n} fields"
    if held is not None and action.element_id:
        summary += f"; not sent: a check of the form before sending says: {held}; CLICK [{action.element_id}] sends it"
    elif action.element_id:
        click = Action(op="CLICK", element_id=action.element_id)
        sent = await execute(browser, obs, click, shown="", element=_name(controls.get(action.element_id)))
        result = sent.result
        done.append(sent.step)
        if not result.ok:
            result = result.model_copy(update={"error": f"the submit button [{action.element_id}]: {result.error}"})
    return FillRun(noted(result, summary), done)


def _name(control: Control | None) -> str | None:
    # as a run's own step records it: a run that filled a form is replayed and learned from
    # through these (``trace.workflow.from_trace``)
    return control.describe() if control is not None else None


def noted(result: ActionResult, note: str) -> ActionResult:
    """``result`` with ``note`` before its own (a FILL's or a SKILL's summary of its parts)."""
    return result.model_copy(update={"note": "; ".join(x for x in (note, result.note) if x)})
