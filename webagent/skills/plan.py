"""A plan over skills: the model chooses the goal (a skill with its arguments), the program
finds the skills that lead from where the run stands to the goal's start, runs them, then the
goal, and hands control back (issue 47, item 2).

**The graph** is the site's skills, learned from recordings: a skill starts at its path
template (``SkillStart.path``), logged in or not (``SkillStart.logged_in``), and leaves the
run at its end (``Skill.end``); a log-in (a skill with a secret parameter) leaves it logged in.
A skill whose start is a stable address (``SkillStart.reachable``) opens it itself from any
page. **The search** is breadth-first over (where the run stands, whether it is logged in),
so the shortest chain wins, at most ``MAX_CHAIN`` skills before the goal. On the way run only
log-ins and skills of at most one typed value (``way``: a search, a record's number): a form of
more values is a change the model chooses. Only a skill whose end is known leads anywhere, and
one that ends on a record's page (a varying segment) only when an argument chooses the record
(a fixed click on the demonstration's row opens that row).

**Where the run stands** is what the run has seen, never what the task says: logged in once a
log-in skill ran to its end or the page offers a skill that needs it; logged out when the page
offers a log-in here, or a skill that needs a log-in could not start; else not known, and the
plan takes the goal's word for it (no log-in run for nothing).

**Arguments** of a skill run on the way: the goal's arguments by name, a secret parameter the
run's secret by its placeholder (never a value typed by the model), else one short model call
on the task for the whole chain (``ASK_PROMPT``); never a demonstration's example value. A
value the task does not give stops the plan before any of its skills runs.

**A failed step re-plans from where the run stands**: a skill that could not start (its page
led elsewhere: a staff page while logged out) is left out, what it showed is kept (logged out,
when the run did not know it was logged in),
and the search runs again from the page the run is on, ``MAX_REPLANS`` times at most. A skill
that failed after it started hands control back, saying which (the page changed: a new plan
might do the change twice)."""

from __future__ import annotations

import json
import string
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from webagent.browser import Action, ActionResult, Observation
from webagent.browser.guard import placeholder
from webagent.llm.client import LLMClient, Reply
from webagent.llm.reask import ReplyTally, ask_until_usable
from webagent.skills.model import Skill, at_path, describe
from webagent.skills.offer import Offer, label
from webagent.skills.run import Repair, SkillRun, run_skill, started
from webagent.trace.record import InnerStep

MAX_CHAIN = 3  # skills run before the goal, at most
MAX_REPLANS = 2  # searches again after a skill on the way could not start
# The short call for a skill on the way's values. Its steps are shown with each parameter where it
# goes, never a demonstration's example value; "" when the task does not say (the plan then stops).
# (Here, not in prompts/: the worktrees' installed prompts package is the main tree's.)
ASK_PROMPT = string.Template(
    "Task: $task\n"
    'To do "$goal", the agent first does:\n$skills\n'
    "They need these values: $names\n"
    'Give each from the task, as the task writes it, or "" if the task does not say. Answer as JSON: {$shape}.'
)


@dataclass(frozen=True)
class Where:
    """Where the run stands, as a plan sees it."""

    url: str
    logged_in: bool | None = None  # None: not known


def logs_in(skill: Skill) -> bool:
    """A log-in: a skill that types a secret (a password)."""
    return any(p.kind == "secret" for p in skill.params)


def way(skill: Skill) -> bool:
    """Whether the program may run ``skill`` on the way to a goal, unasked: a log-in, or a skill
    that takes at most one typed value (a search, a record's number). A form of more values (a
    new ticket, an address) is a change the model must choose, never one done to reach a page."""
    values = [p for p in skill.params if p.kind != "secret"]
    return logs_in(skill) or (len(values) <= 1 and all(p.kind == "text" for p in values))


def start_path(skill: Skill) -> str:
    """The skill's start as a path template (a skills file written before templates: its recorded path)."""
    return skill.start.path or urlsplit(skill.start.url).path


def at_start(skill: Skill, url: str) -> bool:
    return at_path(start_path(skill), url)


def ready(skill: Skill, where: Where) -> bool:
    """Whether ``skill`` can start from ``where`` with no other skill first: on its start page, or
    able to open it (a stable address); logged in if it needs to be (not known: taken as so)."""
    placed = bool(where.url) and at_start(skill, where.url) or skill.start.reachable
    return placed and not (skill.start.logged_in and where.logged_in is False)


