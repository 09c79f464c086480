"""A step's record: one line of a run's ``steps.jsonl``, the same type for every writer (the
live loop, ``webagent replay``, ``webagent teach``) and every reader (replay and skill
learning through ``trace.workflow``, the reports, the real-app suite, the benchmarks).

``step_record`` builds it, for all of them: the action as the model or the recording gave
it (a password's value as ``REDACTED``), the line it is shown as (``action_text``), the
browser's result, and the fingerprint of the element acted on when the step worked (what
replay finds again). The step engine (``trace.engine.execute``) builds the steps a SKILL or a
FILL did on the page (``skill_steps``, ``fill_steps``); ``StepRecord.as_done`` reads them back
as steps of the run.

On disk a record is JSON with the keys its writer set (``StepRecord.to_json``), plus
``version``. Records written before ``version`` existed have this layout: they read as
version 1. A record of a later version is refused with one line (``read_steps``). Keys this
version does not name are kept (``extra="allow"``): a trace written by an older webagent
still reads, and rewriting it (``TraceWriter`` scrubs the lines already written when it
learns a secret) loses nothing.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from webagent.browser import REDACTED, ActionResult, Observation
from webagent.errors import UserError
from webagent.problems import ProblemKind
from webagent.trace.fingerprint import Fingerprint, target_of
from webagent.web.live_action import LiveAction

VERSION = 1
FILE = "steps.jsonl"


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow")


class FieldRecord(_Record):
    """One field of a FILL: its id and the text typed or the option chosen."""

    element_id: str = ""
    value: str = ""


class ActionRecord(_Record):
    """The action of a step, as the model answered it (``LiveAction``) or as it was replayed
    or shown (a password's value as ``REDACTED``)."""

    operation: str
    element_id: str | None = ""
    value: str = ""
    press_enter: bool = False
    text: str = ""  # DIALOG: a prompt's answer
    args: dict[str, str] = Field(default_factory=dict)  # SKILL: its arguments
    fields: list[FieldRecord] = Field(default_factory=list)  # FILL: its fields, in order


class InnerStep(_Record):
    """One step a SKILL or a FILL did on the page, as a run's own step records it: replay and
    learning read a run that called a skill or filled a form through these (``as_done``)."""

    op: str
    element_id: str | None = None
    element: str | None = None  # what the element is ("[textbox] Title", or a fingerprint's short form)
    value: str = ""
    press_enter: bool = False
    param: str | None = None  # a skill's step: the parameter its value came from
    ok: bool = False
    error: str | None = None
    note: str | None = None
    target: Fingerprint | None = None  # the element's fingerprint, taken before acting
    url: str = ""
    title: str = ""


class StepRecord(_Record):
    """One step of a run, a replay or a demonstration (see the module docstring)."""

    version: int = VERSION
    step: int
    url: str = ""
    title: str = ""
    # the page (the live loop)
    page: str | None = None  # the page by what it shows (``agent.state.page_key``)
    snippets: int = 0
    raw_words: int = 0
    controls: int = 0
    frame_errors: list[str] = Field(default_factory=list)
    truncated: bool = False
    dialog: dict[str, Any] | None = None  # a dialog the page held open
    # the decision (``agent.decide.Decision.trace_fields``)
    context_words: int = 0
    lookup_skipped: str | None = None
    gists: list[str] = Field(default_factory=list)
    gist_fallbacks: list[int] = Field(default_factory=list)
    gists_reused: int = 0
    lookup: dict[str, Any] | None = None
    expanded: list[int] = Field(default_factory=list)
    dropped_for_context: list[int] = Field(default_factory=list)
    replies: list[str] = Field(default_factory=list)
    failures: int = 0
    form_check: dict[str, Any] | None = None
    reason: str | None = None  # the model's short reason before its action (``AgentOptions.reason``): never executed
    # the action and what it did
    action: ActionRecord | None = None
    action_text: str = ""
    element: str | None = None
    problem: str | None = None  # why the model's reply gave no usable action (or the reply's problem)
    problem_kind: ProblemKind | None = None  # its kind, what reports count (``webagent.problems``)
    result: dict[str, Any] | None = None  # the browser's ``ActionResult``
    result_text: str = ""
    ok: bool = False
    changed: bool = False
    warning: str | None = None
    dry_run: bool = False
    skill_steps: list[InnerStep] | None = None
    fill_steps: list[InnerStep] | None = None
    target: Fingerprint | None = None  # the element acted on, findable again (``trace.fingerprint``)
    # cost
    calls: list[dict[str, Any]] = Field(default_factory=list)  # every model exchange of the step
    usage: dict[str, Any] = Field(default_factory=dict)
    times: dict[str, float] = Field(default_factory=dict)
    screenshot: str | None = None  # step_NN.png in the trace folder
    # a replay's step
    replay: str | None = None  # replayed | repaired | failed
    workflow_step: int | None = None
    recorded: str | None = None  # the recorded step it replays
    match: dict[str, Any] | None = None  # how its element was found again
    param: str | None = None
    hint: str | None = None  # a repair: what the model was told of the recorded step
    miss: str | None = None  # a repair: why the recorded step could not be replayed
    # a demonstration's step
    taught: bool = False

    def to_json(self) -> dict[str, Any]:
        """The record as written: the keys its writer set, and ``version``."""
        return {"version": self.version, **self.model_dump(mode="json", exclude_unset=True)}

    @property
    def operation(self) -> str | None:
        return self.action.operation if self.action is not None else None

    def as_done(self) -> list[StepRecord]:
        """The steps this record did on the page: itself, or, for a SKILL or a FILL, each step
        the skill did or each field and the click (``InnerStep``), as a step of the run with the
        same number: replay and learning read what was done on the page."""
        inner = {"SKILL": self.skill_steps, "FILL": self.fill_steps}.get(self.operation or "")
        if inner is None:
            return [self]
        return [
            StepRecord(
                step=self.step,
                url=sub.url or self.url,
                title=sub.title or self.title,
                ok=sub.ok,
                target=sub.target,
                action_text=f"{sub.op} {sub.element or sub.value or ''}".strip(),
                action=ActionRecord(
                    operation=sub.op, element_id=sub.element_id or "", value=sub.value, press_enter=sub.press_enter
                ),
            )
            for sub in inner
        ]


class StepLine(str):
    """A progress line that reports one step (``run_agent``'s ``progress``): the line as text,
    and the step's record for a caller that needs more than text (the MCP server's progress
    notification per step) without reading it back out of the words."""

    record: StepRecord

    def __new__(cls, text: str, record: StepRecord) -> StepLine:
        line = super().__new__(cls, text)
        line.record = record
        return line


def history_line(record: StepRecord) -> str:
    """The line a step leaves in the history the model reads (a run's and a replay's alike):
    ``3. TYPE [7] "Night Trains" [searchbox] Search -> ok``."""
    return f"{record.step}. {record.action_text} -> {record.result_text}"


def action_text(action: LiveAction, description: str = "", secret: bool = False, hidden: Collection[str] = ()) -> str:
    """The line a step's action is shown as, in the model's history and in the trace:
    ``TYPE [7] "Night Trains" [searchbox] Search`` (a password's value ``REDACTED``, and a
    FILL's fields in ``hidden``; a click's value is not shown)."""
    shown = _shown(action, secret, hidden)
    if shown.operation in ("CLICK", "BACK") and shown.value:
        shown = shown.model_copy(update={"value": ""})
    text = shown.describe()
    return f"{text} {description}" if description else text


def _shown(action: LiveAction, secret: bool, hidden: Collection[str]) -> LiveAction:
    """``action`` as it may be written: a value typed into a password field as ``REDACTED``."""
    shown = action.model_copy(update={"value": REDACTED}) if secret else action
    if hidden:
        fields = [f.model_copy(update={"value": REDACTED}) if f.element_id in hidden else f for f in action.fields]
        shown = shown.model_copy(update={"fields": fields})
    return shown


def step_record(
    step: int,
    action: LiveAction | None,
    *,
    url: str,
    title: str,
    result_text: str,
    ok: bool,
    obs: Observation | None = None,
    description: str = "",
    problem: str | None = None,
    problem_kind: ProblemKind | None = None,
    executed: ActionResult | None = None,
    secret: bool = False,
    hidden: Collection[str] = (),
    dry_run: bool = False,
    times: Mapping[str, float] | None = None,
    **fields: Any,
) -> StepRecord:
    """The record of one step, for every writer. ``action``: what was done (``None``: the
    model gave no usable action, ``problem`` says why); ``obs``: the page it was done on (the
    element's fingerprint is taken from it when the step worked); ``secret``: the action's
    value went into a password field, ``hidden``: the FILL fields that did (written
    ``REDACTED``). ``fields``: the record's other fields by name (an unknown name is an error,
    not a new key)."""
    if unknown := sorted(set(fields) - set(StepRecord.model_fields)):
        raise TypeError(f"a step record has no field {', '.join(unknown)}")
    shown = _shown(action, secret, hidden) if action is not None else None
    acted = ok and not dry_run and obs is not None and action is not None
    data = {
        "step": step,
        "url": url,
        "title": title,
        **fields,
        "action": shown.model_dump() if shown is not None else None,
        "action_text": action_text(action, description, secret, hidden)
        if action is not None
        else f"no usable action ({problem})",
        "element": description or None,
        "problem": problem,
        "problem_kind": problem_kind if problem else None,
        "result": executed.model_dump() if executed is not None else None,
        "result_text": result_text,
        "ok": ok,
        "dry_run": dry_run,
        "times": {k: round(v, 4) for k, v in (times or {}).items()},
        "target": target_of(obs, action) if acted else None,  # replay: the element, findable again
    }
    return StepRecord.model_validate(data)


def read_steps(path: str | Path) -> list[StepRecord]:
    """The records of a ``steps.jsonl``; a record of a later version than this webagent reads
    is a ``UserError`` (one line)."""
    path = Path(path)
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        data = json.loads(line)
        version = data.get("version", VERSION)
        if version != VERSION:
            raise UserError(f"{path}, line {n}: a step record of version {version!r}; this webagent reads {VERSION}")
        out.append(StepRecord.model_validate(data))
    return out
