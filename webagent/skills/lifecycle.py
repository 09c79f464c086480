"""A site's skills through one run (``SkillLifecycle``): which the page offers at each step,
which skill this run did and at which step (its line says so), and which could not start.

A skill that could not start (its first element is not on its start page: a staff page while
logged out) is not offered again until a form is sent (a log-in changes that), and after a
second time not again in the run: the 1.5B, once logged in, called a skill whose page it could
not reach after every search it sent."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from webagent.browser import Observation
from webagent.skills.model import Skill
from webagent.skills.offer import Offer, block, offers
from webagent.skills.run import started
from webagent.trace.record import InnerStep
from webagent.web.agent_view import Control

MAX_FAILED_STARTS = 2  # a skill that could not start this many times is not offered again in the run


@dataclass
class SkillLifecycle:
    known: list[Skill] = field(default_factory=list)  # the site's skills (``webagent.skills.store``)
    offers: dict[str, Offer] = field(default_factory=dict)  # this step's offers: label -> offer
    done: dict[str, int] = field(default_factory=dict)  # skill id -> the step that last did it
    unstartable: set[str] = field(default_factory=set)  # skills not offered now: they could not start
    failed_starts: dict[str, int] = field(default_factory=dict)  # skill id -> the times it could not start
    task: str = ""  # what the menu is ranked by (``offer.offers``)
    levers: dict[str, bool] = field(default_factory=dict)  # ``offers``' skill_states and menu (``AgentOptions``)
    reachable: Callable[[Skill], bool] | None = None  # a planner's: whether a skill's start can be reached

    def menu_for(self, task: str, *, skill_states: bool = True, menu: bool = True) -> None:
        self.task, self.levers = task, {"skill_states": skill_states, "menu": menu}

    def offer(self, obs: Observation, controls: dict[str, Control], dialog: bool) -> list[Offer]:
        """The skills this page offers (none while it holds a dialog open), kept as this step's."""
        usable = [s for s in self.known if s.id not in self.unstartable]
        offered = (
            offers(usable, obs, controls, self.task, reachable=self.reachable, **self.levers)
            if usable and not dialog
            else []
        )
        self.offers = {o.label: o for o in offered}
        return offered

    def block(self) -> str:
        """The lines the model reads after the page (``offer.block``)."""
        return block(list(self.offers.values()), self.done)

    def params(self) -> dict[str, dict[str, tuple[str, ...]]]:
        """What each offered skill takes: parameter -> its live options (``Choices.skills``)."""
        return {o.label: {p.name: o.options.get(p.name, ()) for p in o.skill.params} for o in self.offers.values()}

    def acted(self, offer: Offer | None, ok: bool, steps: list[InnerStep] | None, sent_form: bool, n: int) -> None:
        """After step ``n``'s action was done: ``offer`` the skill it called (or None), ``steps``
        what the skill did, ``sent_form`` whether the action sent a form."""
        if offer is not None and ok:  # its line says so from now on, as a typed field's does
            self.done[offer.skill.id] = n
        if offer is not None and not ok and not started(steps or []):
            self.unstartable.add(offer.skill.id)
            self.failed_starts[offer.skill.id] = self.failed_starts.get(offer.skill.id, 0) + 1
        elif ok and sent_form:
            self.unstartable = {s for s in self.unstartable if self.failed_starts.get(s, 0) >= MAX_FAILED_STARTS}