def _after(skill: Skill, where: Where) -> Where | None:
    """Where the run stands once ``skill`` ran to its end: its end's page (a log-in whose end is
    not known: logged in on a page not known, from where only a stable address can be opened);
    None when it leads nowhere known."""
    if skill.end is None or (_varying(skill.end.path) and not any(p.kind != "secret" for p in skill.params)):
        # (one that ends on a record's page whatever it is given opens that one record: the
        # demonstration's ticket, never the one the goal is for)
        return Where("", True) if logs_in(skill) else None
    return Where(skill.end.url, True if logs_in(skill) else where.logged_in)


def _varying(template: str) -> bool:
    return "*" in template.split("/")


def plan(goal: Skill, known: list[Skill], where: Where) -> list[Skill] | None:
    """The skills to run before ``goal``, shortest chain first ([]: it can start from ``where``),
    or None when no chain of at most ``MAX_CHAIN`` reaches its start."""
    if ready(goal, where):
        return []
    frontier: list[tuple[Where, list[Skill]]] = [(where, [])]
    seen = {(urlsplit(where.url).path, where.logged_in)}
    for _ in range(MAX_CHAIN):
        reached: list[tuple[Where, list[Skill]]] = []
        for at, chain in frontier:
            for skill in known:
                if skill.id == goal.id or skill in chain or not way(skill) or not ready(skill, at):
                    continue
                then = _after(skill, at)
                if then is None:
                    continue
                if ready(goal, then):
                    return [*chain, skill]
                key = (urlsplit(then.url).path, then.logged_in)
                if key not in seen:
                    seen.add(key)
                    reached.append((then, [*chain, skill]))
        frontier = reached
    return None


def reachable_from(known: list[Skill], where: Where) -> Callable[[Skill], bool]:
    """The menu's test (``offer.offers(..., reachable=)``): whether a plan reaches the skill's start."""
    return lambda skill: plan(skill, known, where) is not None


# (the skills on the way, the names of the values they still need, the goal) -> name -> value ("": not given)
Ask = Callable[[list[Skill], list[str], Skill], Awaitable[dict[str, str]]]


def given_arguments(skill: Skill, goal_args: dict[str, str], secrets: list[str]) -> tuple[dict[str, str], list[str]]:
    """A skill's arguments on the way: (those the goal's arguments and the run's secrets give,
    the names still missing). A secret parameter takes a secret's placeholder only: the one of
    its own name, else the run's first; with no secret it stays missing (never asked)."""
    values: dict[str, str] = {}
    missing: list[str] = []
    for p in skill.params:
        if p.kind == "secret":
            name = p.name if p.name in secrets else (secrets[0] if secrets else "")
            if name:
                values[p.name] = placeholder(name)
            else:
                missing.append(p.name)
        elif goal_args.get(p.name):
            values[p.name] = goal_args[p.name]
        else:
            missing.append(p.name)
    return values, missing


def asker(client: LLMClient, task: str) -> Ask:
    """The short call for the values the skills on the way need (one call for the chain, re-asked
    once if unusable); a value two of them take by the same name is asked once."""

    async def ask(chain: list[Skill], names: list[str], goal: Skill) -> dict[str, str]:
        schema = {
            "type": "object",
            "properties": {n: {"type": "string"} for n in names},
            "required": names,
            "additionalProperties": False,
        }
        prompt = ASK_PROMPT.substitute(
            task=task,
            goal=goal.name,
            skills="\n".join(f'- "{s.name}": {describe(s.steps)}' for s in chain),
            names=", ".join(names),
            shape=", ".join(f'"{n}": "..."' for n in names),
        )

        def parse(reply: Reply) -> tuple[dict[str, str] | None, str | None]:
            data = reply.data if isinstance(reply.data, dict) else None
            if data is None or any(not isinstance(data.get(n), str) for n in names):
                return None, "answer " + json.dumps({n: "..." for n in names})
            return {n: data[n].strip() for n in names}, None

        found = await ask_until_usable(
            client,
            prompt,
            parse=parse,
            schema=schema,
            max_tokens=24 + 24 * len(names),
            instruction="Answer with the JSON object only.",
            purpose="plan_args",
            tally=ReplyTally(),
        )
        return found or {}

    return ask


@dataclass
class PlanRun:
    """A goal run through its plan: what ``run_skill`` returns (the steps of every skill run,
    in order), the skills run to their end, and what the run learned of where it stands."""

    run: SkillRun
    ran: list[Skill] = field(default_factory=list)  # in order, the goal last when it ran
    logged_in: bool | None = None


