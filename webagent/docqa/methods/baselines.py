"""Baselines on the same pages: full text, truncated text, BM25 and neural top-k retrieval."""

from __future__ import annotations

import asyncio

from webagent.docqa.answering import answer_question
from webagent.docqa.data import Question
from webagent.docqa.methods import MethodResult, Variant
from webagent.docqa.reading import DocumentState
from webagent.llm.client import LLMClient
from webagent.memory import first_words, last_words, word_count
from webagent.retrieval import NeuralRanker, bm25_top_k


async def run(client: LLMClient, state: DocumentState, question: Question, variant: Variant) -> MethodResult:
    opts = state.options
    notes: dict = {}
    chosen: list[int] = []
    if variant.method in ("bm25", "neural"):
        pages = await state.pages()
        rank = bm25_top_k if variant.method == "bm25" else NeuralRanker.top_k
        chosen = await asyncio.to_thread(rank, [p.text for p in pages], question.with_options(), variant.top_k)
        context = "\n\n".join(f"<Page {pages[i].index}>\n{pages[i].text}" for i in chosen)
        words = sum(pages[i].words for i in chosen)  # the pages' words, not their <Page i> tags
        if words > opts.context_words:
            context, notes["cut"], words = first_words(context, opts.context_words), True, opts.context_words
    else:
        text = state.doc.text
        n = opts.context_words if variant.method == "full" or variant.k is None else variant.k
        cut = word_count(text) > n
        if variant.method == "truncate-last":
            context = last_words(text, n) if cut else text
        else:
            context = first_words(text, n) if cut else text
        notes["cut"], words = cut, word_count(context)
    out = await answer_question(client, context, question)
    return MethodResult(
        answer=out.text,
        option=out.option,
        context_words=words,
        lookups=chosen,
        failures=out.failures,
        problem=out.problem,
        notes=notes,
    )
