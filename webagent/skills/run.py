"""Running a skill inside a run: each of its steps found on the live page by its fingerprint
and done through the step engine (``trace.engine``, as replay does a recorded step), the page
read again after each. A step past the first whose element is not found is repaired by the
model when the run gives a ``repair``, as the skill's policy says (``engine.SKILL``: one action
on the live page, the recorded step as its hint, the same operation). A step that cannot be
found, repaired or done stops the skill: control goes back to the model, told which step
failed and why. Each step done is kept for the trace.

A skill that could not start (its start page shows none of its first step: a staff page that
redirects a guest to a log-in) leaves the browser where it was called, not where its start led:
the 1.5B, left on a log-in page a staff skill had redirected to, typed its search into Username
six times. The result says where the start led."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from webagent.browser import REDACTED, Action, ActionResult, Observation
from webagent.skills.arguments import not_run, refusal
from webagent.skills.offer import Offer, start_on
from webagent.trace.engine import SKILL, RepairPolicy, execute, locate
from webagent.trace.fingerprint import short
from webagent.trace.record import InnerStep


@dataclass
class SkillRun:
    result: ActionResult  # the last step's (a failed step's, with why the skill stopped)
    obs: Observation  # the page after the last step done
    steps: list[InnerStep] = field(default_factory=list)  # what each step did, for the trace


def started(done: list[InnerStep]) -> bool:
    """Whether a skill got past its start: one of its element steps was done (a miss before
    that means it is not on its start page, not that the page changed)."""
    return any(d.ok and d.op != "GOTO" for d in done)


# (page, the line the model reads: the recorded step as a hint, why it was not found) -> the
# model's action for it, or None
Repair = Callable[[Observation, str], Awaitable[Action | None]]


async def run_skill(
    browser,
    obs: Observation,
    offer: Offer,
    args: dict[str, str],
    reveal=None,
    repair: Repair | None = None,
    policy: RepairPolicy = SKILL,
) -> SkillRun:
    called = obs  # the page the skill was called on: where it goes back to if it cannot start
    skill = offer.skill
    if (why := refusal(skill, args, reveal)) is not None:  # arguments that cannot be right: nothing done
        return SkillRun(not_run(skill, why), obs)
    done: list[InnerStep] = []
    steps = list(skill.steps)
    if not offer.here and (not steps or steps[0].op != "GOTO"):
        url = start_on(skill, obs.url)
        went = await execute(browser, obs, Action(op="GOTO", value=url))
        done.append(went.step)
        if not went.result.ok:
            why = f"could not open its start page: {went.result.error}"
            return SkillRun(_failed(went.result, skill, 0, len(steps), why), obs, done)
        obs = await browser.observe()
    for k, step in enumerate(steps, 1):
        repaired: Action | None = None
        op = step.op
        assert op != "DONE", "a skill's steps are CLICK, TYPE, SELECT or GOTO (``Skill`` checks them)"
        if op == "GOTO":
            action = Action(op="GOTO", value=start_on(skill, obs.url) if k == 1 else step.value)
        else:
            # the recorded value, or the argument given for the step's parameter (a placeholder
            # revealed; the trace keeps ``REDACTED`` for a secret step, below)
            given = args.get(step.param, "") if step.param else step.value
            value = reveal(given) if reveal and step.param else given
            found = locate(step, obs, policy)
            if found.miss and repair is not None and policy.attempts and started(done):
                # past its start (where a miss means "not here"), a step whose page changed
                repaired = await repair(obs, policy.line(step.model_copy(update={"value": given}), found.miss))
            if found.miss and (repaired is None or policy.verdict(step, repaired.op) != "next"):
                why = found.miss + (f"; the model's repair was {repaired.op}, not {step.op}" if repaired else "")
                last = ActionResult(ok=False, action=Action(op=op))
                if not started(done) and obs.url != called.url:
                    return await _back(browser, called, obs, _failed(last, skill, k, len(steps), why), done)
                return SkillRun(_failed(last, skill, k, len(steps), why), obs, done)
            action = repaired or Action(
                op=op, element_id=found.element_id, value=value or None, press_enter=step.press_enter
            )
        # as a run's own step records it: a finished run that called a skill is learned from
        # and replayed through these (``trace.workflow.from_trace``)
        ran = await execute(
            browser,
            obs,
            action,
            shown=REDACTED if step.value == REDACTED else (action.value or ""),
            element=short(step.target) if step.target else None,
            param=step.param,
        )
        record, result = ran.step, ran.result
        if repaired:  # (the step as recorded, done by the model's action)
            record.press_enter = step.press_enter
            record.note = "; ".join(x for x in ("repaired by the model", record.note) if x)
        done.append(record)
        if not result.ok:
            return SkillRun(_failed(result, skill, k, len(steps), result.error or "failed"), obs, done)
        if getattr(browser, "dialog", None) is not None:  # the page asks: the model answers, the skill stops
            return SkillRun(result, obs, done)
        obs = await browser.observe()
    return SkillRun(result if steps else ActionResult(ok=True, action=Action(op="BACK")), obs, done)


async def _back(browser, called: Observation, landed: Observation, failed: ActionResult, done) -> SkillRun:
    """A skill that could not start, after its start page led elsewhere: back on the page it was
    called on (``called``), the result saying where the start led. The way back is a step of
    the skill's record, as its way there is."""
    back = await execute(browser, landed, Action(op="GOTO", value=called.url))
    done.append(back.step)
    if not back.result.ok:
        return SkillRun(failed, landed, done)
    note = f"its start led to {landed.url}; back on {called.url}, where it was called"
    return SkillRun(failed.model_copy(update={"note": "; ".join(x for x in (note, failed.note) if x)}), called, done)


def _failed(result: ActionResult, skill, k: int, n: int, why: str) -> ActionResult:
    step = skill.steps[k - 1] if k else None
    where = (
        f"its step {k} of {n} ({step.op} {short(step.target) if step.target else step.value})" if step else "its start"
    )
    return result.model_copy(update={"ok": False, "error": f'skill "{skill.name}" stopped at {where}: {why}'})
