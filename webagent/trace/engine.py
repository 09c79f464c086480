"""The step engine: every step done on a page is done by ``execute`` -- the live loop's
browser actions, a FILL's fields and its click, a skill's steps, a replay's steps and its
repairs. It takes the element's fingerprint as the page shows it before acting (what a
recording keeps), acts through the browser layer (``BrowserSession.act``), and builds the
step's record (``trace.record.InnerStep``).

A recorded step (``trace.step.RecordedStep``) is found again on the live page by ``locate``:
its page checked first when the policy says so, then its element by fingerprint
(``trace.match.find``). What happens when it is not found, or its action fails, is the
caller's ``RepairPolicy``: how many model actions may stand in for it, whether the page is
checked first, whether the model's action may be another operation. A repair asks the model
with one hint format (``hint``) in one history line (``RepairPolicy.line``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from webagent.browser import Action, ActionResult, Observation
from webagent.trace.fingerprint import PageRef, squash, target_of, url_pattern
from webagent.trace.match import Match, find
from webagent.trace.record import InnerStep
from webagent.trace.step import RecordedStep


@dataclass(frozen=True)
class RepairPolicy:
    """What becomes of a recorded step that cannot be done as recorded."""

    attempts: int  # model actions that may stand in for it (0: the step fails)
    check_page: bool  # its page is checked before its element is looked for
    change_op: bool  # the model's action may be another operation (the step is then tried again)
    called: str  # what the repair's history line calls the step

    def line(self, step: RecordedStep, miss: str) -> str:
        """The line the model reads after the run's history: what was done last time, and why
        it cannot be done now."""
        return f"({self.called}: {hint(step)}; now: {miss})"

    def verdict(self, step: RecordedStep, op: str) -> Literal["next", "again", "refused"]:
        """What a repair by an ``op`` action means for the recorded ``step``: it took the step's
        place (the same operation), the step is tried again (another operation, where the
        policy allows it), or it is refused."""
        return "next" if op == step.op else ("again" if self.change_op else "refused")


# replay: the page checked first, up to 3 model actions, and one may be another operation
# (a new dialog to close, a link to follow) before the step is tried again
REPLAY = RepairPolicy(attempts=3, check_page=True, change_op=True, called="repairing a recorded step")
# a skill: its steps are found where it runs, one model action for a step whose page changed,
# the same operation (a skill does what it says or stops)
SKILL = RepairPolicy(attempts=1, check_page=False, change_op=False, called="a skill's step")
# (a FILL's parts and the live loop's own action have no policy: the model chose each element
# on this very page, there is no recorded step to find again or repair)


def hint(step: RecordedStep) -> str:
    """The recorded step as a repair's hint: ``last time: TYPE "kim" {username} into [textbox]
    "Username"`` (its value as this run gives it: a secret's placeholder, never its value)."""
    return f"last time: {step.describe()}"


@dataclass
class Located:
    element_id: str | None  # the element found again (None: not found, or no element)
    match: Match | None  # how it was found (None: the page was not the recorded one, or no element)
    miss: str = ""  # why the step cannot be done as recorded ("" when it can)


def same_page(page: PageRef, obs: Observation) -> str:
    """Why ``obs`` is not the recorded ``page`` (by its path, or its title); "" when it is."""
    want, have = url_pattern(page.url), url_pattern(obs.url)
    if want.split("?")[0] == have.split("?")[0] or (
        page.title and squash(page.title).lower() == squash(obs.title).lower()
    ):
        return ""
    return f'the page is {have} "{obs.title}", the recorded step was on {want} "{page.title}"'


def locate(step: RecordedStep, obs: Observation, policy: RepairPolicy, page: PageRef | None = None) -> Located:
    """Where ``step`` is on ``obs``: its page checked first when the policy says so (``page``:
    the recorded page as this run has it), then its element by fingerprint."""
    if policy.check_page and (miss := same_page(page or step.page, obs)):
        return Located(None, None, miss)
    if step.target is None or step.op == "DONE":
        return Located(None, None)
    match = find(step.target, obs.raw_html, set(obs.elements))
    return Located(match.element_id, match, "" if match.found else match.why)


@dataclass
class Executed:
    result: ActionResult
    step: InnerStep  # what was done, as a run's record keeps a SKILL's or a FILL's step (its target: before acting)
    execute_s: float


async def execute(
    browser,
    obs: Observation,
    action: Action,
    *,
    shown: str | None = None,
    element: str | None = None,
    **fields: str | None,
) -> Executed:
    """Do ``action`` on ``obs`` (see the module docstring). ``shown``: the value as the record
    may show it (a password's as ``REDACTED``; else the action's); ``element``: what the element
    is, for the record; ``fields``: the record's ``param`` (a skill's step)."""
    target = target_of(obs, action)  # before acting: the element as the page showed it
    t0 = time.perf_counter()
    result = await browser.act(action, obs)
    took = time.perf_counter() - t0
    done = InnerStep(
        op=action.op,
        element_id=action.element_id,
        element=element,
        value=(action.value or "") if shown is None else shown,
        press_enter=action.press_enter,
        **fields,
        ok=result.ok,
        error=result.error,
        note=result.note,
        target=target,
        url=obs.url,
        title=obs.title,
    )
    return Executed(result, done, took)
