"""Gisting: shorten every page, all pages concurrently (paper §3.1, Appendix G.1)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from webagent.llm.cache import content_hash
from webagent.llm.client import EndpointUnavailable, LLMClient, ModelCallError
from webagent.memory.pages import GistMemory, Page, first_words
from webagent.prompts import render_prompt

# A failed or empty gist falls back to the page's first words, so the memory keeps a
# trace of every page and the look-up can still pick it.
FALLBACK_WORDS = 40


def fallback_gist(page: Page) -> str:
    return first_words(page.text, FALLBACK_WORDS) + (" ..." if page.words > FALLBACK_WORDS else "")


async def gist_page(
    client: LLMClient,
    page: Page,
    *,
    prompt: str = "gist",
    task: str | None = None,
    purpose: str = "gist",
) -> tuple[str, str]:
    """Returns (gist, status): status "ok", or why the fallback gist was used: "empty"
    (the model said nothing), "refused" (the call failed for good, e.g. too long) or
    "endpoint" (the endpoint was down through every retry). Unconditional by default;
    with `task`, conditional on it."""
    values = {"page_text": page.text}
    name = prompt
    if task is not None:
        name, values["task"] = f"{prompt}_conditional", task
    try:
        reply = await client.complete(render_prompt(name, **values), purpose=purpose, max_tokens=256)
    except ModelCallError as exc:
        return fallback_gist(page), "endpoint" if isinstance(exc, EndpointUnavailable) else "refused"
    text = reply.text.strip()
    return (text, "ok") if text else (fallback_gist(page), "empty")


class GistReuse:
    """Gists by snippet content, kept across steps of one run: a snippet whose text did not
    change since the previous step reuses its gist without a model call (even with the
    persistent cache off). Fallback gists are not kept, so they are tried again."""

    def __init__(self) -> None:
        self._gists: dict[str, str] = {}
        self.reused = 0

    def get(self, text: str) -> str | None:
        gist = self._gists.get(content_hash(text))
        if gist is not None:
            self.reused += 1
        return gist

    def put(self, text: str, gist: str) -> None:
        self._gists[content_hash(text)] = gist


async def build_memory(
    client: LLMClient,
    pages: list[Page],
    *,
    task: str | None = None,
    prompt: str = "gist",
    reuse: GistReuse | None = None,
    on_gisted: Callable[[int, int], None] | None = None,
) -> tuple[GistMemory, int]:
    """Gist all pages concurrently (the client bounds concurrency). Returns (memory, failures);
    the memory lists the pages whose gist is a fallback (`fallback_pages`) and whether any
    failed because the endpoint was down (`endpoint_failed`).
    A page whose metadata holds a gist already written (`metadata["gist"]`: the single pass
    writes it with the pause point) makes no call. `on_gisted(done, total)` is called as each
    gist a call wrote arrives (total: the pages that need a call), for progress displays.
    ``prompt`` names the gist prompt; with ``reuse``, a page whose text it holds makes no call."""
    known = {p.index: g for p in pages if (g := p.metadata.get("gist")) and g.strip()}
    todo = sum(1 for p in pages if p.index not in known)
    done = 0

    async def one(page: Page) -> tuple[str, str]:
        nonlocal done
        if page.index in known:
            return known[page.index].strip(), "ok"
        if reuse is not None and (kept := reuse.get(page.text)) is not None:
            return kept, "ok"
        out = await gist_page(client, page, prompt=prompt, task=task)
        if reuse is not None and out[1] == "ok":
            reuse.put(page.text, out[0])
        done += 1
        if on_gisted is not None:
            on_gisted(done, todo)
        return out

    results = await asyncio.gather(*(one(p) for p in pages))
    fallback_pages = [p.index for p, (_, status) in zip(pages, results) if status != "ok"]
    memory = GistMemory(
        list(pages),
        [g for g, _ in results],
        fallback_pages=fallback_pages,
        endpoint_failed=any(status == "endpoint" for _, status in results),
    )
    return memory, len(fallback_pages)
