"""Why a model's reply gave no usable action, as a kind that reports count and a message that
the model and people read. Reports branch on the kind, never on the message's words:
rewording a message changes nothing a report counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

ProblemKind = Literal[
    "unreadable",  # the reply is not the JSON asked for (or does not fit its schema)
    "endpoint",  # the model call failed (the endpoint down, a timeout)
    "context_overflow",  # the endpoint refused the prompt as longer than the model's context
    "not_offered",  # an element, operation or skill the page does not offer now
    "wrong_operation",  # an operation the element does not take (TYPE on a button)
    "bad_value",  # a value the element does not take (an option it does not have)
    "disabled",  # the element is disabled
    "bad_fill",  # a FILL whose parts are not fields of one form and its submit button
    "bad_skill_args",  # a SKILL's arguments missing, unknown, or not among a select's options
    "bad_answer",  # a DONE whose answer quotes the prompt's own words (a warning, a placeholder), not the page
    "nothing_to_act_on",  # the page showed nothing the model could act on (no model call)
    "repeated",  # an action this run repeated on the same page state (``agent.loop_breaker``)
    "ungrounded_answer",  # a DONE whose answer no page of the run showed (``agent.grounding``), refused once
    "no_change",  # a DONE with no answer while nothing was changed on the site (``agent.grounding``), refused once
]
PROBLEM_KINDS: tuple[str, ...] = get_args(ProblemKind)
# The model call failed: there was no reply to read.
CALL_FAILED: frozenset[str] = frozenset({"endpoint", "context_overflow"})
# The agent refused a reply it could read: the model named something the page does not allow.
REFUSED: frozenset[str] = frozenset(PROBLEM_KINDS) - CALL_FAILED - {"unreadable", "nothing_to_act_on"}


@dataclass(frozen=True)
class Problem:
    kind: ProblemKind
    message: str

    def __str__(self) -> str:
        return self.message

    def within(self, part: str) -> Problem:
        """The same problem said of one part of an action ("field 2 ([7]): ...")."""
        return Problem(self.kind, f"{part}: {self.message}")
