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
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

from webagent.errors import UserError
from webagent.skills.model import Skill, SkillParam, SkillStart, describe
from webagent.trace import workflow as W
from webagent.trace.fingerprint import Fingerprint, slug
from webagent.trace.params import field_name
from webagent.trace.step import RecordedStep

MIN_STEPS = 2
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


def cut(steps: list[RecordedStep]) -> list[list[RecordedStep]]:
    """The workflow's steps (``trace.workflow.from_trace``) in pieces (see the module docstring)."""
    cuts: list[list[RecordedStep]] = [[]]  # the last is the piece being cut; an empty one is dropped below
    for step in steps:
        if step.op in ("DONE", "BACK", "SCROLL"):
            cuts.append([])
            continue
        last = cuts[-1][-1] if cuts[-1] else None
        if last and (step.op == "GOTO" or (last.op != "GOTO" and step.page.pattern != last.page.pattern)):
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
        joined.append((link if _stable(piece[0].page.url) else []) + piece)
        link = []
    return [p for p in joined if len(p) >= MIN_STEPS]


def _name(piece: list[RecordedStep]) -> str:
    last = piece[-1]
    if last.op == "CLICK" and last.target is not None and last.target.name:
        return last.target.name
    first_field = (next((s for s in piece if s.op in ("TYPE", "SELECT")), piece[0])).target or Fingerprint()
    return f"Fill {first_field.name or first_field.label or 'form'}"


def _stable(url: str) -> bool:
    """A page's path holds no record number (``/issue?@template=item``, not ``/tickets/28/``)."""
    return not any(ch.isdigit() for ch in urlsplit(url).path)


def _named_in(option: str, task: str) -> bool:
    """Whether the task names a select's option: the option's text, or one of its words of three
    letters or more ("4. Low" in "priority Low")."""
    lowered = task.lower()
    if len(option) >= 2 and option.lower() in lowered:
        return True
    words = [w for w in re.findall(r"[^\W\d_]{3,}", option.lower())]
    return bool(words) and all(re.search(rf"\b{re.escape(w)}\b", lowered) for w in words)


def skill_of(piece: list[RecordedStep], workflow_params: dict, source: str, kind: str, task: str = "") -> Skill:
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
            )
        else:
            param = None
        # the workflow's step, its parameter as found here (a password is a parameter, not a flag)
        steps.append(s.model_copy(update={"param": param, "secret": False, "repaired": False}, deep=True))
    first = piece[0]
    form = next((s.target.form for s in piece if s.target is not None and s.target.form), {})
    name = _name(piece)
    return Skill(
        id=slug(name) or "skill",
        name=name,
        description=describe(steps),
        site=site_of(first.page.url),
        start=SkillStart(
            url=first.page.url,
            pattern=first.page.pattern,
            title=first.page.title,
            form=form,
            reachable=first.op == "GOTO" or _stable(first.page.url),  # a GOTO began it, or no record number
        ),
        params=list(params.values()),
        steps=steps,
        sources=[source],
        learned_from=[kind],  # type: ignore[list-item]
    )


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
    skills = [skill_of(p, workflow.params, str(folder), kind, task) for p in cut(workflow.steps)]
    if not skills:
        raise UserError(f"{folder}: no piece of two or more steps that fill or send a form: no skill learned")
    return skills


def merge(skills: list[Skill]) -> list[Skill]:
    """Skills that agree become one; a value that differed between them becomes a parameter.
    Ids stay unique within a site (a second "Save" is ``save_comment`` by its parameters, else ``save_2``)."""
    merged: dict[tuple, Skill] = {}
    for skill in skills:
        key = (skill.site, *skill.signature())
        if key not in merged:
            merged[key] = skill.model_copy(deep=True)
            continue
        kept = merged[key]
        if len(skill.start.url) < len(kept.start.url):
            # the plainer address of the start page (``/``, not ``/?@ok_message=Welcome+alice``)
            kept.start = skill.start.model_copy()
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
                    )
                )
        kept.description = describe(kept.steps)
        kept.sources = list(dict.fromkeys(kept.sources + skill.sources))
        kept.learned_from = list(dict.fromkeys(kept.learned_from + skill.learned_from))
    out: list[Skill] = []
    taken: dict[str, set[str]] = {}
    kept_skills = list(merged.values())
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
