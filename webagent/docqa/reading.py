"""What is built once per document and shared by all its questions and all methods:
the pages (LLM pagination), the gist memory, and the methods' own structures (trees,
key-value stores).

Each artefact is built at most once per run (concurrent askers wait for the first), and
cached across runs under a content hash of (kind, model, document, settings, prompt
hashes) and of the artefacts it was built on (the gists on the pages, a MemWalker tree
on the gists...), so every method of a document reads the same pages, run after run. An
artefact built with failures (a pagination fallback, a gist that fell back to the
page's first words...), or built on one that had them (`input_failures`), is used for
this run but never cached: the next run builds it again, as `webagent ask` does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from webagent.docqa.accounting import CountingClient
from webagent.docqa.data import Document
from webagent.docqa.options import QAOptions
from webagent.docqa.progress import ReadingProgress
from webagent.llm.cache import content_hash
from webagent.llm.client import LLMClient
from webagent.memory import GistMemory, Page, build_memory
from webagent.prompts import prompt_hash
from webagent.text import PaginationStats, iter_pages, paginate_uniform


async def read_pages(
    client: LLMClient, paragraphs: list[str], s: QAOptions, shown: ReadingProgress | None
) -> tuple[list[Page], int]:
    """(pages, pagination fallbacks): fixed pages of `s.max_words` (uniform), else the
    model's pause points, each page shown on `shown` as soon as it is decided."""
    if s.pagination == "uniform":
        return paginate_uniform(paragraphs, words_per_page=s.max_words), 0
    stats, pages = PaginationStats(), list[Page]()
    async for page in iter_pages(
        client, paragraphs, min_words=s.min_words, max_words=s.max_words, stats=stats, single_pass=s.single_pass
    ):
        pages.append(page)
        if shown is not None:
            shown.page(page.words, last=page.metadata.get("pause") == "end")
    return pages, stats.fallbacks


T = TypeVar("T")


@dataclass
class Built(Generic[T]):
    """An artefact with what it cost to build."""

    value: T
    failures: int = 0
    from_cache: bool = False
    usage: dict = field(default_factory=dict)  # calls and words of the build (CountingClient.counts)
    input_failures: int = 0  # failures of the artefacts it was built on (a degraded input: never cached)
    digest: str = ""  # content hash of the stored form: the key of what is built on it

    @property
    def degraded(self) -> bool:
        return self.failures > 0 or self.input_failures > 0


class DocumentState:
    """Per-document artefacts, each built once. `build_client` is a scoped client whose
    usage is the document's one-time memory-building cost (not any question's).
    `memory_client` (--gist-model) builds the pages and gists; `client` everything else.
    `progress` gets readable lines while the pages and gists are built (ReadingProgress)."""

    def __init__(
        self,
        client: LLMClient,
        doc: Document,
        options: QAOptions,
        *,
        memory_client: LLMClient | None = None,
        progress: Callable[[str], None] | None = None,
    ):
        self.doc, self.options = doc, options
        self.client = client
        self.memory_client = memory_client or client
        self.progress = progress
        self._built: dict[str, Built[Any]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._shown: ReadingProgress | None = None

    def cache_key(self, kind: str, *parts: object, model: str | None = None) -> str:
        model = model or self.client.identity
        # Every artefact stands on the pages: the pagination prompt is part of every key.
        key = [
            "docqa",
            kind,
            model,
            self.doc.content_hash,
            self.options.min_words,
            self.options.max_words,
            self.options.pagination,
            prompt_hash("pagination"),
        ]
        if self.options.single_pass:  # two-pass keys are unchanged, so what was cached before stays valid
            key += ["single-pass", prompt_hash("pagination_gist")]
        return content_hash(*key, *parts)

    def _progress(self) -> ReadingProgress | None:
        if self.progress is None:
            return None
        if self._shown is None:
            self._shown = ReadingProgress(
                self.progress, self.memory_client.usage, self.doc.words, every_s=15.0, label=f"doc {self.doc.doc_id}"
            )
        return self._shown

    async def once(
        self,
        kind: str,
        build: Callable[[LLMClient], Awaitable[tuple[T, int]]],
        *,
        encode=lambda v: v,
        decode=lambda v: v,
        key_parts: tuple = (),
        inputs: tuple[Built, ...] = (),
        memory: bool = False,
    ) -> Built[T]:
        """The artefact `kind`: built by `build(client) -> (value, failures)` at most once, on
        `inputs` (keyed by their content, and degraded when any of them is). `memory`: built
        by the memory client (pages and gists)."""
        lock = self._locks.setdefault(kind, asyncio.Lock())
        async with lock:
            if kind in self._built:
                return self._built[kind]
            builder = self.memory_client if memory else self.client
            cache = builder.cache
            key = self.cache_key(kind, *key_parts, *(b.digest for b in inputs), model=builder.identity)
            input_failures = sum(b.failures + b.input_failures for b in inputs)
            if cache is not None and (stored := cache.get("docqa-memory", key)) is not None:
                built = Built(decode(stored), 0, True, input_failures=input_failures, digest=content_hash(stored))
            else:
                counting = CountingClient(builder)
                value, failures = await build(cast(LLMClient, counting))  # a counting view of one
                encoded = encode(value)
                built = Built(value, failures, False, counting.counts(), input_failures, content_hash(encoded))
                if cache is not None and not built.degraded:
                    cache.put("docqa-memory", key, encoded)
            self._built[kind] = built
            return built

    def built(self) -> dict[str, Built]:
        return dict(self._built)

    async def pages(self) -> list[Page]:
        return (await self.pages_built()).value

    async def pages_built(self) -> Built[list[Page]]:
        async def build(client: LLMClient) -> tuple[list[Page], int]:
            return await read_pages(client, self.doc.paragraphs, self.options, self._progress())

        return await self.once(
            "pages",
            build,
            memory=True,
            encode=lambda pages: [{"index": p.index, "text": p.text, "metadata": p.metadata} for p in pages],
            decode=lambda rows: [Page(r["index"], r["text"], r.get("metadata") or {}) for r in rows],
        )

    async def memory(self) -> GistMemory:
        return (await self.gist_memory()).value

    async def gist_memory(self) -> Built[GistMemory]:
        pages = await self.pages_built()

        async def build(client: LLMClient) -> tuple[GistMemory, int]:
            shown = self._progress()
            if shown is not None:
                shown.restart()
            return await build_memory(client, pages.value, on_gisted=shown.gisted if shown is not None else None)

        return await self.once(
            "gists",
            build,
            key_parts=(prompt_hash("gist"),),
            inputs=(pages,),
            memory=True,
            encode=GistMemory.to_dict,
            decode=GistMemory.from_dict,
        )

    def build_failures(self) -> int:
        return sum(b.failures for b in self._built.values())
