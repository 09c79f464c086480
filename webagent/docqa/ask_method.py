"""`webagent ask --method M`: one question about one file with any qa-eval method."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from webagent.docqa.accounting import CountingClient
from webagent.docqa.data import Document, Question
from webagent.docqa.methods import Variant, runner_for
from webagent.docqa.options import QAOptions
from webagent.docqa.reading import DocumentState
from webagent.llm.client import LLMClient
from webagent.memory import compression_rate
from webagent.text import iter_paragraphs


class MethodAskResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answer: str
    method: str
    pages_read: list[int]  # looked up, retrieved, or visited in full
    num_pages: int
    compression_rate: float
    failures: int
    problem: str | None
    notes: dict
    memory_from_cache: bool
    memory_failures: int  # pagination fallbacks, fallback gists/summaries: such a memory is not cached
    document_words: int
    model: str
    usage: dict


async def ask_method(
    client: LLMClient,
    path: str | Path,
    question: str,
    method: str,
    *,
    options: QAOptions,
    memory_client: LLMClient | None = None,
    progress=None,
) -> MethodAskResult:
    """`method` on `options`, its word budget what fits their `context_tokens` (as for ``ask``);
    `memory_client` (--gist-model) paginates and gists."""
    variant = Variant.parse(method, options.max_pages)
    doc = Document(str(path), list(iter_paragraphs(path)))
    state = DocumentState(client, doc, options.words_for_context(), memory_client=memory_client, progress=progress)
    counting = CountingClient(client)
    result = await runner_for(variant.method)(counting, state, Question("q", question), variant)
    built = state.built()
    return MethodAskResult(
        answer=result.answer,
        method=variant.name,
        pages_read=result.lookups,
        num_pages=len(built["pages"].value) if "pages" in built else 0,
        compression_rate=round(compression_rate(doc.words, result.context_words), 2),
        failures=result.failures,
        problem=result.problem,
        notes=result.notes,
        memory_from_cache=bool(built) and all(b.from_cache for b in built.values()),
        memory_failures=state.build_failures(),
        document_words=doc.words,
        model=client.model_name,
        usage=client.usage.to_dict(),
    )
