"""What a skill holds: a name and a one-line description a model can read, typed parameters
(values that came from the task, or differed between recordings; a password only as a
placeholder), the state where it starts (its path template, the page's landmarks, whether the
recording was logged in) and the state it leaves (the address, what appeared there), and its
steps with the element fingerprints replay matches (``webagent.replay``). Files carry
``version``: one written by another version is refused with one line; a file written before
starts and ends were learned reads with their fields defaulted.

A path template is a path whose varying segments are globs (``/events/*/book``,
``/issue*``): a segment varies only where recordings, or the site's own links on the recorded
pages, showed it vary (``skills.learn``), never because it holds a digit. ``at_path`` says
whether a URL is at a template."""

from __future__ import annotations

import json
import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from webagent.trace.fingerprint import Fingerprint
from webagent.trace.step import RecordedStep

VERSION = 1
STEP_OPS = ("CLICK", "TYPE", "SELECT", "GOTO")  # what a skill's step may do
NOT_KEPT = {"secret", "repaired"}  # a recorded step's fields a skills file leaves out (a password is a parameter)


class SkillParam(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    kind: Literal["text", "select", "secret"]
    example: str | None = None  # a value it took in a recording (never a password's)
    source: Literal["task", "differed", "password", "declared"] = "task"
    options: list[str] = Field(default_factory=list)  # a select's options as the recording saw them


class SkillStart(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str  # the page as recorded
    pattern: str  # its path and query names (``replay.fingerprint.url_pattern``)
    title: str = ""
    form: dict = Field(default_factory=dict)  # the form of its first field, if any
    reachable: bool = False  # a stable address: the skill may go there from any page of the site
    path: str = ""  # the path template (``at_path``); a file of d4c3473 gets it from ``pattern``
    landmarks: list[str] = Field(default_factory=list)  # stable headings of the start page
    logged_in: bool = False  # a set-up or a log-in came before it in the recording

    @model_validator(mode="after")
    def _path(self) -> SkillStart:
        if not self.path:  # learned before templates: a record's number was any digit run (as then)
            self.path = re.sub(r"\d+", "*", self.pattern.split("?", 1)[0] or "/")
        return self


class SkillEnd(BaseModel):
    """The state a skill leaves: the page its last step led to and what appeared there that the
    page before it did not show (the message "Ticket created", the added row's text)."""

    model_config = ConfigDict(extra="forbid")
    url: str
    path: str  # its template (``at_path``)
    appears: list[str] = Field(default_factory=list)


class Skill(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = VERSION
    id: str  # unique within its site
    name: str
    description: str
    site: str  # host:port
    start: SkillStart
    params: list[SkillParam] = Field(default_factory=list)
    steps: list[RecordedStep]  # a parameter's example as ``value``; "********" for a password
    end: SkillEnd | None = None  # None: learned before ends were (or from a trace without its pages)
    options: dict[str, list[str]] = Field(default_factory=dict)  # each select's options as recorded, by its name
    sources: list[str] = Field(default_factory=list)  # the recordings it was learned from
    learned_from: list[Literal["demonstration", "run"]] = Field(default_factory=list)

    @field_validator("steps")
    @classmethod
    def _skill_ops(cls, steps: list[RecordedStep]) -> list[RecordedStep]:
        if bad := next((s.op for s in steps if s.op not in STEP_OPS), None):
            raise ValueError(f"a skill's step is one of {', '.join(STEP_OPS)}, not {bad}")
        return steps

    def to_json(self) -> dict:
        """As a skills file keeps it: every field of each step but those of a replay's."""
        return self.model_dump(exclude={"steps": {"__all__": NOT_KEPT}})

    def signature(self) -> tuple:
        """What makes two recordings the same skill: the start page's path and each step's
        operation on the same element (by its role, name and form attributes). The query is left
        out: it tells how the page was reached (``/?@ok_message=Welcome`` after a log-in is the
        list page ``/``), and the same form learned there and on ``/`` is one skill. A skill that
        starts in a form is that form wherever it was met (a search box on every page). A path
        counts by its segments only: the same steps on ``/events/jazz27/book`` and
        ``/events/pycon27/book`` are one skill, whose template the merge makes ``/events/*/book``."""
        return (self.where(), tuple((s.op, _identity(s.target)) for s in self.steps))

    def where(self) -> tuple:
        """Where the skill starts, as ``signature`` compares it."""
        first = next((s.target for s in self.steps if s.target), None) or Fingerprint()
        action = (first.form.get("action") or "").split("?", 1)[0]
        if action:
            return ("form", action, first.form.get("id"))
        return ("path", len(segments(self.start.path)))

    def agrees(self, other: Skill) -> bool:
        """Whether ``other`` is this skill learned again (``signature``): a form's action may
        differ only in its record's segments (those its start page's address holds too:
        ``/events/jazz27/book`` and ``/events/pycon27/book``)."""
        (where, steps), (theirs, their_steps) = self.signature(), other.signature()
        if self.site != other.site or steps != their_steps or where[0] != theirs[0] or where[2:] != theirs[2:]:
            return False
        if where[0] == "path" or where[1] == theirs[1]:
            return where == theirs
        mine, their = segments(where[1]), segments(theirs[1])
        own, their_own = set(segments(urlsplit(self.start.url).path)), set(segments(urlsplit(other.start.url).path))
        return len(mine) == len(their) and all(a == b or (a in own and b in their_own) for a, b in zip(mine, their))

    def line(self, label: str) -> str:
        """The view's line: ``[S1] skill "Log in" (username, password): Username=<username>, ...``."""
        params = ", ".join(p.name for p in self.params)
        return f'[{label}] skill "{self.name}" ({params}): {self.description}'


def segments(path: str) -> list[str]:
    """A path's segments, a trailing slash aside (``/tickets/28/`` -> ``["tickets", "28"]``)."""
    return [s for s in path.split("?", 1)[0].strip("/").split("/") if s] if path.strip("/") else []


def at_path(template: str, url: str) -> bool:
    """Whether ``url`` (an address, or a path) is at the path ``template``: every segment
    equal, a ``*`` standing for one or more characters within one segment."""
    path = urlsplit(url).path if "://" in url else url.split("?", 1)[0]
    mine, theirs = segments(template), segments(path)
    return len(mine) == len(theirs) and all(_segment_re(m).fullmatch(t) for m, t in zip(mine, theirs))


def _segment_re(segment: str) -> re.Pattern:
    return re.compile("[^/]+".join(re.escape(part) for part in segment.split("*")))


def template_of(values: list[str]) -> str:
    """One segment's template from the values recordings showed it take: the value when they
    agree, else what they share at their start (its digits aside) and ``*`` (``issue27``,
    ``issue3`` -> ``issue*``; ``jazz27``, ``pycon27`` -> ``*``)."""
    distinct = list(dict.fromkeys(values))
    if len(distinct) == 1:
        return distinct[0]
    prefix = re.sub(r"\d+$", "", _common_prefix(distinct))
    return prefix.replace("*", "") + "*"


def _common_prefix(values: list[str]) -> str:
    first, last = min(values), max(values)
    n = next((i for i, (a, b) in enumerate(zip(first, last)) if a != b), min(len(first), len(last)))
    return first[:n]


def unify(paths: list[str]) -> str:
    """The template of paths of the same number of segments (recordings of one skill): a
    segment that differed between them varies."""
    split = [segments(p) for p in paths]
    assert len({len(s) for s in split}) == 1, "only paths of as many segments are unified"
    joined = "/".join(template_of([s[i] for s in split]) for i in range(len(split[0])))
    slash = "/" if paths[0].endswith("/") and joined else ""
    return "/" + joined + slash


def describe(steps: list[RecordedStep]) -> str:
    """What a skill does, step by step, each parameter where it goes: ``Username=<username>,
    Password=<password>, clicks "Log in"``. A small model shown only the fields a skill fills
    ("fills Queue, Summary, ...") could not tell which argument went where, and a record's page
    title ("cs-28: View Ticket") named one record where the skill serves every one. A value that
    is no parameter is the constant the skill types or picks (``picks "urgent" in Priority``),
    never ``Priority="urgent"``: a model copied such pairs into its arguments."""
    parts: list[str] = []
    for step in steps:
        name = _label(step.target)
        if step.op == "GOTO":
            parts.append(f"opens {step.page.pattern or step.value}")
        elif step.op == "CLICK":
            parts.append(f'clicks "{name}"' if name else "clicks")
        elif step.param:
            parts.append(f"{name or step.op.lower()}=<{step.param}>")
        else:  # a constant: said as what the skill does, never as a name=value a model copies into its args
            into = f" {'into' if step.op == 'TYPE' else 'in'} {name}" if name else ""
            parts.append(
                f"{'types' if step.op == 'TYPE' else 'picks'} {json.dumps(step.value, ensure_ascii=False)}{into}"
            )
    return ", ".join(parts)


def _label(target: Fingerprint | None) -> str:
    if target is None:
        return ""
    return target.name or target.label or target.attrs.get("name") or target.attrs.get("id") or ""


def _identity(target: Fingerprint | None) -> tuple:
    if target is None:
        return ()
    return (target.tag, target.role, target.name, target.attrs.get("name"), target.attrs.get("id"))
