"""The web gist memory, shared by the Mind2Web harness and the live agent (paper Appendix E):

    snippets → one gist each, shown as {"index": i, "content": gist} → ReadAgent-P look-up
    → the looked-up snippets expanded in place → one action on the allowed ids

What the action may choose (`act_on`): "looked-up" — after a look-up, only ids inside the
snippets read again (the paper: the model "reads the retrieved snippets again and
predicts the target element"), with the gists kept in the prompt for orientation;
"context" — any id visible in the prompt, gists included. With no look-up (gist memory
only, or a look-up that failed) the action acts on the ids in the context.

Context-length control (paper Appendix H): before the action call, looked-up snippets go
back to their gists, last first, until the prompt's estimated size fits the model's
context; if the endpoint still reports an overflow, one more goes back and the call is
repeated. An overflow is never a traceback.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar, get_args

from webagent.html import Snippet
from webagent.llm.client import LLMClient
from webagent.memory import GistMemory, LookupResult, Page, lookup_parallel
from webagent.memory.gist import GistReuse, build_memory
from webagent.problems import ProblemKind
from webagent.web.action import predict_action, visible_ids

ActOn = Literal["looked-up", "context"]
ACT_ON: tuple[str, ...] = get_args(ActOn)
# Rendered HTML runs at roughly 2 characters per token or more; estimating with 2 keeps the
# prompt inside the window without a tokenizer for every endpoint.
CHARS_PER_TOKEN = 2
PROMPT_RESERVE_TOKENS = 512  # the prompt's own words and the reply


def estimate_tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN + PROMPT_RESERVE_TOKENS


def fits(text: str, context_tokens: int) -> bool:
    return estimate_tokens(text) <= context_tokens


async def build_web_memory(
    client: LLMClient, snippets: list[Snippet], reuse: GistReuse | None = None, gist_prompt: str = "web_gist"
) -> GistMemory:
    """Gist every snippet concurrently with the web gist prompt (the live agent's snippets
    are in its own view, with their own prompt)."""
    pages = [Page(s.index, s.text, {"ids": list(s.ids)}) for s in snippets]
    memory, _ = await build_memory(client, pages, prompt=gist_prompt, reuse=reuse)
    return memory


async def look_up(
    client: LLMClient, memory: GistMemory, *, task: str, previous_actions: list[str], max_pages: int
) -> LookupResult:
    """ReadAgent-P over the snippet gists: 1..max_pages snippets to read again."""
    return await lookup_parallel(
        client,
        memory,
        prompt="web_lookup",
        style="indexed",
        max_pages=max_pages,
        values={"task": task, "previous_actions": "\n".join(previous_actions) or "None"},
    )


def allowed_ids(
    memory: GistMemory,
    expanded: list[int],
    context: str,
    valid_ids: set[str],
    act_on: str,
    visible: Callable[[str], list[str]] | None = None,
) -> list[str]:
    """The ids the action may choose, in page order. ``visible(context)`` finds the ids a
    context shows (Mind2Web's ``id=N`` by default)."""
    if act_on == "looked-up" and expanded:
        wanted = set(expanded)
        ids = [i for p in memory.pages if p.index in wanted for i in p.metadata.get("ids", ())]
        return [i for i in dict.fromkeys(ids) if i in valid_ids]
    if visible is not None:
        return [i for i in visible(context) if i in valid_ids]
    return visible_ids(context, valid_ids)


class _Outcome(Protocol):
    """What ``act_on_memory`` reads of a prediction (``ActionOutcome``, the live agent's ``LiveOutcome``)."""

    @property
    def problem_kind(self) -> ProblemKind | None: ...

    @property
    def action(self) -> Any: ...


OutcomeT = TypeVar("OutcomeT", bound=_Outcome)


@dataclass
class WebDecision(Generic[OutcomeT]):
    """The action on a page and what it took."""

    outcome: OutcomeT
    expanded: list[int]  # snippets shown in full in the action prompt (after context control)
    context: str
    allowed: list[str]
    dropped_for_context: list[int] = field(default_factory=list)  # looked-up snippets sent back to gists

    @property
    def action(self) -> Any:  # WebAction | None for Mind2Web's outcome, LiveAction | None for the live one
        return self.outcome.action


async def act_on_memory(
    client: LLMClient,
    memory: GistMemory,
    *,
    looked_up: list[int],
    task: str,
    previous_actions: list[str],
    valid_ids: set[str],
    act_on: str = "looked-up",
    context_tokens: int = 8192,
    predict: Callable[[str, list[str], str], Awaitable[OutcomeT]] | None = None,
    visible: Callable[[str], list[str]] | None = None,
    render: Callable[[GistMemory, list[int]], str] | None = None,
) -> WebDecision[OutcomeT]:
    """The action prompt over the gists with `looked_up` snippets expanded, within the context.
    `predict(context, allowed_ids, target_hint)` asks for the action; by default Mind2Web's
    CLICK/TYPE/SELECT prompt (the live agent passes its own). `render(memory, expanded)` writes
    the context (default: one `{"index": i, "content": ...}` line per snippet, the paper's form)."""
    if act_on not in ACT_ON:
        raise ValueError(f"act_on must be one of {ACT_ON} (got {act_on!r})")
    expanded = list(looked_up)
    dropped: list[int] = []
    show = render or (lambda m, shown: m.render_indexed(expanded=shown))
    while expanded and not fits(show(memory, expanded), context_tokens):
        dropped.append(expanded.pop())
    outcome: Any  # ActionOutcome by default, else what ``predict`` gives
    while True:
        context = show(memory, expanded)
        allowed = allowed_ids(memory, expanded, context, valid_ids, act_on, visible)
        hint = " from the snippets shown in full (their content is HTML)" if act_on == "looked-up" and expanded else ""
        if predict is None:
            outcome = await predict_action(
                client,
                context=context,
                task=task,
                previous_actions=previous_actions,
                allowed_ids=allowed,
                target_hint=hint,
            )
        else:
            outcome = await predict(context, allowed, hint)
        if not (expanded and outcome.problem_kind == "context_overflow"):
            return WebDecision(outcome, expanded, context, allowed, dropped)
        dropped.append(expanded.pop())
