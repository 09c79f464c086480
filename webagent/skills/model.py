"""What a skill holds: a name and a one-line description a model can read, typed parameters
(values that came from the task, or differed between recordings; a password only as a
placeholder), the page where it starts (its URL pattern, title and form), and its steps with
the element fingerprints replay matches (``webagent.replay``). Files carry ``version``: one
written by another version is refused with one line."""

from __future__ import annotations

import json
import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

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


class SkillStart(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str  # the page as recorded
    pattern: str  # its path and query names (``replay.fingerprint.url_pattern``)
    title: str = ""
    form: dict = Field(default_factory=dict)  # the form of its first field, if any
    reachable: bool = False  # a stable address: the skill may go there from any page of the site
    logged_in: bool = False  # a log-in came before it in its recording
    landmarks: list[str] = Field(default_factory=list)
    path: str = ""  # its path template: a segment recordings show varying is ``*``


class SkillEnd(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str  # the page it left, as recorded
    path: str  # its path template
    appears: list[str] = Field(default_factory=list)  # what that page shows that was not there before


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
    sources: list[str] = Field(default_factory=list)  # the recordings it was learned from
    learned_from: list[Literal["demonstration", "run"]] = Field(default_factory=list)
    end: SkillEnd | None = None  # where it leaves the run

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
        starts in a form is that form wherever it was met (a search box on every page)."""
        first = next((s.target for s in self.steps if s.target), None) or Fingerprint()
        action = page_path(first.form.get("action") or "")
        where = ("form", action, first.form.get("id")) if action else page_path(self.start.pattern)
        return (where, tuple((s.op, _identity(s.target)) for s in self.steps))

    def line(self, label: str) -> str:
        """The view's line: ``[S1] skill "Log in" (username, password): Username=<username>, ...``."""
        params = ", ".join(p.name for p in self.params)
        return f'[{label}] skill "{self.name}" ({params}): {self.description}'


def page_path(pattern: str) -> str:
    """A page's path, a record's number as any number (``/tickets/N/``: every ticket's page);
    the query's names differ with how the page was reached (a search, a GET form)."""
    return re.sub(r"\d+", "N", pattern.split("?", 1)[0])


def at_path(template: str, url: str) -> bool:
    """Whether ``url``'s path is at the path ``template`` (a ``*`` segment: any one segment)."""
    want, have = template.split("?", 1)[0].strip("/").split("/"), urlsplit(url).path.strip("/").split("/")
    return len(want) == len(have) and all(w == h or (w == "*" and h) for w, h in zip(want, have, strict=True))


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