async def run_plan(
    browser,
    obs: Observation,
    offer: Offer,
    args: dict[str, str],
    known: list[Skill],
    logged_in: bool | None,
    *,
    secrets: list[str],
    reveal=None,
    repair: Repair | None = None,
    ask: Ask | None = None,
) -> PlanRun:
    """Run the goal ``offer`` with ``args`` (the model's), after the skills a plan puts before it
    (see the module docstring). An offer the page holds (``Offer.here``: its first element is
    on this page) runs at once."""
    goal = offer.skill
    steps: list[InnerStep] = []
    ran: list[Skill] = []
    left_out: set[str] = set()
    answers: dict[str, str] = {}  # the values the model gave for the skills on the way ("": not given)
    failed, tried = _failed("no plan was tried"), False

    def done(result: ActionResult, at: Observation) -> PlanRun:
        if before := [s.id for s in ran if s is not goal]:  # the model reads which skills ran on the way
            note = f"ran first: {', '.join(before)}"
            result = result.model_copy(update={"note": "; ".join(x for x in (note, result.note) if x)})
        return PlanRun(SkillRun(result, at, steps), ran, logged_in)

    for again in range(MAX_REPLANS + 1):
        usable = [s for s in known if s.id not in left_out]
        at_once = offer.here and not again  # (a goal the page held that could not start: planned now)
        chain = [] if at_once else plan(goal, usable, Where(obs.url, logged_in))
        if chain is None:  # (after a skill that could not start: its word, where its start led)
            why = f'skill "{goal.name}" cannot start here, and no skill leads from here to its start'
            return done(failed if tried else _failed(why), obs)
        tried = True
        given = {s.id: given_arguments(s, args, secrets) for s in chain}
        secret = {p.name for s in chain for p in s.params if p.kind == "secret"}
        if needs := next((s for s in chain if secret & set(given[s.id][1])), None):  # never asked of the model
            why = f'skill "{goal.name}" needs "{needs.name}" first, and the run has no secret for its password'
            return done(_failed(why, failed if again else None), obs)
        asked = list(dict.fromkeys(n for _, missing in given.values() for n in missing if n not in secret))
        if (asked := [n for n in asked if n not in answers]) and ask is not None:  # one call for the chain
            said = await ask(chain, asked, goal)
            answers.update({n: said.get(n, "") for n in asked})
        values_of = {
            s.id: {**given[s.id][0], **{n: answers[n] for n in given[s.id][1] if answers.get(n)}} for s in chain
        }
        # a value the task does not give stops the plan before any skill of it runs
        if lacking := next((s for s in chain if any(not values_of[s.id].get(p.name) for p in s.params)), None):
            names = ", ".join(p.name for p in lacking.params if not values_of[lacking.id].get(p.name))
            why = f'skill "{goal.name}" needs "{lacking.name}" first, and the task does not give its {names}'
            return done(_failed(why, failed if again else None), obs)
        for skill in [*chain, goal]:
            if skill is goal:
                values = args
                here = offer if at_once else Offer(offer.label, goal, at_start(goal, obs.url))
            else:
                values, here = values_of[skill.id], Offer(label(skill), skill, at_start(skill, obs.url))
            went = await run_skill(browser, obs, here, values, reveal, repair)
            steps.extend(went.steps)
            obs = went.obs
            if went.result.ok:
                ran.append(skill)
                logged_in = True if logs_in(skill) else logged_in
                if skill is goal:
                    return done(went.result, obs)
                continue
            # a log-in may be what it lacked, unless the run knows it is logged in (a log-in ran,
            # or the page offered a skill that needs one): the 1.5B's goal, a checkout with an
            # empty basket, could not start, and the re-plan ran a log-in on a logged-in page
            relog = skill.start.logged_in and logged_in is None
            if started(went.steps) or (skill is goal and not relog):
                # past its start the page changed (a new plan might do a change twice); a goal
                # that cannot start for no reason the run can mend is the model's to see
                return done(went.result, obs)
            # could not start: what it showed is kept, and the search runs again from here
            if relog:
                logged_in = False
            else:
                left_out.add(skill.id)
            failed = went.result
            break
    return done(failed, obs)  # (each pass returns, or breaks with ``failed`` to plan again)


def _failed(why: str, before: ActionResult | None = None) -> ActionResult:
    """A plan that stops: why, after the failure that made it plan again (if one did)."""
    if before is not None:
        return before.model_copy(update={"error": f"{before.error}; then {why}"})
    return ActionResult(ok=False, action=Action(op="BACK"), error=why)
