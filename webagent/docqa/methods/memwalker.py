"""MemWalker (Chen et al., 2023): a tree of summaries over the pages, navigated from the root.

Construction (once per document): the pages are the segments; their gists (the shared
gist memory) are the first level of summaries; consecutive groups of at most
`max_children` nodes are summarized into the next level, until one level has at most
`max_children` nodes — the root's children.

Navigation (per question): at an inner node the model sees its children's summaries
(the triage prompt) and picks one, or reverts to the parent (-1); at a leaf it sees the
page (the leaf prompt) and answers (-2) or reverts (-1). The summaries of the nodes on
the path are carried along as working memory. An explored child is not offered again.
A reply still unusable after the one re-ask ends the navigation with "no answer", as
does a root with every child explored or the step cap: a counted navigation failure.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from functools import partial
from typing import Any

from webagent.docqa.answering import parse_option
from webagent.docqa.data import Question
from webagent.docqa.methods import NO_ANSWER, MethodResult, Variant
from webagent.docqa.reading import DocumentState
from webagent.llm.client import LLMClient, ModelCallError, Reply
from webagent.llm.reask import ReplyTally, ask_until_usable
from webagent.memory import GistMemory, first_words, word_count
from webagent.prompts import prompt_hash, render_prompt

ACTION_SCHEMA = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "action": {"type": "integer"}, "answer": {"type": "string"}},
    "required": ["reasoning", "action"],
}
_ACTION = re.compile(r"action\s*[:=]?\s*(-?\d+)", re.IGNORECASE)
_ANSWER = re.compile(r"answer\s*[:=]\s*(.+)", re.IGNORECASE | re.DOTALL)


@dataclass
class Tree:
    """nodes[i] = {"summary": str, "children": [ids], "page": int | None}; the last node is
    the root (no summary of its own: it is never shown)."""

    nodes: list[dict]

    @property
    def root(self) -> int:
        return len(self.nodes) - 1

    def is_leaf(self, i: int) -> bool:
        return self.nodes[i]["page"] is not None


async def build_tree(client: LLMClient, memory: GistMemory, max_children: int) -> tuple[Tree, int]:
    nodes: list[dict[str, Any]] = [
        {"summary": gist, "children": [], "page": page.index} for page, gist in zip(memory.pages, memory.gists)
    ]
    level = list(range(len(nodes)))
    failures = 0
    while len(level) > max_children:
        groups = [level[i : i + max_children] for i in range(0, len(level), max_children)]

        async def summarize(group: list[int]) -> tuple[str, bool]:
            passages = "\n\n".join(f"Passage {k}:\n{nodes[c]['summary']}" for k, c in enumerate(group))
            try:
                reply = await client.complete(
                    render_prompt("memwalker_summary", passages=passages), purpose="memwalker-tree", max_tokens=256
                )
                if reply.text.strip():
                    return reply.text.strip(), True
            except ModelCallError:
                pass
            # Fallback, counted: the children's summaries, each cut short.
            return " ".join(first_words(nodes[c]["summary"], 30) for c in group), False

        summaries = await asyncio.gather(*(summarize(g) for g in groups))
        level = []
        for group, (summary, ok) in zip(groups, summaries):
            failures += not ok
            nodes.append({"summary": summary, "children": group, "page": None})
            level.append(len(nodes) - 1)
    nodes.append({"summary": "", "children": level, "page": None})
    return Tree(nodes), failures


def parse_triage(reply: Reply, n_children: int, can_revert: bool) -> tuple[int | None, str | None]:
    data = reply.data
    action = data.get("action") if isinstance(data, dict) else None
    if not isinstance(action, int) or isinstance(action, bool):
        m = _ACTION.search(reply.text)
        action = int(m.group(1)) if m else None
    if action is None:
        return None, 'no "Action: <number>" found in the reply'
    if action == -1 and can_revert:
        return -1, None
    if not 0 <= action < n_children:
        return None, f"action {action} is not a summary number between 0 and {n_children - 1}"
    return action, None


def parse_leaf(reply: Reply, question: Question) -> tuple[tuple[int, str, int | None] | None, str | None]:
    """(action, answer text, option) with action -1 (revert) or -2 (answer)."""
    data = reply.data if isinstance(reply.data, dict) else {}
    action = data.get("action")
    if not isinstance(action, int) or isinstance(action, bool):
        m = _ACTION.search(reply.text)
        action = int(m.group(1)) if m else None
    if action not in (-1, -2):
        return None, "the action must be -1 (revert) or -2 (answer)"
    if action == -1:
        return (-1, "", None), None
    answer = data.get("answer") if isinstance(data.get("answer"), str) else None
    if answer is None:
        m = _ANSWER.search(reply.text)
        answer = m.group(1).strip() if m else ""
    if question.multiple_choice:
        option, problem = parse_option("Answer: " + answer if answer else reply.text)
        return ((-2, answer, option), None) if problem is None else (None, problem)
    return ((-2, answer, None), None) if answer else (None, 'action -2 needs "Answer: ..."')


def _working_memory(tree: Tree, path: list[int], budget: int) -> str:
    summaries = [tree.nodes[i]["summary"] for i in path if tree.nodes[i]["summary"]]
    words = " ".join(summaries).split()
    if not words:
        return ""
    return "Story background information: " + " ".join(words[-budget:]) + "\n"


async def run(client: LLMClient, state: DocumentState, question: Question, variant: Variant) -> MethodResult:
    opts = state.options
    gists = await state.gist_memory()
    memory = gists.value

    async def build(c: LLMClient):
        return await build_tree(c, memory, opts.max_children)

    built = await state.once(
        "memwalker-tree",
        build,
        key_parts=(prompt_hash("memwalker_summary"), opts.max_children),
        inputs=(gists,),
        encode=lambda t: t.nodes,
        decode=Tree,
    )
    tree: Tree = built.value
    tally = ReplyTally()
    ask = partial(ask_until_usable, client, schema=ACTION_SCHEMA, max_tokens=256, tally=tally)
    path, explored = [tree.root], set()
    reverts, visited_pages, longest = 0, [], 0
    budget = max(100, opts.context_words // 4)  # working memory, cut to a quarter of the context
    q_text = question.with_options()
    answer_format = "(A) ..." if question.multiple_choice else "<short answer>"
    for _ in range(4 * len(tree.nodes) + 4):  # every node entered and left at most twice
        node = path[-1]
        wm = _working_memory(tree, path[1:-1] if tree.is_leaf(node) else path[1:], budget)
        if tree.is_leaf(node):
            page = memory.pages[tree.nodes[node]["page"]]
            visited_pages.append(page.index)
            longest = max(longest, word_count(wm) + page.words)
            step = await ask(
                render_prompt(
                    "memwalker_leaf", working_memory=wm, text=page.text, question=q_text, answer_format=answer_format
                ),
                parse=lambda r: parse_leaf(r, question),
                purpose="memwalker-leaf",
                instruction='Reply again in the format "Reasoning: ... Action: -2 or -1 Answer: ...".',
            )
            if step is None:
                break
            if step[0] == -2:
                return _result(step[1], step[2], longest, visited_pages, tally, reverts, False)
        else:
            children = [c for c in tree.nodes[node]["children"] if c not in explored]
            if not children:
                if node == tree.root:
                    tally.problem = "every path from the root was explored without an answer"
                    break
                step = -1
            else:
                summaries = "\n".join(f"Summary {k}: {tree.nodes[c]['summary']}" for k, c in enumerate(children))
                longest = max(longest, word_count(wm) + word_count(summaries))
                can_revert = node != tree.root
                step = await ask(
                    render_prompt(
                        "memwalker_triage",
                        working_memory=wm,
                        question=q_text,
                        summaries=summaries,
                        last_index=len(children) - 1,
                        revert_hint=", or -1 to go back to the parent" if can_revert else "",
                    ),
                    parse=partial(parse_triage, n_children=len(children), can_revert=can_revert),
                    purpose="memwalker-triage",
                    instruction=f'Reply again in the format "Reasoning: ... Action: <number from 0 to {len(children) - 1}>".',
                )
                if step is None:
                    break
            if step != -1:
                path.append(children[step])
                continue
        # revert: this node is explored; go back to its parent
        explored.add(node)
        path.pop()
        reverts += 1
    else:
        tally.problem = "navigation did not finish within the step cap"
    return _result(NO_ANSWER, None, longest, visited_pages, tally, reverts, True)


def _result(
    answer: str, option: int | None, longest: int, pages: list[int], tally: ReplyTally, reverts: int, failed: bool
) -> MethodResult:
    return MethodResult(
        answer=answer,
        option=option,
        context_words=longest,
        lookups=list(dict.fromkeys(pages)),
        failures=tally.failures + (1 if failed and not tally.failures else 0),
        problem=tally.problem,
        notes={"navigation_failed": failed, "reverts": reverts, "navigation_calls": tally.calls},
    )
