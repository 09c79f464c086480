"""A site's skills through one run (``SkillLifecycle``): which the page offers at each step,
which skill this run did and at which step (its line says so), and which could not start.

A skill that could not start (its first element is not on its start page: a staff page while
logged out) is not offered again until a form is sent (a log-in changes that), and after a
second time not again in the run: the 1.5B, once logged in, called a skill whose page it could
not reach after every search it sent.

With ``plan`` on (``AgentOptions.plan``), a skill is also offered where a plan over the site's
skills reaches its start (``skills.plan``: its line says which skills run first), a SKILL runs
through its plan, and the lifecycle keeps what the run has seen of where it stands (logged in
or not).

A skill that would open its start page first is offered only if that page, asked of the site
now (``look_ahead``: a GET with the run's cookies, not rendered), does not send the run
elsewhere: a public form's page recorded logged out redirects a logged-in run to the staff's
list, where the 1.5B's call stopped at its first field. The answers hold until a form is sent
or a skill runs (either may log in or out)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from webagent.browser import Observation
from webagent.skills.learn import site_of
from webagent.skills.model import Skill, at_path
from webagent.skills.offer import MAX_OFFERS, Linked, Offer, block, label, linked, offers, stable_start, start_on
from webagent.skills.plan import Ask, PlanRun, Where, logs_in, run_plan
from webagent.skills.plan import plan as plan_for
from webagent.skills.run import Repair, SkillRun, run_skill, started
from webagent.trace.record import InnerStep
from webagent.web.agent_view import Control

MAX_FAILED_STARTS = 2  # a skill that could not start this many times is not offered again in the run


@dataclass(frozen=True)
class PlannedOffer(Offer):
    """A skill whose start a plan reaches: the skills it runs first, by id."""

    first: tuple[str, ...] = ()

    def line(self) -> str:
        return self.skill.line(self.label) + f" (runs {', '.join(self.first)} first)"


@dataclass
class SkillLifecycle:
    known: list[Skill] = field(default_factory=list)  # the site's skills (``webagent.skills.store``)
    offers: dict[str, Offer] = field(default_factory=dict)  # this step's offers: label -> offer
    near: list[Linked] = field(default_factory=list)  # this step's skills one click away (``offer.linked``)
    done: dict[str, int] = field(default_factory=dict)  # skill id -> the step that last did it
    unstartable: set[str] = field(default_factory=set)  # skills not offered now: they could not start
    failed_starts: dict[str, int] = field(default_factory=dict)  # skill id -> the times it could not start
    plan: bool = True  # offer and run skills through a plan (``skills.plan``)
    logged_in: bool | None = None  # what the run has seen (``plan.Where``)
    ask: Ask | None = None  # the short call for a skill on the way's values (``plan.asker``)
    secrets: list[str] = field(default_factory=list)  # the run's secrets by name (their placeholders)
    last: PlanRun | None = None  # the last SKILL's run through its plan
    task: str = ""  # what the menu is ranked by (``offer.offers``)
    levers: dict[str, bool] = field(default_factory=dict)  # ``offers``' skill_states and menu (``AgentOptions``)
    reachable: Callable[[Skill], bool] | None = None  # a planner's: whether a skill's start can be reached
    asked: set[str] = field(default_factory=set)  # start pages asked of the site (``look_ahead``)
    elsewhere: set[str] = field(default_factory=set)  # of those, the ones that now send the run elsewhere

    def menu_for(self, task: str, *, skill_states: bool = True, menu: bool = True) -> None:
        self.task, self.levers = task, {"skill_states": skill_states, "menu": menu}

    async def look_ahead(self, lands_on: Callable[[str], Awaitable[str | None]], url: str) -> None:
        """Ask the site where each stable start page of ``url``'s site would land now
        (``BrowserSession.lands_on``), each page once until a form is sent or a skill runs."""
        for skill in self.known:
            start = start_on(skill, url)
            if skill.site != site_of(url) or not stable_start(skill) or start in self.asked:
                continue
            self.asked.add(start)
            landed = await lands_on(start)
            if landed is not None and not (landed and at_path(skill.start.path, landed)):
                self.elsewhere.add(start)

    def offer(self, obs: Observation, controls: dict[str, Control], dialog: bool) -> list[Offer]:
        """The skills this page offers (none while it holds a dialog open), kept as this step's."""
        usable = [s for s in self.known if s.id not in self.unstartable and not self._sent_elsewhere(s, obs.url)]
        offered = (
            offers(usable, obs, controls, self.task, reachable=self.reachable, **self.levers)
            if usable and not dialog
            else []
        )
        if self.plan and offered:  # what the page shows of where the run stands: a log-in form, a staff page
            here = [o.skill for o in offered if o.here]
            seen_in = True if any(s.start.logged_in for s in here) else self.logged_in
            self.logged_in = False if any(logs_in(s) for s in here) else seen_in
            if self.logged_in:  # a log-in that would open its page first cannot start: logged in, that page
                # shows no form (the 1.5B, logged in, called one that stopped at its first field)
                offered = [o for o in offered if o.here or not logs_in(o.skill)]
        if self.plan and usable and not dialog:
            offered = [self._through_plan(o, usable, obs) for o in offered]
            offered += self._planned(usable, obs, {o.skill.id for o in offered}, MAX_OFFERS - len(offered))
            if not self.secrets:  # no password to give: a log-in cannot run, nor what a plan reaches through one
                # (a guest's basket task was offered nine skills that each stopped at "needs Log In first")
                logins = {s.id for s in usable if logs_in(s)}
                offered = [
                    o
                    for o in offered
                    if not logs_in(o.skill) and not (isinstance(o, PlannedOffer) and logins & set(o.first))
                ]
        self.offers = {o.label: o for o in offered}
        self.near = (
            linked(usable, obs, controls, {o.skill.id for o in offered})
            if usable and not dialog and self.levers.get("menu", True) and self.levers.get("skill_states", True)
            else []
        )
        return offered

    def _sent_elsewhere(self, skill: Skill, url: str) -> bool:
        """Whether the skill's start page now sends the run elsewhere, and no plan changes that:
        it was recorded logged out (a plan never logs out), or the run is logged in already (a
        page that needs a log-in sends a logged-out run to the log-in, which a plan runs first)."""
        return start_on(skill, url) in self.elsewhere and (not skill.start.logged_in or self.logged_in is True)

    def _through_plan(self, offer: Offer, usable: list[Skill], obs: Observation) -> Offer:
        """An offer that opens its start page, as a plan would run it: after a log-in if the run
        is logged out (its line says so)."""
        chain = None if offer.here else plan_for(offer.skill, usable, Where(obs.url, self.logged_in))
        return (
            PlannedOffer(offer.label, offer.skill, False, offer.options, first=tuple(s.id for s in chain))
            if chain
            else offer
        )

    def _planned(self, usable: list[Skill], obs: Observation, offered: set[str], room: int) -> list[Offer]:
        """The site's skills a plan reaches from here (after those the page offers), ``room`` at most."""
        where, site, out = Where(obs.url, self.logged_in), site_of(obs.url), list[Offer]()
        for skill in usable:
            if len(out) < room and skill.id not in offered and skill.site == site:
                if chain := plan_for(skill, usable, where):
                    out.append(PlannedOffer(label(skill), skill, False, first=tuple(s.id for s in chain)))
        return out

    async def run(
        self, browser, obs: Observation, label: str, args: dict[str, str], reveal, repair: Repair | None
    ) -> SkillRun:
        """The offered skill ``label`` run with ``args``: through its plan, or alone (``plan`` off)."""
        offer = self.offers[label]
        if not self.plan:
            self.last = None
            return await run_skill(browser, obs, offer, args, reveal, repair)
        self.last = await run_plan(
            browser,
            obs,
            offer,
            args,
            self.known,
            self.logged_in,
            secrets=self.secrets,
            reveal=reveal,
            repair=repair,
            ask=self.ask,
        )
        self.logged_in = self.last.logged_in
        return self.last.run

    def block(self) -> str:
        """The lines the model reads after the page (``offer.block``)."""
        return block(list(self.offers.values()), self.done, self.near)

    def params(self) -> dict[str, dict[str, tuple[str, ...]]]:
        """What each offered skill takes: parameter -> its live options (``Choices.skills``)."""
        return {o.label: {p.name: o.options.get(p.name, ()) for p in o.skill.params} for o in self.offers.values()}

    def acted(self, offer: Offer | None, ok: bool, steps: list[InnerStep] | None, sent_form: bool, n: int) -> None:
        """After step ``n``'s action was done: ``offer`` the skill it called (or None), ``steps``
        what the skill did, ``sent_form`` whether the action sent a form."""
        if offer is not None and ok:  # its line says so from now on, as a typed field's does
            self.done[offer.skill.id] = n
        for skill in self.last.ran if self.last is not None and offer is not None else []:
            self.done[skill.id] = n  # (the skills its plan ran first, too)
        self.last = None
        if offer is None and ok and sent_form:  # a form the model sent may have logged in, or out
            self.logged_in = None
        if ok and (sent_form or offer is not None):  # where start pages lead may have changed
            self.asked, self.elsewhere = set(), set()
        if offer is not None and not ok and not started(steps or []):
            self.unstartable.add(offer.skill.id)
            self.failed_starts[offer.skill.id] = self.failed_starts.get(offer.skill.id, 0) + 1
        elif ok and sent_form:
            self.unstartable = {s for s in self.unstartable if self.failed_starts.get(s, 0) >= MAX_FAILED_STARTS}
