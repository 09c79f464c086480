"""Skills from recordings: a recording (``webagent teach``'s trace, or a finished run's) is cut
into pieces at form and page boundaries, each piece of two or more steps becomes a skill, and
skills that agree (the same start page, the same operations on the same elements) merge into
one whose parameters are the values that differed.

Cutting (no model needed, and nothing here names an app or a site):

* a piece ends with the step that sends a form (a CLICK on a submit button, a TYPE with
  Enter) or just before the page changes;
* a piece that is a single CLICK on a link is the way to the next piece's page: the last such
  click before a piece becomes its first step (the skill then starts on the page with the
  link); links clicked on the way before it are left out;
* a GOTO starts a piece (a stable address: the skill can be reached from any page).

Names and descriptions come from the recording itself: the name is the element the last step
clicked ("Log in", "Submit New Entry"), else "Fill" and the form's first field; the
description is its steps in order, each parameter where it goes (``model.describe``).

Parameters: a value found in the task (``webagent.trace.params``), a password (only ever a
placeholder), or, once two recordings merge, every value that differed between them.

Start and end states come from what the recording saw of its pages (``trace.pages``, kept
by ``webagent teach``): a path segment varies where the site's own links of one list show it
taking other values (``jazz27`` and ``pycon27`` in one list of events), or where two
recordings of one skill differ in it (``merge``); never because it holds a digit. The start
keeps the start page's stable headings (its landmarks) and whether a set-up or a password
came before it; the end keeps the page the last step led to and the texts that appeared
there. A click on an element that then asks again on the same element ("Delete", then "Are
you sure?") is one piece.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from webagent.browser import REDACTED
from webagent.errors import UserError
from webagent.skills.model import (
    Skill,
    SkillEnd,
    SkillParam,
    SkillStart,
    at_path,
    describe,
    segments,
    template_of,
    unify,
)
from webagent.trace import workflow as W
from webagent.trace.fingerprint import Fingerprint, slug
from webagent.trace.pages import PageFacts, read_pages
from webagent.trace.params import field_name
from webagent.trace.step import RecordedStep

MIN_STEPS = 2
MAX_LANDMARKS = 4
MAX_APPEARS = 5
MAX_OTHER_APPEARS = 2
_SUBMIT_TYPES = ("submit", "image")


def site_of(url: str) -> str:
    """``host:port`` of a URL (skills are kept per site)."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.hostname or ''}:{port}"


def _sends(step: RecordedStep) -> bool:
    """Whether a step sends its form: a CLICK on a submit button, or a TYPE with Enter."""
    if step.op != "CLICK":
        return step.op == "TYPE" and step.press_enter
    target = step.target or Fingerprint()
    if target.tag == "button":
        return (target.attrs.get("type") or "submit").lower() == "submit" and bool(target.form)
    return target.tag == "input" and (target.attrs.get("type") or "").lower() in _SUBMIT_TYPES


def _is_link(step: RecordedStep) -> bool:
    target = step.target or Fingerprint()
    return step.op == "CLICK" and (target.tag == "a" or target.role == "link")


def _asks_again(last: RecordedStep | None, step: RecordedStep) -> bool:
    """Whether ``step`` clicks the element ``last`` clicked, on the same page: a button that
    turned into "Are you sure?" (its name changed, not its place)."""
    if last is None or last.op != "CLICK" or step.op != "CLICK" or last.target is None or step.target is None:
        return False
    a, b = last.target, step.target

    def place(t: Fingerprint) -> tuple:
        keep = {k: v for k, v in t.attrs.items() if k in ("id", "name", "type", "href")}
        return (t.tag, t.form, keep, t.nth.of_kind if t.nth else None)

    return last.page.pattern == step.page.pattern and place(a) == place(b)


