"""A check before the live agent sends a form: one short model call that sees the task and
the form's fields as they are now, and says whether a field still differs from what the
task asks ("Shipping should be Pick up in store"). It informs, it never refuses: a form
the check finds not ready is not sent this once, and the model is told why; sending the
same form again goes through. The calls are counted (purpose ``form_check``) and kept in
the trace."""

from __future__ import annotations

from dataclasses import dataclass

from webagent.llm.client import LLMClient, Reply
from webagent.llm.reask import ReplyTally, ask_until_usable
from webagent.prompts import render_prompt
from webagent.web.agent_view import Control

SCHEMA = {
    "type": "object",
    # What is missing first, then the verdict: the 0.5B answered {"ready": true, "fix": "The
    # text field should have 'Agustina'."} when the verdict came first.
    "properties": {"fix": {"type": "string"}, "ready": {"type": "boolean"}},
    "required": ["fix", "ready"],
    "additionalProperties": False,
}
SUBMITS = ("submit button",)


@dataclass
class FormCheck(ReplyTally):
    ready: bool = True
    fix: str = ""


def _is_field(c: Control) -> bool:
    return c.op in ("TYPE", "SELECT") or c.value in ("checked", "not checked")


def form_fields(controls: dict[str, Control], button: Control) -> list[Control]:
    """The fields ``button`` sends: those of its <form>; for a form built of divs (no <form>),
    the fields in the nearest container they share with a button that comes after all of
    them (a button among the fields is not the form's submit). None when it sends no form."""
    if button.form:
        return (
            [c for c in controls.values() if c.form == button.form and _is_field(c)] if button.kind in SUBMITS else []
        )
    if button.op != "CLICK" or _is_field(button) or "button" not in button.kind:
        return []
    order = list(controls)
    for box in filter(None, button.ancestors):
        inside = [c for c in controls.values() if box in c.ancestors and not c.form]
        fields = [c for c in inside if _is_field(c)]
        if fields:
            last_field = max(order.index(c.id) for c in fields)
            return fields if order.index(button.id) > last_field else []
    return []


def _field_line(c: Control) -> str:
    name = c.name or c.kind
    if c.op == "SELECT":
        return f'- {name}: "{c.value}" (options: {", ".join(c.options)})'
    if c.op == "TYPE":
        shown = (
            "(hidden, filled in)"
            if c.kind == "password field" and c.value
            else (f'"{c.value}"' if c.value else "empty")
        )
        return f"- {name}: {shown}"
    return f"- {name}: {c.value}"


def _parse(reply: Reply) -> tuple[tuple[bool, str] | None, str | None]:
    data = reply.data if isinstance(reply.data, dict) else None
    if data is None or not isinstance(data.get("ready"), bool):
        return None, 'answer {"ready": true or false, "fix": "..."}'
    return (data["ready"], str(data.get("fix") or "").strip()), None


async def check_form(client: LLMClient, task: str, fields: list[Control]) -> FormCheck:
    outcome = FormCheck()
    prompt = render_prompt("web_form_check", task=task, fields="\n".join(_field_line(c) for c in fields))
    verdict = await ask_until_usable(
        client,
        prompt,
        parse=_parse,
        schema=SCHEMA,
        max_tokens=64,
        instruction="Answer with the JSON object only.",
        purpose="form_check",
        tally=outcome,
    )
    if verdict is not None:  # an unusable answer holds nothing back
        outcome.ready, outcome.fix = verdict
    return outcome
