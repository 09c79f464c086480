"""The live agent's next action, in an action space a small model cannot get wrong.

The reply schema ties each operation to the controls it fits (``agent_view.Control.op``):
CLICK only on clickable ids and without a value, TYPE only on text fields (an empty value
clears the field; a secret's placeholder only into a password field, and only one the run
knows), SELECT only on a select, with ``value`` one of that select's option texts (an option
of a group as "group / text"; one schema branch per select while there are at most
``MAX_SELECT_BRANCHES``; beyond that the option is checked after the reply; an option's bare
text that several groups share is refused, naming each), SCROLL/BACK/DONE without an id,
BACK only when there is an earlier page of this run to go back to. FILL (offered when the
page has two or more fields) fills several TYPE/SELECT fields of one form, each checked as
that TYPE or SELECT alone would be, and clicks the form's submit button if one is given; one
bad part refuses the whole action. While the page holds a dialog open (a confirm or prompt
the last action raised), the page cannot be used: the choice is the dialog's answers
(``DIALOG`` accept or dismiss, a prompt's accept with a ``text``) and DONE. Only validity
limits the choice: a disabled control is shown but cannot be chosen; nothing here reads the
task.

The schema's root is an object, ``{"action": <one of the branches>}``, as OpenAI's
structured outputs require; a llama.cpp server enforces it token by token; any other
endpoint gets the same schema and the same check, with one re-ask when a reply falls
outside it.

Two levers (``AgentOptions``) shape the schema further: an action this run repeated on the same
page state (``webagent.agent.loop_breaker``) leaves it where an enum can say so (a CLICK's id, a
SELECT's option, a skill without parameters) and is refused after the reply otherwise
(``Choices.repeated``); and ``Choices.reason`` puts a short free-text ``reason`` before the
action (``{"reason": ..., "action": ...}``), shown in the trace, never executed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Annotated, Literal

from pydantic import AliasChoices, BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from webagent.browser.guard import holds_placeholder
from webagent.llm.client import LLMClient, Reply, call_context
from webagent.llm.reask import REASK_PREFIX, ReplyTally, ask_until_usable
from webagent.llm.replies import read_reply
from webagent.problems import Problem
from webagent.prompts import load_prompt
from webagent.web.action import MAX_ENUM_IDS, _action_from_text, clean_op, clean_value
from webagent.web.agent_view import Control, fold, grouped_options, matching_option, option_names
from webagent.web.control_name import cut
from webagent.web.live_chat import LiveChat, fold_conversation, full_step_message
from webagent.web.typed_action import MAX_SELECT_BRANCHES

DIALOG_ANSWERS = ("accept", "dismiss")
PASSWORD_FIELD = "password field"  # the one kind of field a secret's placeholder may be typed into
NEEDS_ELEMENT = ("CLICK", "TYPE", "SELECT")
FILLABLE = ("TYPE", "SELECT")
# What a FILL may click after filling: a form's submit button, or a button of the same form (or,
# when the fields are in no <form>, a button in none: MiniWoB++'s and many apps' div-built forms
# send with a plain <button>; offered only submit buttons, the 0.5B filled a login and stopped).
SUBMITS = ("submit button", "button")
# The reason before the action (``Choices.reason``): a few words, as generated tokens are the
# scarce resource on 2 cores (about 25 tokens).
REASON_CHARS = 100


@dataclass(frozen=True)
class Choices:
    """What the model may choose at this moment."""

    controls: dict[str, Control]  # the controls shown in the prompt, by id
    can_back: bool = False  # an earlier page of this run to go back to
    dialog: str = ""  # the kind of dialog the page holds open ("confirm", "prompt"): it blocks the page
    # skills offered on this page (``webagent.skills.offer``): label -> parameter -> its only
    # values (a select's live options), or () for any text
    skills: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    fill: bool = True  # FILL may be offered (replay's one-step repair cannot carry it out)
    # words the prompt says that no page does (its warning, a secret's placeholder): a DONE
    # answer quoting them is refused (the 1.5B answered with the warning, and with the task
    # whose password it read as a placeholder)
    notes: tuple[str, ...] = ()
    page: str = ""  # the page's text as the prompt shows it: an answer it holds is the page's, whatever a note quotes
    # actions this run repeated on this page state (``action_key`` -> what the model is told):
    # out of the schema where an enum can say so, refused after the reply otherwise
    repeated: Mapping[str, str] = field(default_factory=dict)
    reason: bool = False  # a short "reason" is asked before the action (``REASON_CHARS``)

    def ids(self, op: str) -> list[str]:
        if self.dialog:
            return []
        return [i for i, c in self.controls.items() if c.op == op and not c.disabled]

    def operations(self) -> list[str]:
        if self.dialog:
            return ["DIALOG", "DONE"]
        ops = [op for op in NEEDS_ELEMENT if self.ids(op)] + (["FILL"] if self.fills() else [])
        ops += (["SKILL"] if self.skills else []) + ["SCROLL"]
        return ops + (["BACK"] if self.can_back else []) + ["DONE"]

    def fills(self) -> bool:
        """Whether FILL is offered: a form (or the fields in no form) with two or more fields to
        fill, or a field in no <form> and a button. A lone field of a <form> is sent by Enter
        (TYPE with press_enter): offered FILL there too, the 1.5B searched the demo shop for
        "Night Trains by Ada Lovelace" (book and buyer in one box) and never found the book. A
        field in no form has no Enter to send it: its button must be clicked (MiniWoB++'s
        enter-text: the 0.5B typed with Enter three times and was stuck)."""
        return self.fill and bool(self.fill_groups())

    def fill_groups(self) -> dict[str, tuple[list[str], list[str]]]:
        """form id ("" for none) -> (its fields, its buttons), for the forms a FILL can fill.
        Of a <form>: the fields it sends when it names any (a nameless field beside named ones
        is a script's), and only the buttons that send it (type submit, or a <button> with
        none); a form that names no field and shows no button that sends it is a script's
        controls, no FILL (the helpdesk's ticket list sits in a mass-update form whose own
        button is hidden: the 1.5B filled the list's search box and page-size select, then
        clicked "Queries", a panel's toggle). Fields in no form go with buttons in none."""
        groups: dict[str, tuple[list[str], list[str]]] = {}
        fields = [self.controls[i] for i in self.ids("TYPE") + self.ids("SELECT")]
        naming = {c.form for c in fields if c.form and c.named}
        for c in fields:
            if c.named or c.form not in naming:
                groups.setdefault(c.form, ([], []))[0].append(c.id)
        for c in (self.controls[i] for i in self.ids("CLICK")):  # what a FILL may click after (``SUBMITS``)
            if c.kind in SUBMITS and c.form in groups and (c.submits or c.kind == "submit button" or not c.form):
                groups[c.form][1].append(c.id)
        return {
            f: (ids, buttons)
            for f, (ids, buttons) in groups.items()
            if (len(ids) >= 2 or (not f and buttons)) and (not f or buttons or f in naming)
        }


def action_key(action: LiveAction) -> str:
    """An action by its operation, target and arguments (what the loop breaker counts and
    bans): the same key is the same action, whatever the page around it."""
    fields = [[f.element_id, f.value] for f in action.fields]
    enter = action.press_enter and action.operation == "TYPE"
    return json.dumps([action.operation, action.element_id, action.value, enter, sorted(action.args.items()), fields])


def _unrepeated_clicks(choices: Choices, ids: list[str]) -> list[str]:
    """``ids`` less those whose CLICK this run repeated on this page state."""
    if not choices.repeated:
        return ids
    return [i for i in ids if action_key(LiveAction(operation="CLICK", element_id=i)) not in choices.repeated]


def _id_field(ids: list[str]) -> dict:
    return {"type": "string", "enum": ids} if len(ids) <= MAX_ENUM_IDS else {"type": "string"}


def _object(properties: dict, required: Iterable[str]) -> dict:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


def _branch(op: str, properties: dict | None = None, required: Iterable[str] = ()) -> dict:
    return _object({"operation": {"type": "string", "enum": [op]}, **(properties or {})}, ["operation", *required])


def _selects(choices: Choices, ids: list[str]) -> list[tuple[dict, dict]]:
    """(element_id, value) of a SELECT on ``ids``: one pair per select, its options the values,
    while there are at most ``MAX_SELECT_BRANCHES``; beyond, one pair for all of them."""
    if len(ids) > MAX_SELECT_BRANCHES:
        return [(_id_field(ids), {"type": "string"})]
    # The option already selected stays a choice: leaving it out would turn a
    # harmless no-op ("no change") into a wrong order when the select is right.
    pairs = []
    for i in ids:
        names = option_names(choices.controls[i].options)
        left = [
            o
            for o in names
            if action_key(LiveAction(operation="SELECT", element_id=i, value=o)) not in choices.repeated
        ]
        if names and not left:  # every option repeated here: the select leaves the schema
            continue
        pairs.append(({"type": "string", "enum": [i]}, {"type": "string", "enum": left or [""]}))
    return pairs


def live_action_schema(choices: Choices) -> dict:
    """One branch per operation the moment allows (see the module docstring)."""
    branches = []
    if choices.dialog == "prompt":
        branches.append(
            _branch("DIALOG", {"value": {"type": "string", "enum": ["accept"]}, "text": {"type": "string"}}, ["value"])
        )
        branches.append(_branch("DIALOG", {"value": {"type": "string", "enum": ["dismiss"]}}, ["value"]))
    elif choices.dialog:
        branches.append(_branch("DIALOG", {"value": {"type": "string", "enum": list(DIALOG_ANSWERS)}}, ["value"]))
    if ids := _unrepeated_clicks(choices, choices.ids("CLICK")):
        branches.append(_branch("CLICK", {"element_id": _id_field(ids)}, ["element_id"]))
    if ids := choices.ids("TYPE"):
        branches.append(
            _branch(
                "TYPE",
                {"element_id": _id_field(ids), "value": {"type": "string"}, "press_enter": {"type": "boolean"}},
                ["element_id", "value", "press_enter"],
            )
        )
    for element, value in _selects(choices, choices.ids("SELECT")):
        branches.append(_branch("SELECT", {"element_id": element, "value": value}, ["element_id", "value"]))
    if choices.fills():
        branches += _fill_branches(choices)
    if not choices.dialog:
        for label, params in choices.skills.items():
            if not params and action_key(LiveAction(operation="SKILL", element_id=label)) in choices.repeated:
                continue
            args = _object(
                {p: {"type": "string", **({"enum": option_names(o)} if o else {})} for p, o in params.items()}, params
            )
            skill = {"element_id": {"type": "string", "enum": [label]}, "args": args}
            branches.append(_branch("SKILL", skill, ["element_id", "args"]))
        ways = [
            w
            for w in ("down", "up")
            if action_key(LiveAction(operation="SCROLL", element_id="", value=w)) not in choices.repeated
        ]
        if ways:  # (a way that did not move the page, twice here, is out: ``loop_breaker.STILL_SCROLLS``)
            branches.append(_branch("SCROLL", {"value": {"type": "string", "enum": ways}}, ["value"]))
    if choices.can_back and not choices.dialog:
        branches.append(_branch("BACK"))
    branches.append(_branch("DONE", {"value": {"type": "string"}}, ["value"]))
    if choices.reason:  # before the action: the model says why, then chooses
        reason = {"type": "string", "maxLength": REASON_CHARS}
        return _object({"reason": reason, "action": {"anyOf": branches}}, ["reason", "action"])
    return _object({"action": {"anyOf": branches}}, ["action"])


# One FILL branch per form up to this many (its fields and its buttons only: a 0.5B offered
# every button clicked one of another form and was refused three times); beyond, one branch of
# all, the form checked after the reply.
MAX_FILL_FORMS = 6


def _fill_branches(choices: Choices) -> list[dict]:
    """FILL: ``fields`` items shaped as the TYPE and SELECT branches are (a select's value one
    of its options, per select up to ``MAX_SELECT_BRANCHES``), at most as many as the form has
    fields, and ``element_id`` one of that form's buttons or ""."""
    groups = choices.fill_groups()
    if len(groups) > MAX_FILL_FORMS:
        fields = [i for ids, _ in groups.values() for i in ids]
        return [_fill_branch(choices, fields, [b for _, buttons in groups.values() for b in buttons])]
    return [_fill_branch(choices, ids, buttons) for ids, buttons in groups.values()]


def _fill_branch(choices: Choices, field_ids: list[str], buttons: list[str]) -> dict:
    typed = [i for i in field_ids if choices.controls[i].op == "TYPE"]
    selects = [i for i in field_ids if choices.controls[i].op == "SELECT"]
    pairs = ([(_id_field(typed), {"type": "string"})] if typed else []) + _selects(choices, selects)
    items = [_object({"element_id": e, "value": v}, ["element_id", "value"]) for e, v in pairs]
    # no more entries than fields to fill: a 0.5B shown two-field examples filled MiniWoB++'s one
    # field twice (its name, then "Enter") and was refused each time
    fields = {
        "type": "array",
        "items": items[0] if len(items) == 1 else {"anyOf": items},
        "minItems": 1,
        "maxItems": len(field_ids),
    }
    submit = {"type": "string", "enum": [*buttons, ""]}
    return _branch("FILL", {"fields": fields, "element_id": submit}, ["fields", "element_id"])


def unwrap(reply: Reply) -> Reply:
    """The action inside ``{"action": {...}}`` (the schema's root, a ``reason`` before it
    aside); a bare action is kept."""
    data = reply.data
    if isinstance(data, dict) and set(data) <= {"action", "reason"} and isinstance(data.get("action"), dict):
        return replace(reply, data=reply.data["action"])
    return reply


def _clean_id(v: object) -> str:
    text = "" if v is None else str(v).strip().removeprefix("id=").strip().strip("[]")
    if text and not re.fullmatch(r"[A-Za-z0-9_-]+", text):
        raise ValueError(f"{v!r} is not an element id (the number in [..] at the start of its line)")
    return text


class FillField(BaseModel):
    """One field of a FILL: its id and the text to type or the option to choose."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    element_id: Annotated[str, BeforeValidator(_clean_id)] = Field(
        "", validation_alias=AliasChoices("element_id", "element", "id")
    )
    value: Annotated[str, BeforeValidator(clean_value)] = ""


class LiveAction(BaseModel):
    """One step of the live agent. ``value``: the text for TYPE, the option for SELECT,
    "up"/"down" for SCROLL, the URL for GOTO (API use only, never offered to the model),
    the answer for DONE, "accept"/"dismiss" for DIALOG (``text``: a prompt's answer).
    FILL: ``fields`` to fill in order, then ``element_id`` (a submit button, or "") clicked."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    operation: Annotated[
        Literal["CLICK", "TYPE", "SELECT", "FILL", "SKILL", "SCROLL", "GOTO", "BACK", "DONE", "DIALOG"],
        BeforeValidator(clean_op),
    ] = Field(validation_alias=AliasChoices("operation", "op", "action"))
    element_id: Annotated[str, BeforeValidator(_clean_id)] = Field(
        "", validation_alias=AliasChoices("element_id", "element", "id")
    )
    value: Annotated[str, BeforeValidator(clean_value)] = ""
    press_enter: bool = False
    text: Annotated[str, BeforeValidator(clean_value)] = ""  # DIALOG accept of a prompt: the text it is answered with
    args: dict[str, str] = Field(default_factory=dict)  # SKILL: its parameters' values
    fields: list[FillField] = Field(default_factory=list)  # FILL: the fields, in order

    @field_validator("args", mode="before")
    @classmethod
    def _args(cls, v: object) -> dict[str, str]:
        if v is None:
            return {}
        if not isinstance(v, dict):
            raise ValueError("args must be an object of parameter names and values")
        return {str(k): clean_value(x) for k, x in v.items()}

    @field_validator("fields", mode="before")
    @classmethod
    def _fields(cls, v: object) -> object:
        return [] if v is None else v

    @field_validator("press_enter", mode="before")
    @classmethod
    def _enter(cls, v: object) -> bool:
        return str(v).strip().lower() in ("true", "1", "yes") if not isinstance(v, bool) else v

    def describe(self) -> str:
        """CLICK [12] / TYPE [7] "text" + Enter / FILL [7]="a" [8]="b" then CLICK [9] / SCROLL down /
        DONE "answer" (long values cut)."""
        value = cut(self.value, 80)
        if self.operation == "FILL":
            filled = " ".join(f'[{f.element_id}]="{cut(f.value, 40)}"' for f in self.fields)
            return f"FILL {filled}" + (f" then CLICK [{self.element_id}]" if self.element_id else "")
        parts: list[str] = [self.operation]
        if self.element_id:
            parts.append(f"[{self.element_id}]")
        if self.operation == "SCROLL":
            parts.append(self.value or "down")
        elif self.operation == "DIALOG":
            parts.append(self.value + (f' "{self.text}"' if self.text else ""))
        elif self.operation == "SKILL":
            parts.append("(" + ", ".join(f'{k}="{v}"' for k, v in self.args.items()) + ")")
        elif value:
            parts.append(value if self.operation == "GOTO" else f'"{value}"')
        if self.press_enter and self.operation == "TYPE":
            parts.append("+ Enter")
        return " ".join(parts)


_LIVE_OP_TEXT = re.compile(r"\b(CLICK|TYPE|SELECT|SKILL|SCROLL|BACK|DONE|DIALOG)\b", re.IGNORECASE)
_BRACKET_ID = re.compile(r"\[([A-Za-z0-9_-]+)\]")


def _live_action_from_text(text: str) -> dict | None:
    fields = _action_from_text(text) or {}
    if m := _LIVE_OP_TEXT.search(text):
        fields["operation"] = m.group(1)
    if "element_id" not in fields and (m := _BRACKET_ID.search(text)):
        fields["element_id"] = m.group(1)
    return fields or None


Checked = tuple[LiveAction | None, Problem | None]


def parse_live_action(reply: Reply, choices: Choices) -> Checked:
    """(action, problem): the reply checked against what ``choices`` allow, an action this
    run repeated on this page state refused with what the loop breaker says of it."""
    action, problem = _checked_action(reply, choices)
    if action is not None and (said := choices.repeated.get(action_key(action))):
        return None, Problem("repeated", said)
    return action, problem


def reason_of(reply: Reply) -> str:
    """The reply's ``reason`` (before its action), cut to ``REASON_CHARS``; "" when none."""
    data = reply.data
    reason = data.get("reason") if isinstance(data, dict) else None
    return " ".join(str(reason).split())[:REASON_CHARS] if reason else ""


def _checked_action(reply: Reply, choices: Choices) -> Checked:
    action, unread = read_reply(unwrap(reply), LiveAction, _live_action_from_text)
    allowed_ops = choices.operations()
    if action is None:
        if unread and unread.startswith("operation"):
            unread = f"no valid operation ({unread}); use one of {', '.join(allowed_ops)}"
        return None, Problem("unreadable", unread or "no action in the reply")
    op = action.operation
    if op not in allowed_ops:
        why = {
            "BACK": "there is no earlier page to go back to",
            "DIALOG": "no dialog is open",
        }.get(
            op,
            "the page holds a dialog open: answer it first" if choices.dialog else "it is not available on this page",
        )
        return None, Problem("not_offered", f"{op} is not possible now ({why}); use one of {', '.join(allowed_ops)}")
    if op != "FILL" and action.fields:
        action = action.model_copy(update={"fields": []})
    if op in NEEDS_ELEMENT:
        return _element_action(action, choices)
    if op == "FILL":
        return _fill_action(action, choices)
    if op == "SKILL":
        return _skill_action(action, choices)
    if op == "DIALOG":
        answer = action.value.lower()
        if answer not in DIALOG_ANSWERS:
            return None, Problem("bad_value", 'DIALOG takes the value "accept" or "dismiss"')
        text = action.text if choices.dialog == "prompt" and answer == "accept" else ""
        return action.model_copy(update={"element_id": "", "press_enter": False, "value": answer, "text": text}), None
    # (an answer the page shows is the page's: a loop message quotes the page, and the 1.5B's
    # right answer, quoted there too, was refused)
    if (
        op == "DONE"
        and not _shows(choices.page, action.value)
        and (quoted := next((n for n in choices.notes if _quotes(action.value, n)), None))
    ):
        return None, Problem(
            "bad_answer",
            f"DONE's answer quotes this prompt's own words ({quoted[:50]!r}), not the page: answer with what "
            "the page shows, or act",
        )
    if op == "SCROLL" and action.value.lower() not in ("", "up", "down"):
        return None, Problem("bad_value", 'SCROLL takes the value "up" or "down"')
    return action.model_copy(
        update={
            "element_id": "",
            "press_enter": False,
            "text": "",
            "value": action.value if op in ("SCROLL", "DONE") else "",
        }
    ), None


def _shows(page: str, answer: str) -> bool:
    """Whether the page's text holds ``answer``, case and spaces aside."""
    a = fold(answer)
    return bool(a) and a in fold(page)


def _quotes(answer: str, note: str) -> bool:
    """Whether ``answer`` holds ``note`` (a placeholder), or is a copy of a piece of it (a
    warning; from 20 characters, its first 40 as the note has them), case and spaces aside."""
    a, n = fold(answer), fold(note)
    return bool(n) and (n in a or (len(a) >= 20 and a[:40] in n))


def _element_action(action: LiveAction, choices: Choices) -> Checked:
    """A CLICK, TYPE or SELECT checked against the control it names."""
    op = action.operation
    control = choices.controls.get(action.element_id)
    if not action.element_id:
        return None, Problem("unreadable", f"{op} needs the element_id of the element to act on")
    if control is None:
        return None, Problem("not_offered", f"element id {action.element_id} is not on this page")
    if control.disabled:
        return None, Problem("disabled", f"[{action.element_id}] {control.kind} {control.name!r} is disabled")
    if control.op != op:
        return None, Problem(
            "wrong_operation", f"[{action.element_id}] is a {control.kind}: it takes {control.op}, not {op}"
        )
    if op == "CLICK":
        return action.model_copy(update={"value": "", "press_enter": False}), None
    if op == "TYPE" and (problem := _secret_problem(action, control)):
        return None, problem
    if op == "SELECT" and not action.value:
        return None, Problem("bad_value", "SELECT needs a value (the option to choose)")
    if op == "SELECT":
        option = matching_option(control.options, action.value)
        if option is None and len(several := grouped_options(control.options, action.value)) > 1:
            return None, Problem(
                "bad_value",
                f"{action.value!r} is an option of several groups of [{action.element_id}]; choose one of: "
                + ", ".join(several),
            )
        if option is None:
            return None, Problem(
                "bad_value",
                f"{action.value!r} is not an option of [{action.element_id}]; choose one of: "
                + ", ".join(control.options),
            )
        return action.model_copy(update={"value": option, "press_enter": False}), None
    return action, None


def _secret_problem(action: LiveAction, control: Control) -> Problem | None:
    """Why a TYPE's value cannot hold a secret's placeholder: it goes only into a password field
    (the 1.5B typed the task's <secret:password> into a log-in's e-mail field: the password
    would be typed where the page shows it). A placeholder of no secret the run knows is typed
    as it stands, and the site answers: refused instead (e48ae89..2a6d0d9), the 1.5B, on a
    question task with a log-in form beside the list, typed it again at every re-ask and ended
    stuck twice."""
    if not holds_placeholder(action.value) or control.kind == PASSWORD_FIELD:
        return None
    return Problem(
        "bad_value",
        f"[{action.element_id}] {control.kind} {control.name!r} is not a password field: "
        "a secret's placeholder goes only into a password field",
    )


def _fill_action(action: LiveAction, choices: Choices) -> Checked:
    """A FILL checked part by part: each field as that TYPE or SELECT alone, none twice, the
    submit button (if any) a submit button, all of one form; the first bad part refuses it all."""
    if not action.fields or (len(action.fields) == 1 and not action.element_id):
        return None, Problem(
            "bad_fill", "FILL needs 2 or more fields, or one and the button to click after it (else use TYPE or SELECT)"
        )
    fields: list[FillField] = []
    forms: list[tuple[str, str]] = []  # (the part, its form)
    for k, f in enumerate(action.fields, 1):
        part = f"field {k} ([{f.element_id}])"
        control = choices.controls.get(f.element_id)
        op: Literal["TYPE", "SELECT"] = "SELECT" if control is not None and control.op == "SELECT" else "TYPE"
        if control is not None and control.op not in FILLABLE:
            return None, Problem(
                "wrong_operation", f"{part}: [{f.element_id}] is a {control.kind}: it takes {control.op}, not FILL"
            )
        checked, problem = _element_action(LiveAction(operation=op, element_id=f.element_id, value=f.value), choices)
        if checked is None or control is None:
            return None, (problem or Problem("not_offered", "not on this page")).within(part)
        if earlier := next((j for j, g in enumerate(fields, 1) if g.element_id == f.element_id), None):
            return None, Problem("bad_fill", f"{part}: [{f.element_id}] is already field {earlier}")
        fields.append(FillField(element_id=f.element_id, value=checked.value))
        forms.append((part, control.form))
    if action.element_id:
        part = f"submit button [{action.element_id}]"
        checked, problem = _element_action(LiveAction(operation="CLICK", element_id=action.element_id), choices)
        if checked is None:
            return None, (problem or Problem("not_offered", "not on this page")).within(part)
        button = choices.controls[action.element_id]
        if button.kind not in SUBMITS:
            return None, Problem("bad_fill", f'{part}: it is a {button.kind}, not a button (or give "" to click none)')
        forms.append((part, button.form))
    # A field outside any <form> shares none with one inside: all of one form, or all of none.
    if other := next(((part, form) for part, form in forms if form != forms[0][1]), None):
        return None, Problem(
            "bad_fill", f"{other[0]}: it is not in the same form as field 1 ([{fields[0].element_id}])"
        )
    update = {"fields": fields, "value": "", "press_enter": False, "text": "", "args": {}}
    return action.model_copy(update=update), None


def _skill_action(action: LiveAction, choices: Choices) -> Checked:
    """A SKILL reply checked against the skills offered: the label, then each parameter (all
    given, none unknown, a select's value one of its live options)."""
    params = choices.skills.get(action.element_id)
    if params is None:
        offered = ", ".join(choices.skills) or "none"
        return None, Problem(
            "not_offered", f"skill {action.element_id or '(no label)'} is not offered on this page (offered: {offered})"
        )
    missing = [p for p in params if not action.args.get(p)]
    if missing:
        return None, Problem("bad_skill_args", f"skill {action.element_id} needs args for: {', '.join(missing)}")
    unknown = [p for p in action.args if p not in params]
    if unknown:
        return None, Problem(
            "bad_skill_args",
            f"skill {action.element_id} takes no parameter {', '.join(unknown)} (it takes: {', '.join(params)})",
        )
    args = dict(action.args)
    for name, options in params.items():
        if options:
            option = matching_option(options, args[name])
            if option is None:
                return None, Problem(
                    "bad_skill_args", f"{args[name]!r} is not an option of {name}; choose one of: " + ", ".join(options)
                )
            args[name] = option
    return action.model_copy(update={"value": "", "press_enter": False, "text": "", "args": args}), None


@dataclass(frozen=True)
class LiveContext:
    """What a step's action call is about, as data (``llm.client.call_context``): what a fake
    model reads instead of the prompt's words (the page's URL and title, the task, the run's
    history lines, the controls the view offers by id, the skills offered by label, the page's
    lines as the step shows them, and the kind of dialog the page holds open, if any)."""

    url: str
    title: str
    task: str
    history: tuple[str, ...]
    controls: Mapping[str, Control]
    skills: Mapping[str, Mapping[str, tuple[str, ...]]]
    page: str = ""  # the view's lines (the whole page, or its gists and the parts read), then the skills
    dialog: str = ""  # "confirm", "prompt", ...: the page shows a dialog (``Choices.dialog``)

    def control_id(self, kind: str, name: str = "") -> str:
        """The id of the first control of this kind ("text field", "submit button"; a kind
        that ends with "button" matches every button kind when given as "button") whose name
        starts with ``name``; an AssertionError naming what the page has when none does."""
        for element_id, c in self.controls.items():
            if (c.kind == kind or (kind == "button" and c.kind.endswith("button"))) and c.name.startswith(name):
                return element_id
        have = ", ".join(f"{c.kind} {c.name!r}" for c in self.controls.values())
        raise AssertionError(f"no {kind} {name!r} on {self.url}; the page has: {have[:600]}")


@dataclass
class LiveOutcome(ReplyTally):
    action: LiveAction | None = None
    reason: str = ""  # the reply's short reason before its action (``Choices.reason``): shown, never executed


# Asking what is left of the task before the action turned a 0.5B model from submitting a
# half-filled form to filling it (a probe on the demo's order page).
NEXT_QUESTION = "Which part of the task is not done yet on this page? What should be the next action?"


def _example_turns(skills: bool = False, reason: bool = False) -> list[dict]:
    """The worked examples (``web_live_examples``) as user/assistant turns, and, when the page
    offers skills, one that calls a skill (``web_live_skill_example``): a small model shown no
    SKILL call answered DONE at once on pages that offered skills (0.5B, three app tasks).
    Each answer carries its short ``reason`` when the schema asks for one, none otherwise."""
    turns: list[dict] = []
    blocks = load_prompt("web_live_examples").split("\n---\n")
    if skills:
        blocks += load_prompt("web_live_skill_example").split("\n---\n")
    for block in blocks:
        asked, answer = block.rsplit("Answer:", 1)
        turns += [
            {"role": "user", "content": asked.strip() + "\n" + NEXT_QUESTION},
            {"role": "assistant", "content": _with_reason(answer.strip(), reason)},
        ]
    return turns


def _with_reason(answer: str, reason: bool) -> str:
    """An example's answer (written with its reason) with or without it, as the schema asks."""
    data = json.loads(answer)
    if not reason:
        data.pop("reason", None)
    return json.dumps(data)


def live_messages(
    *,
    context: str,
    task: str,
    history: list[str],
    url: str,
    title: str,
    warning: str = "",
    skills: bool = False,
    reason: bool = False,
) -> list[dict]:
    """System instructions, the worked examples, then this step: the part that stays the same
    comes first, so the server's prompt cache reuses it from call to call."""
    step = full_step_message(context=context, task=task, history=history, url=url, title=title, warning=warning)
    return _messages(step, skills, reason=reason)


def _messages(user: str, skills: bool, turns: list[dict] | None = None, reason: bool = False) -> list[dict]:
    """The system message (with how to give the reason, when one is asked), the worked
    examples, a conversation's earlier turns, then ``user``."""
    system = load_prompt("web_live_system").strip()
    if reason:
        system += "\n" + load_prompt("web_live_reason").strip()
    return [
        {"role": "system", "content": system},
        *_example_turns(skills, reason),
        *(turns or []),
        {"role": "user", "content": user},
    ]


def step_message(messages: list[dict]) -> str:
    """This step's prompt as one full step message (history, whole page, task, question),
    what a fake model or a harness reads. In a conversation (``LiveChat``) the later turns
    carry only results and changed lines: they are folded back into one message here (a
    re-ask's reply and problem, appended after the step, are left out)."""
    examples = {t["content"] for t in _example_turns(skills=True)}  # (user turns: the same with a reason)
    users = [str(m["content"]) for m in messages[1:] if m.get("role") == "user" and m["content"] not in examples]
    turns = [u for u in users if not u.startswith(REASK_PREFIX)]
    return fold_conversation(turns) if len(turns) > 1 else turns[0]


async def predict_live_action(
    client: LLMClient,
    *,
    context: str,
    task: str,
    history: list[str],
    choices: Choices,
    url: str = "",
    title: str = "",
    warning: str = "",
    purpose: str = "action",
    chat: LiveChat | None = None,
) -> LiveOutcome:
    """The live agent's next action (``live_messages``, or the next turn of ``chat``),
    re-asked once when unusable."""
    # without ``chat``, a new conversation's first turn: the prompt of ``live_messages``
    user = (chat or LiveChat()).user_turn(
        context=context, task=task, history=history, url=url, title=title, warning=warning, question=NEXT_QUESTION
    )
    prompt = _messages(user, bool(choices.skills), chat.turns if chat is not None else None, choices.reason)
    outcome = LiveOutcome()

    def parse(reply: Reply) -> Checked:
        outcome.reason = reason_of(reply) if choices.reason else ""
        return parse_live_action(reply, choices)

    ops = choices.operations()
    about = LiveContext(
        url, title, task, tuple(history), choices.controls, choices.skills, page=context, dialog=choices.dialog
    )
    context_token = call_context.set(about)
    try:
        outcome.action = await ask_until_usable(
            client,
            prompt,
            parse=parse,
            schema=live_action_schema(choices),
            # a skill's arguments and a FILL's fields take more words; the reason its own (``REASON_CHARS``)
            max_tokens=(256 if choices.fills() else 200 if choices.skills else 96) + (32 if choices.reason else 0),
            purpose=purpose,
            tally=outcome,
            instruction=f"Answer again with one JSON action; operation is one of {', '.join(ops)}.",
        )
    finally:
        call_context.reset(context_token)
    if chat is not None:
        reply = _as_reply(outcome.action)
        said = outcome.replies[-1] if outcome.replies else ""
        if choices.reason and reply is not None:  # the answer as the schema has it: its reason first
            reply, said = None, json.dumps({"reason": outcome.reason, "action": reply})
        chat.commit(user, reply, said, url=url, context=context)
    return outcome


def _as_reply(action: LiveAction | None) -> dict | None:
    """The action as the schema's reply, only the fields its operation takes."""
    if action is None:
        return None
    fields = {
        "CLICK": ("element_id",),
        "TYPE": ("element_id", "value", "press_enter"),
        "SELECT": ("element_id", "value"),
        "SCROLL": ("value",),
        "DONE": ("value",),
        "DIALOG": ("value", "text") if action.text else ("value",),
        "SKILL": ("element_id", "args"),
        "FILL": ("fields", "element_id"),
    }.get(action.operation, ())
    dumped = action.model_dump(include=set(fields))
    return {"operation": action.operation, **{f: dumped[f] for f in fields}}  # in the schema's order