def cut(steps: list[RecordedStep], stable: Callable[[str], bool] | None = None) -> list[list[RecordedStep]]:
    """The workflow's steps (``trace.workflow.from_trace``) in pieces (see the module docstring).
    ``stable``: whether a page's address is the same for every record (``Recording.stable``)."""
    stable = stable or _stable
    cuts: list[list[RecordedStep]] = [[]]  # the last is the piece being cut; an empty one is dropped below
    before: RecordedStep | None = None  # the step before this one
    for step in steps:
        if step.op in ("DONE", "BACK", "SCROLL"):
            cuts.append([])
            before = None
            continue
        if _asks_again(before, step) and not cuts[-1] and len(cuts) > 1 and cuts[-2][-1:] == [before]:
            cuts.pop()  # the confirmation belongs with the click that asked for it
        before = step
        last = cuts[-1][-1] if cuts[-1] else None
        if last and (step.op == "GOTO" or (last.op != "GOTO" and step.page.pattern != last.page.pattern)):
            if not _asks_again(last, step):
                cuts.append([])
        cuts[-1].append(step)
        if _sends(step):
            cuts.append([])
    joined: list[list[RecordedStep]] = []
    link: list[RecordedStep] = []  # the last lone link click: the way into the next piece's page
    for piece in filter(None, cuts):
        if len(piece) == 1 and _is_link(piece[0]):
            link = piece
            continue
        # the way in is part of the skill only to a page with a stable address ("New issue");
        # a link to one record (ticket 28) is not the way to every record's form
        joined.append((link if stable(piece[0].page.url) else []) + piece)
        link = []
    return [p for p in joined if len(p) >= MIN_STEPS]


def _name(piece: list[RecordedStep]) -> str:
    last = piece[-1]
    if len(piece) >= 2 and _asks_again(piece[-2], last):
        last = piece[-2]  # "Delete", not its "Are you sure?"
    if last.op == "CLICK" and last.target is not None and last.target.name:
        return last.target.name
    first_field = (next((s for s in piece if s.op in ("TYPE", "SELECT")), piece[0])).target or Fingerprint()
    return f"Fill {first_field.name or first_field.label or 'form'}"


def _stable(url: str) -> bool:
    """For a trace that kept no pages (a run's, or one recorded before pages were kept), as
    skills were learned before: a page's path holding a digit is taken for a record's."""
    return not any(ch.isdigit() for ch in urlsplit(url).path)


def varied(path: str, groups: list[list[str]], linked: bool = True) -> str:
    """``path``'s template by the site's own links (``PageFacts.links``, grouped by their place
    on the page): a segment varies where one group holds the link to this path (or to its
    record, ``/events/jazz27/`` for ``/events/jazz27/book``) and links that differ from it in
    that segment alone (``/events/pycon27/``); with ``linked`` False (the page a skill left: a
    record it created is linked nowhere yet) two such links suffice. A first segment varies only as far as its values
    share a start (``/issue27``, ``/issue28``: ``/issue*``): a menu's links differ there too."""
    mine = segments(path)
    out = list(mine)
    for i, seg in enumerate(mine):
        # links of one shape: each to a record (``/events/pycon27/``), or each to this page of
        # its record (``/events/pycon27/book``); "Change password" beside "Edit profile" is neither
        shapes = [(group, n) for group in groups for n in dict.fromkeys((i + 1, len(mine)))]
        for group, n in shapes:
            alike = [
                g for g in map(segments, group) if len(g) == n and g[:i] == mine[:i] and g[i + 1 :] == mine[i + 1 : n]
            ]
            values = [g[i] for g in alike]
            shown = seg in values and len(set(values)) >= 2  # its own link among others of the list
            if not (shown or (not linked and len(set(values) - {seg}) >= 2)):
                continue
            values = values if seg in values else [seg, *values]
            found = template_of([out[i], *values]) if out[i] != seg else template_of(values)
            if not at_path(f"/{found}", f"/{seg}"):  # (``/issue`` among ``/issue27``, ``/issue28``)
                continue
            if i > 0 or found != "*":  # the site's own menu (/events/, /about/) is not a list of records
                out[i] = found
    if not out:
        return "/"
    return "/" + "/".join(out) + ("/" if path.endswith("/") else "")


