"""Predict one CLICK / TYPE / SELECT from a web page context, parsed tolerantly.

The caller says which element ids the action may choose (`allowed_ids`): after a look-up,
the ids of the snippets read again (the paper: the model "reads the retrieved snippets
again and predicts the target element"); otherwise every id visible in the context. They
become the JSON-schema enum and the validity check. A reply with no element id, an id
that is not allowed, or no valid operation is re-asked once with the problem stated;
after that the step counts as a failure (no action). Nothing is defaulted: a missing
operation is not read as CLICK, and a value given with CLICK is kept (Mind2Web's op F1
judges it, as upstream does).

With the page's controls (``mind2web eval --typed-actions``), the schema and the check are
the typed space's instead (``typed_action.TypedSpace``): each operation only on the
allowed ids of the kind it fits, a select's value among its options. Without them
nothing differs from the plain space above.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import AliasChoices, BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from webagent.llm.client import LLMClient, Reply
from webagent.llm.reask import ReplyTally, ask_until_usable
from webagent.llm.replies import read_reply
from webagent.prompts import render_prompt
from webagent.web.agent_view import Control
from webagent.web.typed_action import TypedSpace

OPERATIONS = ("CLICK", "TYPE", "SELECT")

# Above this many allowed ids the schema leaves element_id free (servers cap enum sizes).
MAX_ENUM_IDS = 500
_VISIBLE_ID = re.compile(r"\bid=(\d+)")


def action_schema(choice_ids: list[str] | None = None, space: TypedSpace | None = None) -> dict:
    """JSON schema for the action; with `choice_ids`, element_id must be one of them, which
    keeps small models from inventing ids (constrained decoding where the server has it).
    With a typed `space`, its schema: one branch per operation over the ids of its kind."""
    if space is not None:
        return space.schema(MAX_ENUM_IDS)
    element: dict = {"type": "string"}
    if choice_ids and len(choice_ids) <= MAX_ENUM_IDS:
        element["enum"] = list(choice_ids)
    return {
        "type": "object",
        "properties": {
            "element_id": element,
            "operation": {"type": "string", "enum": list(OPERATIONS)},
            "value": {"type": "string"},
        },
        "required": ["element_id", "operation", "value"],
    }


def visible_ids(context: str, valid_ids: Iterable[str]) -> list[str]:
    """Ids the model can see in its context (id=N), in order of appearance, that exist on the page."""
    valid = set(valid_ids)
    return list(dict.fromkeys(i for i in _VISIBLE_ID.findall(context) if i in valid))


def clean_op(v: object) -> str:
    return str(v).strip().upper() if v is not None else ""


def clean_value(v: object) -> str:
    return "" if v is None else str(v).strip()


class WebAction(BaseModel):
    """What the model must give: an element id, one of the three operations, a value."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    element_id: str = Field(validation_alias=AliasChoices("element_id", "element", "id"))
    operation: Annotated[Literal["CLICK", "TYPE", "SELECT"], BeforeValidator(clean_op)] = Field(
        validation_alias=AliasChoices("operation", "op", "action")
    )
    value: Annotated[str, BeforeValidator(clean_value)] = ""

    @field_validator("element_id", mode="before")
    @classmethod
    def _id(cls, v: object) -> str:
        text = str(v).strip().removeprefix("id=").strip() if v is not None else ""
        if not text.isdigit():
            raise ValueError(f"{v!r} is not an element id (the number after id=)")
        return text


_ID_TEXT = re.compile(r"(?:element[_ ]?id|\bid)\s*[\"':=]*\s*\"?(\d+)", re.IGNORECASE)
_OP_TEXT = re.compile(r"\b(CLICK|TYPE|SELECT)\b", re.IGNORECASE)
# value: "O'Brien" keeps its apostrophe: a quoted value runs to its closing double quote.
_VALUE_TEXT = re.compile(
    r"value\s*[\"']?\s*[:=]\s*(?:\"([^\"\n]*)\"|'([^'\n]*)'(?![A-Za-z])|([^\"\n},]*))", re.IGNORECASE
)


def _action_from_text(text: str) -> dict | None:
    """ "Element id=12 ... TYPE ... Value: x" prose → the fields found (missing ones stay missing)."""
    fields: dict = {}
    if m := _ID_TEXT.search(text):
        fields["element_id"] = m.group(1)
    if m := _OP_TEXT.search(text):
        fields["operation"] = m.group(1)
    if m := _VALUE_TEXT.search(text):
        fields["value"] = next((g for g in m.groups() if g is not None), "").strip()
    return fields or None


def parse_action(
    reply: Reply, allowed_ids: Iterable[str], space: TypedSpace | None = None
) -> tuple[WebAction | None, str | None]:
    """(action, problem) for one reply; `allowed_ids` are the ids the action may choose;
    a typed `space` also refuses an operation that does not fit the element."""
    action, problem = read_reply(reply, WebAction, _action_from_text)
    if action is None:
        if problem and problem.startswith("operation"):
            problem = f"no valid operation ({problem}); use CLICK, TYPE or SELECT"
        return None, problem
    if action.element_id not in set(allowed_ids):
        return None, f"element id {action.element_id} is not one you may act on here"
    if space is not None:
        value, problem = space.check(action.element_id, action.operation, action.value)
        if problem is not None:
            return None, problem
        return action.model_copy(update={"value": value}), None
    return action, None


@dataclass
class ActionOutcome(ReplyTally):  # failures: unusable after the re-ask, or the call failed
    action: WebAction | None = None


async def predict_action(
    client: LLMClient,
    *,
    context: str,
    task: str,
    previous_actions: list[str],
    allowed_ids: Iterable[str],
    target_hint: str = "",
    purpose: str = "action",
    controls: Mapping[str, Control] | None = None,
) -> ActionOutcome:
    """One action on `context`, choosing among `allowed_ids` (in the order given: the enum).
    `target_hint` ends the prompt's "Pick the element by its id" sentence (e.g. where to look).
    With the page's `controls` (``typed_action.page_controls``) the action space is typed."""
    allowed = list(dict.fromkeys(allowed_ids))
    space = TypedSpace.of(allowed, controls) if controls is not None else None
    prompt = render_prompt(
        "web_action",
        context=context,
        task=task,
        target_hint=target_hint,
        previous_actions="\n".join(previous_actions) if previous_actions else "None",
    )
    outcome = ActionOutcome()
    outcome.action = await ask_until_usable(
        client,
        prompt,
        parse=lambda reply: parse_action(reply, allowed, space),
        schema=action_schema(allowed, space),
        max_tokens=96,
        purpose=purpose,
        tally=outcome,
        instruction=(
            'Answer again with JSON {"element_id": "...", "operation": "CLICK" or "TYPE" or "SELECT", '
            f'"value": "..."}} where element_id is one of: {", ".join(allowed[:40])}'
            f"{' ...' if len(allowed) > 40 else ''}."
        ),
    )
    return outcome
