"""The methods compared on Mind2Web, all on the same snippets and the same model, each listed
once in ``REGISTRY`` (raw, bm25@k, neural@k, ranker@k, gistmem, readagent-p@k: what each
reads is its summary there; docs/mind2web.md's table is rendered from it).

The web memory itself (gists, look-up, context control, acting) lives in webagent.web and
is shared with the live agent; this module only configures it per method.

``typed_actions`` (``--typed-actions``): every method's action call uses the typed action
space (``webagent.web.typed_action``) built from the step's cleaned HTML; off by default,
which keeps the benchmark's plain space (any allowed id, any operation).
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass, field

from webagent.errors import UserError
from webagent.html import Snippet, render_page
from webagent.llm.client import LLMClient
from webagent.memory import word_count
from webagent.method_registry import Method, Registry
from webagent.method_registry import Variant as BaseVariant
from webagent.retrieval import NeuralRanker, bm25_top_k, top_k_in_order
from webagent.web.action import ActionOutcome, predict_action, visible_ids
from webagent.web.agent_view import Control
from webagent.web.typed_action import page_controls
from webagent.web.web_memory import (
    CHARS_PER_TOKEN,
    PROMPT_RESERVE_TOKENS,
    act_on_memory,
    build_web_memory,
    look_up,
)

_HERE = "mind2web.methods"
REGISTRY = Registry(
    [
        Method(
            "raw", "the whole rendered page, truncated to `--context-tokens` (default 8192)", run=f"{_HERE}:predict_raw"
        ),
        Method(
            "bm25",
            "the top-k snippets by BM25, query = task + previous actions (`--top-k 1,5`)",
            numbered=True,
            run=f"{_HERE}:predict_retrieved",
        ),
        Method(
            "neural",
            "the top-k snippets by all-MiniLM-L6-v2 (the `neural` extra)",
            numbered=True,
            run=f"{_HERE}:predict_retrieved",
        ),
        Method(
            "ranker",
            "the top-k snippets by MindAct's candidate ranker (`--scores scores_all_data.pkl`): a snippet "
            "scores as its best-ranked candidate",
            numbered=True,
            in_all=False,
            run=f"{_HERE}:predict_retrieved",
        ),
        Method(
            "gistmem",
            'the gists of all snippets, as `{"index": i, "content": gist}` lines',
            run=f"{_HERE}:predict_from_memory",
        ),
        Method(
            "readagent-p",
            "the gists, then 1..k snippets looked up and expanded in place (`--max-lookup 1,5`); the action "
            "picks among the looked-up snippets' ids",
            numbered=True,
            run=f"{_HERE}:predict_from_memory",
        ),
    ]
)


class Variant(BaseVariant):
    @classmethod
    def parse(cls, text: str) -> Variant:
        numbered = REGISTRY.numbered()
        method, k = cls.split(text, REGISTRY.names(), numbered)
        if method in numbered and k is None:
            raise UserError(f"method {method!r} needs a positive k, e.g. {method}@5 (got {text!r})")
        return cls(method, k)


def expand_variants(methods: list[str], top_k: list[int], max_lookup: list[int]) -> list[Variant]:
    """`bm25` with top_k [1, 5] → bm25@1, bm25@5; `readagent-p` takes max_lookup;
    `all` → every default method."""
    names = list(REGISTRY.in_all()) if methods == ["all"] else methods
    out: list[Variant] = []
    for name in names:
        if name in REGISTRY.numbered():  # a bare top-k method: one variant per k
            ks = max_lookup if name == "readagent-p" else top_k
            out += [Variant.parse(f"{name}@{k}") for k in ks]
        else:
            out.append(Variant.parse(name))
    return list(dict.fromkeys(out))


@dataclass
class StepInput:
    task: str
    previous_actions: list[str]
    snippets: list[Snippet]
    cleaned_html: str
    candidate_scores: dict[str, float] = field(default_factory=dict)  # MindAct ranker, when given

    @property
    def query(self) -> str:
        return " ".join([self.task, *self.previous_actions])

    @property
    def valid_ids(self) -> set[str]:
        return {i for s in self.snippets for i in s.ids}

    @property
    def full_words(self) -> int:
        return sum(s.words for s in self.snippets)

    @functools.cached_property
    def controls(self) -> dict[str, Control]:
        """The page's controls (the typed action space's classification), built once per step."""
        return page_controls(self.cleaned_html)


@dataclass
class StepPrediction:
    element_id: str | None
    op: str | None
    value: str | None
    context_words: int
    lookups: list[int] = field(default_factory=list)
    lookup_calls: int = 0
    failures: int = 0  # every unusable reply or failed call of the step (gists, look-up, action)
    problem: str | None = None
    gist_memory_words: int | None = None  # words of all gists: the paper's Figure 6
    lookup_failures: int = 0  # look-ups still unusable (or empty) after the re-ask
    # A model call failed because the endpoint was down (retries exhausted), not because of
    # what the model said: such a step is re-run on resume instead of being kept as wrong.
    endpoint_failed: bool = False
    act_on: str | None = None  # readagent-p: "looked-up" or "context" (ids the action may pick)


async def predict(
    client: LLMClient,
    variant: Variant,
    step: StepInput,
    *,
    context_tokens: int = 8192,
    act_on: str = "looked-up",
    typed_actions: bool = False,
) -> StepPrediction:
    """One method's prediction for one step (the method's ``run`` in ``REGISTRY``). The baselines
    act on the ids visible in their context; gistmem and readagent-p go through the shared web
    memory (webagent.web)."""
    controls = (await asyncio.to_thread(lambda: step.controls)) if typed_actions else None
    run = REGISTRY.runner(variant.method)
    return await run(client, variant, step, context_tokens=context_tokens, act_on=act_on, controls=controls)


def _act(client: LLMClient, step: StepInput, controls: dict[str, Control] | None):
    return functools.partial(
        predict_action, client, task=step.task, previous_actions=step.previous_actions, controls=controls
    )


async def predict_raw(
    client: LLMClient, variant: Variant, step: StepInput, *, context_tokens: int, act_on: str, controls=None
) -> StepPrediction:
    """The whole rendered page, cut to the context."""
    act = _act(client, step, controls)
    page = render_page(step.cleaned_html)
    # Characters per token vary with the tokenizer; if the endpoint still says the
    # prompt is too long, cut the page further rather than lose the step.
    for _ in range(4):
        context = page[: max(0, context_tokens - PROMPT_RESERVE_TOKENS) * CHARS_PER_TOKEN]
        outcome = await act(context=context, allowed_ids=visible_ids(context, step.valid_ids))
        if outcome.problem_kind != "context_overflow":
            break
        context_tokens = int(context_tokens * 0.7)
    return _prediction(outcome, context_words=word_count(context))


async def predict_retrieved(
    client: LLMClient, variant: Variant, step: StepInput, *, context_tokens: int, act_on: str, controls=None
) -> StepPrediction:
    """The top-k snippets by the method's ranking (BM25, the neural ranker, MindAct's scores)."""
    rank = RETRIEVERS.get(variant.method)
    if rank is None:  # ranker: MindAct's scores, given per step; a snippet scores as its best candidate
        scores = step.candidate_scores
        if not scores:
            raise UserError("the ranker method needs MindAct's ranker scores: pass --scores scores_all_data.pkl")
        best = [max((scores[i] for i in s.ids if i in scores), default=float("-inf")) for s in step.snippets]
        chosen = top_k_in_order(best, variant.top_k)
    else:
        chosen = await asyncio.to_thread(rank, [s.text for s in step.snippets], step.query, variant.top_k)
    context = "\n".join(step.snippets[i].text for i in chosen)
    outcome = await _act(client, step, controls)(context=context, allowed_ids=visible_ids(context, step.valid_ids))
    return _prediction(outcome, context_words=word_count(context))


RETRIEVERS = {"bm25": bm25_top_k, "neural": NeuralRanker.top_k}  # ranker: MindAct's scores, given per step


def _prediction(outcome: ActionOutcome, **fields) -> StepPrediction:
    action = outcome.action
    failures = fields.pop("failures", 0) + outcome.failures
    endpoint_failed = fields.pop("endpoint_failed", False) or outcome.endpoint_failed
    return StepPrediction(
        element_id=action.element_id if action else None,
        op=action.operation if action else None,
        value=action.value if action else None,
        failures=failures,
        problem=outcome.problem,
        endpoint_failed=endpoint_failed,
        **fields,
    )


async def predict_from_memory(
    client: LLMClient,
    variant: Variant,
    step: StepInput,
    *,
    context_tokens: int,
    act_on: str,
    controls: dict[str, Control] | None = None,
) -> StepPrediction:
    """The gists of all snippets; with @k (readagent-p), 1..k snippets looked up and expanded."""
    looks_up = variant.k is not None
    memory = await build_web_memory(client, step.snippets)
    failures, endpoint_failed = len(memory.fallback_pages), memory.endpoint_failed
    gist_memory_words = memory.context_words()
    lookups: list[int] = []
    lookup_calls = lookup_failures = 0
    if looks_up:
        found = await look_up(
            client, memory, task=step.task, previous_actions=step.previous_actions, max_pages=variant.top_k
        )
        lookups, lookup_calls, lookup_failures = found.pages, found.calls, found.failures
        failures += found.failures
        endpoint_failed = endpoint_failed or found.endpoint_failed
    act = _act(client, step, controls)  # the default prompt, in the typed action space with controls
    decision = await act_on_memory(
        client,
        memory,
        looked_up=lookups,
        task=step.task,
        previous_actions=step.previous_actions,
        valid_ids=step.valid_ids,
        act_on=act_on,
        context_tokens=context_tokens,
        predict=lambda context, allowed, hint: act(context=context, allowed_ids=allowed, target_hint=hint),
    )
    # The look-up prompt saw all gists; the action prompt the gists with snippets expanded.
    context_words = max(gist_memory_words, memory.context_words(expanded=decision.expanded))
    return _prediction(
        decision.outcome,
        context_words=context_words,
        lookups=decision.expanded,
        lookup_calls=lookup_calls,
        lookup_failures=lookup_failures,
        failures=failures,
        endpoint_failed=endpoint_failed,
        gist_memory_words=gist_memory_words,
        act_on=act_on if looks_up else "context",
    )