@dataclass
class Recording:
    """What a recording saw around its workflow's steps (``trace.pages``): the page before each
    step, the page it ended on, and whether a set-up came before it. Empty for a trace that kept
    no pages: its skills then have no landmarks, no recorded options and no end."""

    before: list[PageFacts | None] = field(default_factory=list)  # by the workflow step's index
    final: PageFacts | None = None
    setup: bool = False
    groups: list[list[str]] = field(default_factory=list)  # every page's links, by their place

    def after(self, i: int) -> PageFacts | None:
        """The page step ``i`` led to (the page before the next step, or the last one)."""
        later = [p for p in self.before[i + 1 :] if p is not None]
        return later[0] if later else self.final

    def template(self, url: str, linked: bool = True) -> str:
        path = urlsplit(url).path or "/"
        return varied(path, self.groups, linked) if self.groups else path

    def stable(self, url: str) -> bool:
        return "*" not in self.template(url) if self.groups else _stable(url)


def _named_in(option: str, task: str) -> bool:
    """Whether the task names a select's option: the option's text, or one of its words of three
    letters or more ("4. Low" in "priority Low")."""
    lowered = task.lower()
    if len(option) >= 2 and option.lower() in lowered:
        return True
    words = [w for w in re.findall(r"[^\W\d_]{3,}", option.lower())]
    return bool(words) and all(re.search(rf"\b{re.escape(w)}\b", lowered) for w in words)


def _field_key(target: Fingerprint | None) -> str:
    target = target or Fingerprint()
    return target.attrs.get("name") or target.attrs.get("id") or ""


def _landmarks(page: PageFacts | None, template: str) -> list[str]:
    """The start page's headings that name no one record: none holds a value its path's
    varying segments took (``jazz27``)."""
    if page is None:
        return []
    literal = [seg for seg, tem in zip(segments(urlsplit(page.url).path), segments(template)) if seg != tem]
    kept = [h for h in page.headings if not any(v.lower() in h.lower() for v in literal)]
    return list(dict.fromkeys(kept))[:MAX_LANDMARKS]


def _appears(before: PageFacts | None, after: PageFacts, typed: list[str]) -> list[str]:
    """What the page after a skill shows that the page before its last step did not: its
    messages first, then texts holding a value the skill typed (the added row), then others."""
    seen = set(before.texts) | set(before.messages) if before is not None else set()
    new = [t for t in after.messages + after.texts if t not in seen]
    told = [t for t in after.messages if t not in seen]
    holding = [t for t in new if any(v and v.lower() in t.lower() for v in typed)]
    # other new texts only when nothing tells the outcome (a whole new page's are mostly its frame)
    ordered = told + holding + ([] if told or holding else new[:MAX_OTHER_APPEARS])
    return list(dict.fromkeys(ordered))[:MAX_APPEARS]


def _states(piece: list[RecordedStep], at: int, rec: Recording, logged_in: bool) -> tuple[SkillStart, SkillEnd | None]:
    """The start and end state of the piece whose first step is the workflow's step ``at``."""
    first = piece[0]
    start_page = rec.after(at) if first.op == "GOTO" else (rec.before[at] if at < len(rec.before) else None)
    path = rec.template(first.page.url)
    form = next((s.target.form for s in piece if s.target is not None and s.target.form), {})
    start = SkillStart(
        url=first.page.url,
        pattern=first.page.pattern,
        title=first.page.title,
        form=form,
        reachable="*" not in path,  # no varying segment: the skill may open its page from any other
        path=path,
        landmarks=_landmarks(start_page, path),
        logged_in=logged_in,
    )
    last = at + len(piece) - 1
    after = rec.after(last)
    if after is None:
        return start, None
    before = rec.before[last] if last < len(rec.before) else None
    typed = [s.value for s in piece if s.op == "TYPE" and s.value != REDACTED]
    return start, SkillEnd(
        url=after.url, path=rec.template(after.url, linked=False), appears=_appears(before, after, typed)
    )


