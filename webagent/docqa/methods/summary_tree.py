"""Summary tree with cuts ("Querying ultra-long contexts with summary trees").

The pages are the leaves. Consecutive nodes are summarized in pairs, with prior context
(the highest-level summaries of everything before them), into a left-heavy binary tree:
the left child of a node over n leaves holds the largest power of two below n. Complete
left subtrees never change when text is appended, and every node's summary is keyed by
what it was made from (entries, prior context, prompt, model), so appending pages only
summarizes the new nodes on the right edge.

At question time the cut starts at the root; the model names one node with
"INSUFFICIENT DETAIL <n>", which is replaced by its two children, up to
`max_refinements` times (or until the cut would overflow the context, or only leaves are
left). A reply without a usable node number, re-asked once, ends the refinement and is
counted. The final cut is the context of the answer.
"""

from __future__ import annotations

import re
from functools import partial

from webagent.docqa.answering import answer_question
from webagent.docqa.data import Question
from webagent.docqa.methods import MethodResult, Variant
from webagent.docqa.reading import DocumentState
from webagent.llm.cache import content_hash
from webagent.llm.client import LLMClient, ModelCallError, Reply
from webagent.llm.reask import ReplyTally, ask_until_usable
from webagent.memory import Page, first_words, word_count
from webagent.prompts import prompt_hash, render_prompt

CUT_SCHEMA = {
    "type": "object",
    "properties": {"questions": {"type": "string"}, "insufficient_detail": {"type": "integer"}},
    "required": ["insufficient_detail"],
}
_DETAIL = re.compile(r"INSUFFICIENT\s+DETAIL\s*[<(\[#:]?\s*(\d+)", re.IGNORECASE)


def left_size(n: int) -> int:
    """Leaves in the left subtree of a node over n >= 2 leaves: the largest power of two below n."""
    return 1 << ((n - 1).bit_length() - 1)


class TreeBuilder:
    """Builds the tree; `memo` (content-hash → summary) is shared across builds so that a
    node already summarized is never summarized again. Only successful summaries go in."""

    def __init__(self, client: LLMClient, memo: dict | None = None):
        self.client, self.memo = client, memo if memo is not None else {}
        self.nodes: list[dict] = []
        self.failures = 0
        self.summaries_made = 0

    async def build(self, pages: list[Page]) -> tuple[list[dict], int]:
        await self._node(pages, 0, len(pages), [])
        return self.nodes, self.failures

    async def _node(self, pages: list[Page], lo: int, hi: int, prior: list[str]) -> int:
        if hi - lo == 1:
            self.nodes.append({"text": pages[lo].text, "children": [], "page": pages[lo].index})
            return len(self.nodes) - 1
        mid = lo + left_size(hi - lo)
        left = await self._node(pages, lo, mid, prior)
        right = await self._node(pages, mid, hi, prior + [self.nodes[left]["text"]])
        entries = f"{self.nodes[left]['text']}\n\n{self.nodes[right]['text']}"
        prior_context = "\n\n".join(prior) or "(none: these are the first documents)"
        self.nodes.append(
            {"text": await self._summarize(entries, prior_context), "children": [left, right], "page": None}
        )
        return len(self.nodes) - 1

    async def _summarize(self, entries: str, prior_context: str) -> str:
        key = content_hash(
            "summary-node", self.client.model_name, prompt_hash("summary_tree_summarize"), entries, prior_context
        )
        cache = self.client.cache  # across runs too: a grown document reuses its old nodes
        if key not in self.memo and cache is not None and (stored := cache.get("summary-node", key)) is not None:
            self.memo[key] = stored["text"]
        if key in self.memo:
            return self.memo[key]
        try:
            reply = await self.client.complete(
                render_prompt("summary_tree_summarize", prior_context=prior_context, entries=entries),
                purpose="summary-tree",
                max_tokens=384,
            )
            text = reply.text.strip()
        except ModelCallError:
            text = ""
        self.summaries_made += 1
        if not text:  # fallback, counted: the start of the entries
            self.failures += 1
            return first_words(entries, 60)
        self.memo[key] = text
        if cache is not None:
            cache.put("summary-node", key, {"text": text})
        return text


def parse_refinement(reply: Reply, eligible: set[int]) -> tuple[int | None, str | None]:
    data = reply.data
    numbers = []
    if isinstance(data, dict) and isinstance(data.get("insufficient_detail"), int):
        numbers = [data["insufficient_detail"]]
    numbers += [int(n) for n in _DETAIL.findall(reply.text)]
    if not numbers:
        return None, 'the reply must contain "INSUFFICIENT DETAIL <NUMBER>"'
    for n in numbers:
        if n in eligible:
            return n, None
    return None, f"document {numbers[0]} is not an eligible document (eligible: {sorted(eligible)})"


def render_cut(nodes: list[dict], cut: list[int]) -> str:
    parts = []
    for k, i in enumerate(cut, 1):
        tag = " (INELIGIBLE DOCUMENT)" if not nodes[i]["children"] else ""
        parts.append(f"Document {k}{tag}:\n{nodes[i]['text']}")
    return "\n\n".join(parts)


async def refine_cut(
    client: LLMClient, nodes: list[dict], question: str, max_refinements: int, budget_words: int
) -> tuple[list[int], int, ReplyTally, bool]:
    """(cut, refinements, tally, stopped_by_budget)."""
    cut, refinements, tally = [len(nodes) - 1], 0, ReplyTally()
    while refinements < max_refinements:
        eligible = {k for k, i in enumerate(cut, 1) if nodes[i]["children"]}
        if not eligible:
            break
        n = await ask_until_usable(
            client,
            render_prompt("summary_tree_cut", question=question, cut=render_cut(nodes, cut)),
            parse=partial(parse_refinement, eligible=eligible),
            schema=CUT_SCHEMA,
            max_tokens=384,
            purpose="summary-tree-cut",
            tally=tally,
            instruction=f'Your reply MUST contain "INSUFFICIENT DETAIL <NUMBER>" with one of {sorted(eligible)}.',
        )
        if n is None:
            break
        refined = cut[: n - 1] + nodes[cut[n - 1]]["children"] + cut[n:]
        if sum(word_count(nodes[i]["text"]) for i in refined) > budget_words:
            return cut, refinements, tally, True
        cut, refinements = refined, refinements + 1
    return cut, refinements, tally, False


async def run(client: LLMClient, state: DocumentState, question: Question, variant: Variant) -> MethodResult:
    opts = state.options
    pages = await state.pages_built()

    async def build(c: LLMClient):
        return await TreeBuilder(c).build(pages.value)

    built = await state.once("summary-tree", build, key_parts=(prompt_hash("summary_tree_summarize"),), inputs=(pages,))
    nodes = built.value
    cut, refinements, tally, by_budget = await refine_cut(
        client, nodes, question.with_options(), opts.max_refinements, opts.context_words
    )
    context = render_cut(nodes, cut).replace(" (INELIGIBLE DOCUMENT)", "")
    out = await answer_question(client, context, question)
    longest = sum(word_count(nodes[i]["text"]) for i in cut)  # the nodes' words, not their labels
    return MethodResult(
        answer=out.text,
        option=out.option,
        context_words=longest,
        lookups=[nodes[i]["page"] for i in cut if nodes[i]["page"] is not None],
        failures=tally.failures + out.failures,
        problem=tally.problem or out.problem,
        notes={
            "refinements": refinements,
            "cut_size": len(cut),
            "refine_failures": tally.failures,
            "stopped_by_budget": by_budget,
            "stopped_by_cap": refinements >= opts.max_refinements,
        },
    )
