"""Mind2Web's typed action space (`mind2web eval --typed-actions`): the live agent's idea of
tying each operation to the elements it fits, applied to a Mind2Web step.

The ids the action may choose (the plain space's ``allowed_ids``) are split by what the
agent view (``agent_view.build_view`` over the step's cleaned HTML) says they are:

* CLICK: ids the view classifies as clickable (links, buttons, checkboxes, radios, ...),
  and every id the view does not classify at all. Mind2Web's cleaned HTML lacks
  ``is_clickable`` on many elements, so an unclassified ``<div>``/``<span>``/``<li>`` may
  well be the target of a click: it stays reachable, for CLICK only.
* TYPE: text inputs, textareas, contenteditable elements; ``value`` non-empty.
* SELECT: ``<select>`` ids, ``value`` one of that select's option texts (one schema
  branch per select up to ``MAX_SELECT_BRANCHES``; beyond that, or for a select without
  options, the value is checked after the reply, when there are options to check).

So no allowed id becomes unreachable; only operations that do not fit an element are.
Decisions that keep Mind2Web's scoring what it is:

* A value given with CLICK is kept (the schema leaves CLICK's ``value`` a free string, as
  the plain space does): Mind2Web's op F1 judges it, as upstream does ("CLICK foo" vs
  gold "CLICK" scores 0.67, so the step fails). The typed space constrains which
  operation goes with which element, not what the model says alongside a click.
* The reply keeps the plain space's fields, order (``element_id``, ``operation``,
  ``value``) and prompt: with constrained decoding the id is chosen first, among the same
  ids as in the plain space, and its kind then fixes the operation (and a select's
  options the value). So a greedy model picks the element it would pick anyway and only
  its operation can change. The live agent's order (operation first) was measured too
  (Qwen2.5-Coder-0.5B on the fixtures' test_website and one test_task task): choosing
  the operation before seeing the ids, the model lost the one element it had right (and
  took SELECT on every step of the task with a select), so the id stays first.
* A SELECT value that names an option ignoring case and spacing becomes that option's
  exact text (what Mind2Web's gold value is).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from webagent.web.agent_view import Control, build_view, matching_option

# Each select is its own schema branch (its options as the value enum) up to this many.
MAX_SELECT_BRANCHES = 8


@dataclass(frozen=True)
class TypedSpace:
    """Which operation each allowed id takes, and a classified select's options."""

    op_of: dict[str, str]  # id → CLICK | TYPE | SELECT
    options: dict[str, tuple[str, ...]] = field(default_factory=dict)  # select id → option texts

    @classmethod
    def of(cls, allowed_ids: Iterable[str], controls: Mapping[str, Control]) -> TypedSpace:
        """The typed space over ``allowed_ids`` (in order) given the page's controls."""
        op_of: dict[str, str] = {}
        options: dict[str, tuple[str, ...]] = {}
        for i in dict.fromkeys(allowed_ids):
            control = controls.get(i)
            op_of[i] = control.op if control is not None else "CLICK"
            if control is not None and control.op == "SELECT":
                options[i] = control.options
        return cls(op_of, options)

    def ids(self, op: str) -> list[str]:
        return [i for i, o in self.op_of.items() if o == op]

    def schema(self, max_enum_ids: int) -> dict:
        """One anyOf branch per operation (per select, while there are few), each with the
        ids of its kind as the element_id enum (a free string above ``max_enum_ids``)."""

        def id_field(ids: list[str]) -> dict:
            return {"type": "string", "enum": ids} if len(ids) <= max_enum_ids else {"type": "string"}

        def branch(op: str, element: dict, value: dict) -> dict:
            return {
                "type": "object",
                "properties": {"element_id": element, "operation": {"type": "string", "enum": [op]}, "value": value},
                "required": ["element_id", "operation", "value"],
            }

        branches = []
        if ids := self.ids("CLICK"):
            branches.append(branch("CLICK", id_field(ids), {"type": "string"}))
        if ids := self.ids("TYPE"):
            branches.append(branch("TYPE", id_field(ids), {"type": "string", "minLength": 1}))
        if ids := self.ids("SELECT"):
            if len(ids) <= MAX_SELECT_BRANCHES:
                for i in ids:
                    value = (
                        {"type": "string", "enum": list(self.options[i])}
                        if self.options.get(i)
                        else {"type": "string", "minLength": 1}
                    )
                    branches.append(branch("SELECT", {"type": "string", "enum": [i]}, value))
            else:
                branches.append(branch("SELECT", id_field(ids), {"type": "string", "minLength": 1}))
        return {"anyOf": branches} if branches else {"anyOf": [branch("CLICK", {"type": "string"}, {"type": "string"})]}

    def check(self, element_id: str, op: str, value: str) -> tuple[str, str | None]:
        """(value, problem) for an action on an allowed id: the problem names what does not
        fit; a SELECT value comes back as the option's exact text."""
        fits = self.op_of.get(element_id)
        if fits is None:
            return value, f"element id {element_id} is not one you may act on here"
        if op != fits:
            what = {"TYPE": "a text field", "SELECT": "a select"}.get(fits, "not a text field or a select")
            return value, f"element {element_id} is {what}: it takes {fits}, not {op}"
        if op == "TYPE" and not value:
            return value, "TYPE needs a value (the text to type)"
        if op == "SELECT":
            if not value:
                return value, "SELECT needs a value (the option to choose)"
            if self.options.get(element_id):
                option = matching_option(self.options[element_id], value)  # its text, or ignoring case and spacing
                if option is None:
                    return value, (
                        f"{value!r} is not an option of element {element_id}; choose one of: "
                        + ", ".join(self.options[element_id])
                    )
                return option, None
        return value, None


def page_controls(cleaned_html: str) -> dict[str, Control]:
    """The controls of a cleaned page, by id (what the typed space classifies by)."""
    return build_view(cleaned_html).controls