def skill_of(
    piece: list[RecordedStep],
    workflow_params: dict,
    source: str,
    kind: str,
    task: str = "",
    rec: Recording | None = None,
    at: int = 0,
    logged_in: bool = False,
) -> Skill:
    """The skill of one piece; ``rec`` what the recording saw of its pages, ``at`` the index of
    the piece's first step among the workflow's, ``logged_in`` whether a set-up or a password
    came before it."""
    rec = rec or Recording()
    recorded = {_field_key(s.target): _options(rec, at + i, s) for i, s in enumerate(piece) if s.op == "SELECT"}
    params: dict[str, SkillParam] = {}
    steps: list[RecordedStep] = []
    for s in piece:
        param = s.param
        if not param and s.op == "SELECT" and _named_in(s.value, task):
            # an option the task named ("a yellow note", "priority Low" for "4. Low"): a parameter
            # too (replay infers typed values only)
            param = field_name(s.target, set(workflow_params) | set(params))
            workflow_params = {**workflow_params, param: {"default": s.value, "source": "task"}}
        if param and s.op in ("TYPE", "SELECT"):
            spec = workflow_params.get(param) or {}
            secret = spec.get("source") == "password"
            params[param] = SkillParam(
                name=param,
                kind="secret" if secret else ("select" if s.op == "SELECT" else "text"),
                example=None if secret else (spec.get("default") or s.value),
                source="password" if secret else ("declared" if spec.get("source") == "declared" else "task"),
                options=recorded.get(_field_key(s.target), []) if s.op == "SELECT" else [],
            )
        else:
            param = None
        # the workflow's step, its parameter as found here (a password is a parameter, not a flag)
        steps.append(s.model_copy(update={"param": param, "secret": False, "repaired": False}, deep=True))
    first = piece[0]
    name = _name(piece)
    start, end = _states(piece, at, rec, logged_in)
    if not rec.groups:  # no pages kept: as learned before (a GOTO began it, or no record number)
        start.reachable = first.op == "GOTO" or _stable(first.page.url)
    return Skill(
        id=slug(name) or "skill",
        name=name,
        description=describe(steps),
        site=site_of(first.page.url),
        start=start,
        end=end,
        params=list(params.values()),
        steps=steps,
        sources=[source],
        learned_from=[kind],  # type: ignore[list-item]
        options={key: seen for key, seen in recorded.items() if key and seen},
    )


def _options(rec: Recording, i: int, step: RecordedStep) -> list[str]:
    """The options the recording saw in the select step ``i`` chose in."""
    page = rec.before[i] if i < len(rec.before) else None
    return list(page.selects.get(_field_key(step.target), [])) if page is not None else []


def _telling_id(skill: Skill, same: list[Skill]) -> str:
    """An id for one of several skills of one name ("Save"): the name and what sets it apart
    from the others, the clicks on its way and the parameters it takes (``save_resolved_comment``,
    ``save_update_ticket_details_owner``); the first of them keeps the bare name when nothing does."""

    def marks(s: Skill) -> list[str]:
        clicks = [t.target.name if t.target else "" for t in s.steps[:-1] if t.op == "CLICK"]
        return [m for m in clicks + [p.name for p in s.params] if m]

    shared = set.intersection(*(set(marks(s)) for s in same))
    own = [m for m in dict.fromkeys(marks(skill)) if m not in shared]
    return slug("_".join([skill.id, *own])) if own else skill.id


def from_recording(folder: str | Path) -> list[Skill]:
    """The skills of one recording: a ``webagent teach`` trace, or a run that ended done."""
    folder = Path(folder)
    workflow = W.from_trace(folder)  # refuses a run that did not end done, or has no steps
    run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    kind = "demonstration" if run.get("taught") else "run"
    task = run.get("task") or ""
    rec = _recording(folder, workflow.steps, bool(run.get("setup")))
    index = {id(s): i for i, s in enumerate(workflow.steps)}
    skills = []
    for piece in cut(workflow.steps, rec.stable):
        at = index[id(piece[0])]
        logged_in = rec.setup or any(s.op == "TYPE" and s.value == REDACTED for s in workflow.steps[:at])
        skills.append(skill_of(piece, workflow.params, str(folder), kind, task, rec, at, logged_in))
    if not skills:
        raise UserError(f"{folder}: no piece of two or more steps that fill or send a form: no skill learned")
    return skills


