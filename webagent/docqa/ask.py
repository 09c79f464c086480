"""ReadAgent over one document: pagination → gist memory (cached per document) → look-up → answer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from webagent.docqa.options import QAOptions
from webagent.docqa.progress import ReadingProgress
from webagent.docqa.reading import read_pages
from webagent.errors import EndpointError, UserError
from webagent.llm.cache import content_hash
from webagent.llm.client import ContextOverflow, EndpointUnavailable, LLMClient, ModelCallError
from webagent.memory import GistMemory, build_memory, compression_rate, lookup_parallel, lookup_sequential
from webagent.prompts import prompt_hash, render_prompt
from webagent.text import document_hash, iter_paragraphs

# Prose runs at about 4 characters per token in English; 3 errs on the safe side.
TEXT_CHARS_PER_TOKEN = 3
ANSWER_RESERVE_TOKENS = 256  # the reply


def estimate_text_tokens(text: str) -> int:
    return len(text) // TEXT_CHARS_PER_TOKEN + ANSWER_RESERVE_TOKENS


Progress = Callable[[str], None]


@dataclass
class DocumentMemory:
    memory: GistMemory
    from_cache: bool
    pagination_fallbacks: int = 0
    gist_failures: int = 0

    @property
    def degraded(self) -> bool:
        """Pagination fell back somewhere or a gist is a fallback: never cached as clean."""
        return self.pagination_fallbacks > 0 or self.gist_failures > 0


def memory_key(client: LLMClient, path: str | Path, opts: QAOptions, task: str | None) -> str:
    """What a document's gist memory depends on: the model that wrote it (the --gist-model's
    when one is given), the file, the pagination settings and the prompt files."""
    gist_prompt = "gist_conditional" if task else "gist"
    parts: tuple = (
        client.identity,
        document_hash(path),
        opts.min_words,
        opts.max_words,
        opts.pagination,
        prompt_hash("pagination"),
        prompt_hash(gist_prompt),
        task,
    )
    if opts.single_pass:  # the two-pass key is unchanged, so memories cached before stay valid
        parts += ("single-pass", prompt_hash("pagination_gist"))
    return content_hash("document-memory", *parts)


async def load_document_memory(
    client: LLMClient,
    path: str | Path,
    opts: QAOptions,
    progress: Progress = lambda msg: None,
    question: str | None = None,
) -> DocumentMemory:
    """The document's gist memory, from the cache when this model has read this file with
    these settings before (then no pagination or gisting call is made). With
    `opts.conditional_gist`, the gists depend on `question` and so does the cache key.
    `client` is the model that paginates and gists (the --gist-model's client when one is given).
    A degraded memory (a pagination fallback, a fallback gist) is used for this answer but
    not cached, so the next run tries again and reports its own failures."""
    task = question if opts.conditional_gist else None
    key = memory_key(client, path, opts, task)
    cache = client.cache
    if cache is not None and (stored := cache.get("memory", key)) is not None:
        return DocumentMemory(GistMemory.from_dict(stored), from_cache=True)
    paragraphs = list(iter_paragraphs(path))
    shown = ReadingProgress(progress, client.usage, sum(len(p.split()) for p in paragraphs))
    how = "uniform" if opts.pagination == "uniform" else ("llm, single pass" if opts.single_pass else "llm")
    progress(f"paginating {path} ({how}; {shown.total_words:,} words)")
    pages, fallbacks = await read_pages(client, paragraphs, opts, shown)
    known = {p.index: p.metadata["gist"] for p in pages if p.metadata.get("gist")}
    if len(known) < len(pages):
        progress(
            f"gisting {len(pages) - len(known)} of {len(pages)} pages"
            + (f" ({len(known)} written with their pause point)" if known else "")
        )
    shown.restart()
    memory, gist_failures = await build_memory(client, pages, task=task, on_gisted=shown.gisted)
    doc = DocumentMemory(memory, False, fallbacks, gist_failures)
    if cache is not None and not doc.degraded:
        cache.put("memory", key, memory.to_dict())
    elif doc.degraded:
        progress(f"not caching this gist memory: {fallbacks} pagination fallbacks, {gist_failures} fallback gists")
    return doc


class AskResult(BaseModel):
    """What `webagent ask` returns (and prints with --json)."""

    model_config = ConfigDict(extra="forbid")

    answer: str
    pages_looked_up: list[int]  # pages shown in full to the answer prompt
    pages_dropped_for_context: list[int] = []  # looked up, but sent back to their gists to fit the context
    num_pages: int
    compression_rate: float
    lookup: str
    lookup_calls: int
    lookup_failures: int
    memory_from_cache: bool
    pagination_fallbacks: int
    gist_failures: int
    document_words: int
    model: str
    gist_model: str | None = None  # the model that paginated and gisted, when not `model` (--gist-model)
    single_pass: bool = False
    usage: dict


async def _answer(
    client: LLMClient, memory: GistMemory, question: str, pages: list[int], context_tokens: int
) -> tuple[str, list[int], list[int]]:
    """The answer over the memory with `pages` expanded; looked-up pages go back to their
    gists, last first, while the prompt would not fit the context (paper Appendix H), and
    once more each time the endpoint still reports an overflow."""
    expanded, dropped = list(pages), []

    def prompt() -> str:
        return render_prompt("answer", memory=memory.render_text(expanded=expanded), question=question)

    while expanded and estimate_text_tokens(prompt()) > context_tokens:
        dropped.append(expanded.pop())
    while True:
        try:
            reply = await client.complete(prompt(), purpose="answer", max_tokens=256)
            return reply.text.strip(), expanded, dropped
        except ModelCallError as exc:
            if isinstance(exc, EndpointUnavailable):
                raise EndpointError(f"no answer: {exc}") from None
            if not (expanded and isinstance(exc, ContextOverflow)):
                raise EndpointError(f"the endpoint refused the answer prompt: {exc}") from None
            dropped.append(expanded.pop())


async def ask(
    client: LLMClient,
    path: str | Path,
    question: str,
    opts: QAOptions | None = None,
    progress: Progress = lambda msg: None,
    memory_client: LLMClient | None = None,
) -> AskResult:
    """`memory_client` (--gist-model) paginates and gists; `client` looks up and answers
    (`opts`: the defaults when None)."""
    opts = opts or QAOptions()
    if not question.strip():
        raise UserError("the question is empty")
    doc = await load_document_memory(memory_client or client, path, opts, progress, question=question)
    memory = doc.memory
    progress(f"looking up pages ({opts.lookup}; {len(memory)} pages)")
    lookup = lookup_parallel if opts.lookup == "parallel" else lookup_sequential
    found = await lookup(
        client,
        memory,
        prompt=f"lookup_{opts.lookup}",
        values={"question": question},
        max_pages=opts.max_pages,
    )
    progress(f"answering from {len(found.pages)} looked-up pages")
    answer, expanded, dropped = await _answer(client, memory, question, found.pages, opts.context_tokens)
    context_words = max(memory.context_words(), memory.context_words(expanded=expanded))
    return AskResult(
        answer=answer,
        pages_looked_up=expanded,
        pages_dropped_for_context=dropped,
        num_pages=len(memory),
        compression_rate=round(compression_rate(memory.full_words, context_words), 2),
        lookup=opts.lookup,
        lookup_calls=found.calls,
        lookup_failures=found.failures,
        memory_from_cache=doc.from_cache,
        pagination_fallbacks=doc.pagination_fallbacks,
        gist_failures=doc.gist_failures,
        document_words=memory.full_words,
        model=client.model_name,
        gist_model=memory_client.model_name if memory_client is not None else None,
        single_pass=opts.single_pass,
        usage=client.usage.to_dict(),
    )
