"""ReadAgent-P, ReadAgent-S and GistMem over the document's shared gist memory."""

from __future__ import annotations

from webagent.docqa.answering import answer_question
from webagent.docqa.data import Question
from webagent.docqa.methods import MethodResult, Variant
from webagent.docqa.reading import DocumentState
from webagent.llm.client import LLMClient
from webagent.memory import GistMemory, lookup_parallel, lookup_sequential


def fit_to_budget(memory: GistMemory, pages: list[int], budget_words: int) -> list[int]:
    """Pages in the order given (most important first), each kept only while the gists
    plus the expanded pages stay within the context budget (paper, Appendix I)."""
    kept: list[int] = []
    for p in pages:
        if memory.context_words(expanded=[*kept, p]) <= budget_words:
            kept.append(p)
    return kept


async def run(client: LLMClient, state: DocumentState, question: Question, variant: Variant) -> MethodResult:
    opts = state.options
    memory = await state.memory()
    gist_words = memory.context_words()
    pages: list[int] = []
    failures, problem = 0, None
    notes: dict = {}
    if variant.method != "gistmem":
        values = {"question": question.with_options()}
        if variant.method == "readagent-p":
            prompt = "qa_lookup_importance" if opts.importance_lookup else "lookup_parallel"
            found = await lookup_parallel(client, memory, prompt=prompt, values=values, max_pages=variant.top_k)
        else:
            found = await lookup_sequential(
                client, memory, prompt="lookup_sequential", values=values, max_pages=variant.top_k
            )
        pages = fit_to_budget(memory, found.pages, opts.context_words)
        failures += found.failures
        problem = found.problem if found.failures else None
        notes.update(
            lookup_calls=found.calls, lookup_failures=found.failures, pages_over_budget=len(found.pages) - len(pages)
        )
    out = await answer_question(client, memory.render_text(expanded=pages), question)
    return MethodResult(
        answer=out.text,
        option=out.option,
        context_words=max(gist_words, memory.context_words(expanded=pages)),
        lookups=pages,
        failures=failures + out.failures,
        problem=out.problem or problem,
        notes=notes,
    )
