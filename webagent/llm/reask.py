"""Bad model output: re-asked once with the problem stated, then counted as a failure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from webagent.llm.client import ContextOverflow, EndpointUnavailable, LLMClient, ModelCallError, Reply, as_messages
from webagent.problems import Problem, ProblemKind


@dataclass
class ReplyTally:
    """What a caller keeps of the exchange (LookupResult, ActionOutcome... extend it)."""

    calls: int = 0
    failures: int = 0
    replies: list[str] = field(default_factory=list)
    problem: str | None = None
    problem_kind: ProblemKind | None = None  # the problem's kind, when known (what reports count)
    endpoint_failed: bool = False  # set when a call failed because the endpoint was down


REASK_PREFIX = "Your reply could not be used: "


def reask_messages(prompt: str | list[dict], reply: Reply, problem: str, instruction: str) -> list[dict]:
    return [
        *as_messages(prompt),
        {"role": "assistant", "content": reply.text},
        {"role": "user", "content": f"{REASK_PREFIX}{problem}. {instruction}"},
    ]


async def ask_until_usable(
    client: LLMClient,
    prompt: str | list[dict],
    *,
    parse: Callable[[Reply], tuple[Any, Problem | str | None]],
    schema: dict,
    max_tokens: int,
    instruction: str,
    purpose: str,
    tally: ReplyTally,
) -> Any | None:
    """Ask; if `parse(reply)` reports a problem, re-ask once with it stated. Returns the
    parsed value, or None (counted in tally.failures) when nothing usable came back or the
    call failed for good. The tally keeps the last problem, and its kind when known: a
    `Problem`'s, or "endpoint" / "context_overflow" for a call that failed."""
    messages: str | list[dict] = prompt
    for _ in range(2):
        try:
            reply = await client.complete(messages, purpose=purpose, schema=schema, max_tokens=max_tokens)
        except ModelCallError as exc:
            tally.problem = str(exc)
            tally.problem_kind = "context_overflow" if isinstance(exc, ContextOverflow) else "endpoint"
            tally.endpoint_failed = tally.endpoint_failed or isinstance(exc, EndpointUnavailable)
            break
        tally.calls += 1
        tally.replies.append(reply.text)
        value, problem = parse(reply)
        tally.problem = None if problem is None else str(problem)
        tally.problem_kind = problem.kind if isinstance(problem, Problem) else None
        if problem is None:
            return value
        messages = reask_messages(prompt, reply, str(problem), instruction)
    tally.failures += 1
    return None
