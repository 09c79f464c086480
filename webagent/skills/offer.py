"""Which skills a page offers (the menu of what can run here), and how the model reads them.

A skill is offered where it can start: on its start page (the page is at its path template,
``model.at_path``, and its first element is found on the page, by fingerprint), or where its
start can be reached: by default a start with a stable address (no varying segment: a skill
learned on one project's page never opens that project's page from another's); a planner may
say more (``reachable``). Of those, the ones most relevant to the task are offered (BM25 over
each skill's name and description, ``webagent.retrieval``: it orders and caps the menu, it
never decides what is allowed), at most ``MAX_OFFERS``. Offers only add to the page: every
control stays offered beside them. A select parameter takes the select's live options as its
only values when the select is on this page, else the options the recording saw.

A skill whose start is a record's page (a varying segment: ``/tickets/*/``) is never opened by
address (that would be the recording's record). Where this page links to such pages (a list of
tickets), the menu says so after the skills (``Linked``): which links open such a page and which
skills then run there. The model opens the record itself, by clicking the link it means: the
1.5B found the ticket in the list and never opened it, and when the program opened a record it
named as an argument, it named the wrong one (the list's first).

``skill_states=False`` matches starts as before they were learned (a digit run in a path as
any record number); ``menu=False`` offers in page order without ranking, recorded options or the skills one click away:
each lever can be measured alone (``AgentOptions``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit, urlunsplit

from webagent.browser import Observation
from webagent.html.dom import ID_ATTR
from webagent.retrieval import bm25_top_k
from webagent.skills.learn import site_of
from webagent.skills.model import Skill, at_path, segments
from webagent.trace.fingerprint import parse, url_pattern
from webagent.trace.match import find
from webagent.web.agent_view import Control

MAX_OFFERS = 8  # a page offers at most this many skills (those starting here first)
NAMED_LINKS = 3  # a record page's links are named when the page has at most this many (else counted)
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


@dataclass(frozen=True)
class Linked:
    """Skills that start on a record's page (``template``) and the links of this page that
    open such a page, by name in page order: one click away."""

    template: str
    links: tuple[str, ...]
    skills: tuple[Skill, ...]

    def line(self) -> str:
        if len(self.links) <= NAMED_LINKS:
            where = ", ".join(f'link "{name}"' for name in self.links)
        else:
            where = f"any of {len(self.links)} links above"
        runs = "; ".join(f"{label(s)} ({', '.join(p.name for p in s.params)})" for s in self.skills)
        return f"- {where} opens a page at {self.template} where these run: {runs}"


LINKED_HEADER = "One click away (click the link of the record you mean, then the skill runs there):"


def _kind(segment: str) -> str:
    """What a path segment is made of: digits, letters, or both (``14``, ``submit``, ``jazz27``)."""
    return ("9" if any(c.isdigit() for c in segment) else "") + ("a" if any(c.isalpha() for c in segment) else "")


def _like_recorded(skill: Skill, path: str) -> bool:
    """Whether ``path``'s varying segments are of the kind the recording's were: a ticket's
    number, not the word of another page the template also fits (``/tickets/submit/`` for
    ``/tickets/*/``, learned on ``/tickets/14/``)."""
    template, recorded, mine = segments(skill.start.path), segments(urlsplit(skill.start.url).path), segments(path)
    return all(_kind(r) == _kind(m) for t, r, m in zip(template, recorded, mine) if "*" in t)


def _links_to(skill: Skill, obs: Observation, controls: dict[str, Control], root) -> tuple[str, ...]:
    """The names of this page's usable links to the skill's start template (same host, varying
    segments of the recorded kind), each name once, in page order."""
    host, out = urlsplit(obs.url).netloc, dict[str, None]()
    for el in root.iter("a"):
        control = controls.get(el.get(ID_ATTR) or "")
        if control is None or control.disabled or not control.name or not el.get("href"):
            continue
        target = urlsplit(urljoin(obs.url, el.get("href")))
        if target.netloc == host and at_path(skill.start.path, target.path) and _like_recorded(skill, target.path):
            out[control.name] = None
    return tuple(out)


def linked(skills: list[Skill], obs: Observation, controls: dict[str, Control], offered: set[str]) -> list[Linked]:
    """The site's skills (not ``offered`` here) that start on a record's page this page links
    to, grouped by that page's template (``Linked``), each group's skills at most ``MAX_OFFERS``."""
    site = site_of(obs.url)
    record_skills = [s for s in skills if s.site == site and "*" in s.start.path and s.id not in offered]
    if not record_skills or not obs.raw_html.strip():
        return []
    try:
        root = parse(obs.raw_html)
    except Exception:  # noqa: BLE001 - a page lxml cannot read links to nothing
        return []
    groups: dict[str, tuple[tuple[str, ...], list[Skill]]] = {}
    for skill in record_skills:
        if skill.start.path in groups:
            groups[skill.start.path][1].append(skill)
        elif links := _links_to(skill, obs, controls, root):
            groups[skill.start.path] = (links, [skill])
    return [Linked(t, links, tuple(found[:MAX_OFFERS])) for t, (links, found) in groups.items()]


def start_on(skill: Skill, url: str) -> str:
    """The skill's start page on the site of ``url`` (its host and port)."""
    now, then = urlsplit(url), urlsplit(skill.start.url)
    return urlunsplit((now.scheme, now.netloc, then.path, then.query, ""))


def _first_element(skill: Skill, obs: Observation) -> str | None:
    target = next((s.target for s in skill.steps if s.target is not None), None)
    if target is None:
        return ""
    return find(target, obs.raw_html, set(obs.elements)).element_id


def _options(
    skill: Skill, obs: Observation, controls: dict[str, Control], here: bool, recorded: bool
) -> dict[str, tuple[str, ...]]:
    """Each select parameter's values: the select's live options when it is on this page, else
    (``recorded``) the options the recording saw in it."""
    out: dict[str, tuple[str, ...]] = {}
    kept = {p.name: p.options for p in skill.params}
    for step in skill.steps:
        if step.op == "SELECT" and step.param and step.target:
            control = None
            if here:
                found = find(step.target, obs.raw_html, set(obs.elements))
                control = controls.get(found.element_id or "")
            if control is not None and control.options:
                out[step.param] = control.options
            elif recorded and kept.get(step.param):
                out[step.param] = tuple(kept[step.param])
    return out


def _legacy_path(pattern: str) -> str:
    """A page's path as starts were matched before they were learned: a digit run as any number."""
    return re.sub(r"\d+", "N", pattern.split("?", 1)[0])


def _legacy_reachable(skill: Skill) -> bool:
    """As before starts were learned: a GOTO began it, or its address holds no digit."""
    digit = any(ch.isdigit() for ch in urlsplit(skill.start.url).path)
    return (bool(skill.steps) and skill.steps[0].op == "GOTO") or not digit


def _starts_here(skill: Skill, obs: Observation, skill_states: bool) -> bool:
    if skill_states:
        at = at_path(skill.start.path, obs.url)
    else:
        at = _legacy_path(skill.start.pattern) == _legacy_path(url_pattern(obs.url))
    return at and _first_element(skill, obs) is not None


def stable_start(skill: Skill) -> bool:
    """Whether the skill's start page has one address for every record (no varying segment)."""
    return skill.start.reachable and "*" not in skill.start.path


def offers(
    skills: list[Skill],
    obs: Observation,
    controls: dict[str, Control],
    task: str = "",
    *,
    skill_states: bool = True,
    menu: bool = True,
    reachable: Callable[[Skill], bool] | None = None,
) -> list[Offer]:
    """The skills ``obs`` offers (see the module docstring), in order: those that start on this
    page, then those that open their page first (``reachable``: whether a skill's start can be
    reached from here; by default a stable address). Each is labelled by its id, a name the
    model reads ("log_in"), not its place: a 0.5B shown a worked example answering "S1"
    answered S1 on every page, and shown one answering "S2", S2."""
    site = site_of(obs.url)
    if reachable is None:
        reachable = stable_start if skill_states else _legacy_reachable
    here, elsewhere = [], []
    for skill in skills:
        if skill.site != site:
            continue
        if _starts_here(skill, obs, skill_states):
            here.append((skill, True))
        elif reachable(skill):
            elsewhere.append((skill, False))
    chosen: dict[tuple[str, str], tuple[Skill, bool]] = {}
    for skill, at in here + elsewhere:
        # the same steps learned on two start pages (a search box on every page): offered once
        chosen.setdefault((skill.name, skill.description), (skill, at))
    kept = list(chosen.values())
    if menu and task and len(kept) > MAX_OFFERS:  # the most relevant to the task, in the order above
        kept = [kept[i] for i in bm25_top_k([f"{s.name} {s.description}" for s, _ in kept], task, MAX_OFFERS)]
    return [Offer(label(skill), skill, at, _options(skill, obs, controls, at, menu)) for skill, at in kept[:MAX_OFFERS]]


def label(skill: Skill) -> str:
    """The skill's id as an answer's ``element_id``; an id of digits alone would read as an element's."""
    return f"skill_{skill.id}" if skill.id.isdigit() else skill.id


def block(offered: list[Offer], done: dict[str, int] | None = None, near: list[Linked] | None = None) -> str:
    """The lines the model reads after the page ("" when nothing is offered nor one click
    away); a skill this run already did says at which step ("you did this at step 1"), as a
    field the run typed into does: the 1.5B logged in by a skill, then called the same log-in
    skill again."""
    done = done or {}

    def line(o: Offer) -> str:
        step = done.get(o.skill.id)
        return o.line() + (f" (you did this at step {step})" if step else "")

    lines = [HEADER, *(line(o) for o in offered)] if offered else []
    if near:
        lines += [LINKED_HEADER, *(group.line() for group in near)]
    return "\n".join(lines)
