"""What a skill holds: a name and a one-line description a model can read, typed parameters
(values that came from the task, or differed between recordings; a password only as a
placeholder), the page where it starts (its URL pattern, title and form), and its steps with
the element fingerprints replay matches (``webagent.replay``). Files carry ``version``: one
written by another version is refused with one line."""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

VERSION = 1


class SkillParam(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    kind: Literal["text", "select", "secret"]
    example: str | None = None  # a value it took in a recording (never a password's)
    source: Literal["task", "differed", "password", "declared"] = "task"


class SkillStep(BaseModel):
    model_config = ConfigDict(extra="forbid")
    op: Literal["CLICK", "TYPE", "SELECT", "GOTO"]
    value: str = ""  # the recorded value (a parameter's example; "********" for a password)
    param: str | None = None  # the parameter whose value goes here
    press_enter: bool = False
    target: dict | None = None  # the element's fingerprint (None for GOTO)
    page: dict = Field(default_factory=dict)  # url, pattern, title of the page it was done on
    text: str = ""  # how the recording told the step


class SkillStart(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str  # the page as recorded
    pattern: str  # its path and query names (``replay.fingerprint.url_pattern``)
    title: str = ""
    form: dict = Field(default_factory=dict)  # the form of its first field, if any
    reachable: bool = False  # a stable address: the skill may go there from any page of the site


class Skill(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = VERSION
    id: str  # unique within its site
    name: str
    description: str
    site: str  # host:port
    start: SkillStart
    params: list[SkillParam] = Field(default_factory=list)
    steps: list[SkillStep]
    sources: list[str] = Field(default_factory=list)  # the recordings it was learned from
    learned_from: list[Literal["demonstration", "run"]] = Field(default_factory=list)

    def signature(self) -> tuple:
        """What makes two recordings the same skill: the start page's path and each step's
        operation on the same element (by its role, name and form attributes). The query is left
        out: it tells how the page was reached (``/?@ok_message=Welcome`` after a log-in is the
        list page ``/``), and the same form learned there and on ``/`` is one skill. A skill that
        starts in a form is that form wherever it was met (a search box on every page)."""
        first = next((s.target for s in self.steps if s.target), None) or {}
        form = first.get("form") or {}
        action = page_path(str(form.get("action") or ""))
        where = ("form", action, form.get("id")) if action else page_path(self.start.pattern)
        return (where, tuple((s.op, _identity(s.target)) for s in self.steps))

    def line(self, label: str) -> str:
        """The view's line: ``[S1] skill "Log in" (username, password): Username=<username>, ...``."""
        params = ", ".join(p.name for p in self.params)
        return f'[{label}] skill "{self.name}" ({params}): {self.description}'


def page_path(pattern: str) -> str:
    """A page's path, a record's number as any number (``/tickets/N/``: every ticket's page);
    the query's names differ with how the page was reached (a search, a GET form)."""
    return re.sub(r"\d+", "N", pattern.split("?", 1)[0])


def describe(steps: list[SkillStep]) -> str:
    """What a skill does, step by step, each parameter where it goes: ``Username=<username>,
    Password=<password>, clicks "Log in"``. A small model shown only the fields a skill fills
    ("fills Queue, Summary, ...") could not tell which argument went where, and a record's page
    title ("cs-28: View Ticket") named one record where the skill serves every one."""
    parts: list[str] = []
    for step in steps:
        name = _label(step.target)
        if step.op == "GOTO":
            parts.append(f"opens {step.page.get('pattern') or step.value}")
        elif step.op == "CLICK":
            parts.append(f'clicks "{name}"' if name else "clicks")
        else:
            value = f"<{step.param}>" if step.param else json.dumps(step.value, ensure_ascii=False)
            parts.append(f"{name or step.op.lower()}={value}")
    return ", ".join(parts)


def _label(target: dict | None) -> str:
    if not target:
        return ""
    attrs = target.get("attrs") or {}
    return str(target.get("name") or target.get("label") or attrs.get("name") or attrs.get("id") or "")


def _identity(target: dict | None) -> tuple:
    if not target:
        return ()
    attrs = target.get("attrs") or {}
    return (target.get("tag"), target.get("role"), target.get("name"), attrs.get("name"), attrs.get("id"))