def _merged_end(mine: SkillEnd | None, theirs: SkillEnd | None) -> SkillEnd | None:
    """The end two recordings of a skill agree on: the texts both saw appear (the message; a
    row's text differs with its values), the address's template over both."""
    if mine is None or theirs is None:
        return mine or theirs
    alike = len(segments(mine.path)) == len(segments(theirs.path))
    path = unify([mine.path, theirs.path]) if alike else mine.path
    return SkillEnd(url=mine.url, path=path, appears=[t for t in mine.appears if t in theirs.appears])


def _recording(folder: Path, steps: list[RecordedStep], setup: bool) -> Recording:
    """What the trace in ``folder`` kept of its pages, by the workflow's steps (a workflow step
    is a record's step that worked; the DONE a site's end added has none)."""
    pages = read_pages(folder)
    if not pages:
        return Recording(setup=setup)
    numbers = [
        rec.step
        for record in W.read_records(folder)
        for rec in record.as_done()
        if rec.action is not None and rec.ok and rec.action.operation in W.REPLAYABLE
    ]
    if len(numbers) not in (len(steps), len(steps) - 1):
        return Recording(setup=setup)  # not the trace the workflow was built from: no pages
    final = pages.get(max(pages))
    groups = [g for p in pages.values() for g in p.links if len(g) >= 2]
    return Recording([pages.get(n) for n in numbers], final, setup, groups)


def merge(skills: list[Skill]) -> list[Skill]:
    """Skills that agree become one; a value that differed between them becomes a parameter.
    Ids stay unique within a site (a second "Save" is ``save_comment`` by its parameters, else ``save_2``)."""
    merged: list[Skill] = []
    for skill in skills:
        kept = next((k for k in merged if k.agrees(skill)), None)
        if kept is None:
            merged.append(skill.model_copy(deep=True))
            continue
        alike = len(segments(kept.start.path)) == len(segments(skill.start.path))
        path = unify([kept.start.path, skill.start.path]) if alike else None
        if len(skill.start.url) < len(kept.start.url):
            # the plainer address of the start page (``/``, not ``/?@ok_message=Welcome+alice``)
            kept.start = skill.start.model_copy(deep=True)
        if path is not None:  # two recordings of it: a segment where they differ varies
            kept.start.path = path
            kept.start.reachable = kept.start.reachable and "*" not in path
            kept.start.landmarks = [m for m in kept.start.landmarks if m in skill.start.landmarks]
        kept.start.logged_in = kept.start.logged_in and skill.start.logged_in
        kept.end = _merged_end(kept.end, skill.end)
        names = {p.name for p in kept.params}
        for mine, theirs in zip(kept.steps, skill.steps):
            if mine.op in ("TYPE", "SELECT") and mine.param is None and mine.value != theirs.value:
                name = theirs.param or field_name(mine.target, names)
                names.add(name)
                mine.param = name
                kept.params.append(
                    SkillParam(
                        name=name,
                        kind="select" if mine.op == "SELECT" else "text",
                        example=mine.value,
                        source="differed",
                        options=list(kept.options.get(_field_key(mine.target), [])),
                    )
                )
        kept.description = describe(kept.steps)
        kept.sources = list(dict.fromkeys(kept.sources + skill.sources))
        kept.learned_from = list(dict.fromkeys(kept.learned_from + skill.learned_from))
        kept.options = {**skill.options, **kept.options}
    out: list[Skill] = []
    taken: dict[str, set[str]] = {}
    kept_skills = merged
    for skill in kept_skills:
        ids = taken.setdefault(skill.site, set())
        same = [s for s in kept_skills if s.site == skill.site and s.id == skill.id]
        base = _telling_id(skill, same) if len(same) > 1 else skill.id
        n, ident = 2, base
        while ident in ids:
            ident, n = f"{base}_{n}", n + 1
        ids.add(ident)
        out.append(skill.model_copy(update={"id": ident}))
    return out
