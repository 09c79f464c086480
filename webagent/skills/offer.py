"""Which skills a page offers, and how the model reads them.

A skill is offered where it can start: on its start page (the path matches and its first
element is found on the page, by fingerprint), or, when its start page has a stable
address (``SkillStart.reachable``), on any page of its site: it then opens that page first.
Offers only add to the page: every control stays offered beside them. A select parameter
offered on the skill's own page takes the select's live options as its only values."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from webagent.browser import Observation
from webagent.skills.learn import site_of
from webagent.skills.model import Skill, page_path
from webagent.trace.fingerprint import url_pattern
from webagent.trace.match import find
from webagent.web.agent_view import Control

MAX_OFFERS = 8  # a page offers at most this many skills (those starting here first)
HEADER = (
    'Skills (answer {"operation": "SKILL", "element_id": "<skill>", "args": {...}}: one action does all of a '
    "skill's steps; every control above stays usable):"
)


@dataclass(frozen=True)
class Offer:
    label: str  # the skill's id ("log_in"), as the model reads and answers it
    skill: Skill
    here: bool  # the page is the skill's start page (else the skill opens it first)
    options: dict[str, tuple[str, ...]] = field(default_factory=dict)  # a select parameter -> its live options

    def line(self) -> str:
        return self.skill.line(self.label) + ("" if self.here else f" (opens {self.skill.start.pattern} first)")


def start_on(skill: Skill, url: str) -> str:
    """The skill's start page on the site of ``url`` (its host and port)."""
    now, then = urlsplit(url), urlsplit(skill.start.url)
    return urlunsplit((now.scheme, now.netloc, then.path, then.query, ""))


def _first_element(skill: Skill, obs: Observation) -> str | None:
    target = next((s.target for s in skill.steps if s.target is not None), None)
    if target is None:
        return ""
    return find(target, obs.raw_html, set(obs.elements)).element_id


def _live_options(skill: Skill, obs: Observation, controls: dict[str, Control]) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for step in skill.steps:
        if step.op == "SELECT" and step.param and step.target:
            found = find(step.target, obs.raw_html, set(obs.elements))
            control = controls.get(found.element_id or "")
            if control is not None and control.options:
                out[step.param] = control.options
    return out


def offers(skills: list[Skill], obs: Observation, controls: dict[str, Control]) -> list[Offer]:
    """The skills ``obs`` offers (see the module docstring), in order: those that start on this
    page, then those that open their page first. Each is labelled by its id, a name the model
    reads ("log_in"), not its place: a 0.5B shown a worked example answering "S1" answered S1
    on every page, and shown one answering "S2", S2."""
    site, path = site_of(obs.url), page_path(url_pattern(obs.url))
    here, elsewhere = [], []
    for skill in skills:
        if skill.site != site:
            continue
        if page_path(skill.start.pattern) == path and _first_element(skill, obs) is not None:
            here.append((skill, True))
        elif skill.start.reachable:
            elsewhere.append((skill, False))
    chosen: dict[tuple[str, str], tuple[Skill, bool]] = {}
    for skill, at in here + elsewhere:
        # the same steps learned on two start pages (a search box on every page): offered once
        chosen.setdefault((skill.name, skill.description), (skill, at))
    return [
        Offer(label(skill), skill, at, _live_options(skill, obs, controls) if at else {})
        for skill, at in list(chosen.values())[:MAX_OFFERS]
    ]


def label(skill: Skill) -> str:
    """The skill's id as an answer's ``element_id``; an id of digits alone would read as an element's."""
    return f"skill_{skill.id}" if skill.id.isdigit() else skill.id


def block(offered: list[Offer], done: dict[str, int] | None = None) -> str:
    """The lines the model reads after the page ("" when nothing is offered); a skill this run
    already did says at which step ("you did this at step 1"), as a field the run typed into
    does: the 1.5B logged in by a skill, then called the same log-in skill again."""
    done = done or {}

    def line(o: Offer) -> str:
        step = done.get(o.skill.id)
        return o.line() + (f" (you did this at step {step})" if step else "")

    return "\n".join([HEADER, *(line(o) for o in offered)]) if offered else ""
