"""From command-line options and environment to a ready LLMClient.

Resolution: `--model fake:NAME` → a shipped fake; `--base-url` or OPENAI_BASE_URL →
that endpoint; otherwise the embedded model server is started for the duration, on
`--gguf PATH`, on `--embedded NAME` (a registry model, pulled on first use) or on the
registry's default model.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing, nullcontext
from dataclasses import dataclass, replace
from typing import Any

from webagent.errors import UserError
from webagent.llm.cache import Cache
from webagent.llm.client import LLMClient
from webagent.llm.usage import Usage


@dataclass
class EndpointOptions:
    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    gguf: str | None = None
    embedded: str | None = None  # a model of webagent.llm.registry
    n_ctx: int = 8192  # embedded server: context per slot
    concurrency: int = 8
    timeout_s: float = 300.0
    cache: bool = True
    structured: bool = True
    max_retries: int = 4
    threads: int | None = None  # embedded server: compute threads (None: llama_server.server_threads's rule)

    def resolved(self) -> EndpointOptions:
        """Fill unset fields from the environment (OPENAI_BASE_URL, OPENAI_API_KEY, WEBAGENT_MODEL)."""
        return replace(
            self,
            base_url=self.base_url or os.environ.get("OPENAI_BASE_URL") or None,
            model=self.model or os.environ.get("WEBAGENT_MODEL") or None,
            api_key=self.api_key or os.environ.get("OPENAI_API_KEY") or None,
        )


_announced: set[str] = set()


def announce_embedded(model_name: str, threads: tuple[int, int] | None = None) -> None:
    """Once per process and model, on stderr: the embedded model is a stand-in, not a real
    one; and the compute threads it got (decoding, prompts)."""
    if model_name not in _announced:
        _announced.add(model_name)
        how = f"; {threads[0]} threads decoding, {threads[1]} reading prompts" if threads else ""
        print(
            f"starting embedded {model_name} (weak; use --base-url for real quality{how})", file=sys.stderr, flush=True
        )


def embedded_gguf(opts: EndpointOptions) -> str:
    """The file the embedded server loads: --gguf, --embedded NAME, or the registry's
    default; a registry model is pulled (checked against its pins) on first use."""
    if opts.gguf and opts.embedded:
        raise UserError("--gguf and --embedded both choose the embedded model; pass one of them")
    if opts.gguf:
        return opts.gguf
    from webagent.llm.guard import check_local_model_allowed
    from webagent.llm.registry import ensure, get

    if opts.embedded:
        get(opts.embedded)  # an unknown name is one line, before anything else
    check_local_model_allowed()  # inside the test suite: refused before any download
    return str(ensure(opts.embedded))


async def _open_backend(opts: EndpointOptions, gguf: str | None = None, log_name: str = "llama-server.log"):
    """(backend, server or None) for resolved `opts`: a shipped fake, the endpoint, or the
    embedded server on `gguf` (default: `embedded_gguf(opts)`), started and checked."""
    if opts.model and opts.model.startswith("fake:"):
        from webagent.llm.testing import FunctionBackend, heuristic_reply

        if opts.model != "fake:heuristic":
            raise UserError(f"unknown fake model {opts.model!r}; the shipped one is 'fake:heuristic'")
        return FunctionBackend(heuristic_reply, name=opts.model, record=False), None
    from webagent.llm.openai_backend import OpenAIBackend

    server = None
    base_url, model = opts.base_url, opts.model
    if base_url is None:
        from webagent.llm.local import LocalServer, embedded_slots

        if opts.model:
            raise UserError(
                f"--model {opts.model!r} needs an endpoint: pass --base-url (or set OPENAI_BASE_URL); "
                "without one the embedded model is used (choose it with --embedded NAME or --gguf PATH)"
            )
        server = LocalServer(
            gguf or embedded_gguf(opts),
            n_ctx=opts.n_ctx,
            slots=embedded_slots(opts.concurrency),
            threads=opts.threads,
            log_name=log_name,
        )
        announce_embedded(server.model_name, (server.threads, server.threads_batch))
        server.start()
        base_url, model = server.base_url, server.model
    elif opts.gguf or opts.embedded:
        raise UserError(
            f"{'--gguf' if opts.gguf else '--embedded'} runs the embedded model server, but an endpoint "
            f"is set ({base_url}): drop --base-url (or unset OPENAI_BASE_URL), or drop "
            f"{'--gguf' if opts.gguf else '--embedded'}"
        )
    elif model is None:
        raise UserError("--base-url is set but no model: pass --model or set WEBAGENT_MODEL")
    backend = OpenAIBackend(
        base_url,
        model,
        opts.api_key,
        timeout_s=opts.timeout_s,
        identity=server.identity() if server is not None else None,
        progress_url=server.server_url if server is not None else None,
    )
    try:
        await backend.check()
    except BaseException:
        await backend.close()
        if server is not None:
            server.stop()
        raise
    return backend, server


@asynccontextmanager
async def _client(opts: EndpointOptions, backend, server, **kwargs: Any) -> AsyncIterator[LLMClient]:
    """A client of `backend` (`_open_backend`'s) with `opts`' limits and `kwargs` (its cache,
    its usage); closed, and `server` stopped, at the end."""
    client = LLMClient(
        backend, concurrency=opts.concurrency, structured=opts.structured, max_retries=opts.max_retries, **kwargs
    )
    try:
        yield client
    finally:
        await client.close()
        if server is not None:
            server.stop()


@asynccontextmanager
async def open_client(options: EndpointOptions, *, cache: Cache | None = None) -> AsyncIterator[LLMClient]:
    opts = options.resolved()
    if opts.concurrency < 1:
        raise UserError(f"--concurrency must be at least 1 (got {opts.concurrency})")
    if opts.threads is not None and opts.threads < 1:
        raise UserError(f"--threads must be at least 1 (got {opts.threads})")
    backend, server = await _open_backend(opts)
    own_cache = Cache() if cache is None and opts.cache else None  # opened here, so closed here
    used = (cache if cache is not None else own_cache) if opts.cache else None
    with closing(own_cache) if own_cache is not None else nullcontext():
        async with _client(opts, backend, server, cache=used) as client:
            yield client


def gist_model_options(options: EndpointOptions, gist_model: str) -> tuple[EndpointOptions, str | None]:
    """(options, GGUF or None) for the --gist-model: with an endpoint, a model name at the
    same endpoint; with the shipped fake, the fake; otherwise the embedded server on a
    registry model (pulled on first use) or a GGUF file."""
    opts = options.resolved()
    if opts.model and opts.model.startswith("fake:"):
        return opts, None
    if opts.base_url:
        return replace(opts, model=gist_model), None
    from pathlib import Path

    if gist_model.endswith(".gguf") or Path(gist_model).is_file():
        return replace(opts, gguf=gist_model, embedded=None), gist_model
    embedded = replace(opts, gguf=None, embedded=gist_model)
    return embedded, embedded_gguf(embedded)


@asynccontextmanager
async def open_gist_client(
    options: EndpointOptions, gist_model: str | None, client: LLMClient
) -> AsyncIterator[LLMClient | None]:
    """The --gist-model's client, for pagination and gists, beside `client` (look-up and
    answer): its own embedded server (both served at once) or model at the endpoint, the
    same cache, and usage that also counts into `client`'s. None without --gist-model."""
    if not gist_model:
        yield None
        return
    opts, gguf = gist_model_options(options, gist_model)
    backend, server = await _open_backend(opts, gguf, log_name="llama-server-gist-model.log")
    async with _client(opts, backend, server, cache=client.cache, usage=Usage(parent=client.usage)) as memory_client:
        yield memory_client
