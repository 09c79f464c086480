"""The one async client every model call goes through.

It adds, on top of a backend (an OpenAI-compatible endpoint, or a fake in tests):
bounded concurrency, retries with exponential backoff on transient errors, a per-call
timeout (in the backend), the persistent reply cache, structured (JSON-schema) replies
with a tolerant fallback, and usage accounting per purpose.
"""

from __future__ import annotations

import asyncio
import copy
import random
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from webagent.errors import RuntimeFailure
from webagent.llm.cache import Cache, content_hash
from webagent.llm.structured import extract_json
from webagent.llm.usage import Usage


class TransientError(RuntimeFailure):
    """Worth retrying: 429, 5xx, timeout, connection error."""


class ModelCallError(RuntimeFailure):
    """A call failed for good (after retries, or a permanent 4xx such as context overflow).

    Callers that process many items record it as a failure of that item.
    """


class EndpointUnavailable(ModelCallError):
    """The endpoint kept failing (connection, timeout, 429/5xx) through every retry: the
    fault is the endpoint's, not the model's reply. Runners re-run such items on resume."""


class ContextOverflow(ModelCallError):
    """The endpoint refused the prompt as longer than the model's context. The client raises
    it for a refusal in the endpoint's words (``is_context_overflow``); callers that can
    shorten the prompt (a page read in full back to its gist, a page cut shorter) do so and ask
    again, and know it by its type (the problem kind "context_overflow"), never by its words."""


# What the model call in flight is about, as data (the live agent's step: its URL, history and
# controls): set by the caller around a call, read by a fake model (``FunctionBackend``) that
# takes a ``context`` argument, as pydantic-ai's FunctionModel receives AgentInfo. The words of
# a prompt can change without breaking a fake that reads this.
call_context: ContextVar[Any] = ContextVar("webagent_call_context", default=None)

# How endpoints say it. llama.cpp's server (the embedded one): a 400 "request (N tokens) exceeds
# the available context size (M tokens), try increasing it", type exceed_context_size_error;
# vLLM: "This model's maximum context length is N tokens. However, you requested ..."; OpenAI:
# code context_length_exceeded. The OpenAI SDK puts the body's message in the exception's text.
CONTEXT_OVERFLOW_WORDINGS = (
    "context length",
    "context window",
    "context size",
    "too long",
    "exceeds the context",
    "exceed_context_size",
    "context_length_exceeded",
)


def is_context_overflow(message: str) -> bool:
    """An endpoint's way of saying the prompt was longer than the model's context (read only
    where the endpoint's refusal is received: ``LLMClient``, which raises ``ContextOverflow``)."""
    text = message.lower()
    return any(s in text for s in CONTEXT_OVERFLOW_WORDINGS)


@dataclass
class BackendReply:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None  # "stop", "length" (cut by max_tokens), ...
    prompt_cached_tokens: int = 0  # of prompt_tokens, those the server's prompt cache already held

    @property
    def cacheable(self) -> bool:
        """Empty or cut-off replies are not kept: the next run asks again."""
        return bool(self.text.strip()) and self.finish_reason != "length"


class Backend(Protocol):
    name: str  # the model, for reports
    identity: str  # what replies depend on (endpoint + model, model file hash...): cache keys
    description: str  # for messages: where calls go

    async def chat(self, messages: list[dict], params: dict, purpose: str) -> BackendReply: ...

    async def close(self) -> None: ...


@dataclass
class Reply:
    text: str
    data: Any = None  # parsed JSON when a schema was asked for and the reply parsed
    cached: bool = False


Messages = list[dict]


def as_messages(prompt: str | Messages) -> Messages:
    return [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)


class LLMClient:
    def __init__(
        self,
        backend: Backend,
        *,
        cache: Cache | None = None,
        concurrency: int = 8,
        structured: bool = True,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        usage: Usage | None = None,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.backend = backend
        self.cache = cache
        self.structured = structured
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.usage = usage or Usage()
        self._semaphore = asyncio.Semaphore(concurrency)
        self._in_flight: dict[str, asyncio.Future] = {}
        # When a list: every exchange (purpose, messages, reply) made through this client
        # is appended, so a trace can show exactly what the model saw.
        self.transcript: list[dict] | None = None

    def scoped(self, *, transcript: bool = False) -> LLMClient:
        """A view sharing backend, cache and concurrency limit, with its own Usage that
        also counts into this client's: per-step or per-question accounting. With
        ``transcript=True`` the view keeps its own list of exchanges."""
        view = copy.copy(self)
        view.usage = Usage(parent=self.usage)
        view.transcript = [] if transcript else None
        return view

    def uncached(self) -> LLMClient:
        """The live agent's view: nothing it asks or is told goes through the persistent
        reply cache. Its prompts carry the task, which may carry a password, and a reply (a
        TYPE value, a look-up's reason, a gist of a page that shows it) may repeat it before
        the loop knows it is one, so no live reply is kept at rest. A re-run calls the model
        again; within a run, gists are still reused (``GistReuse``)."""
        view = self.scoped()
        view.cache = None
        return view

    @property
    def model_name(self) -> str:
        return self.backend.name

    @property
    def identity(self) -> str:
        """The backend's identity; a hand-written backend without one is known by its name."""
        return getattr(self.backend, "identity", None) or self.backend.name

    async def complete(self, prompt: str | Messages, *, purpose: str, **kwargs: Any) -> Reply:
        reply = await self._complete(prompt, purpose=purpose, **kwargs)
        if self.transcript is not None:
            self.transcript.append(
                {"purpose": purpose, "messages": as_messages(prompt), "reply": reply.text, "cached": reply.cached}
            )
        return reply

    async def _complete(
        self,
        prompt: str | Messages,
        *,
        purpose: str,
        schema: dict | None = None,
        max_tokens: int = 256,
        temperature: float = 0.0,
    ) -> Reply:
        messages = as_messages(prompt)
        params: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature}
        use_schema = schema is not None and self.structured
        if use_schema:
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": purpose.replace("-", "_") or "reply", "schema": schema},
            }
        key = content_hash(self.identity, messages, params)
        # The same request already on its way (e.g. one snippet gisted for two steps at
        # once) is awaited, not sent twice; the second caller counts it as cached.
        if key not in self._in_flight and self.cache is not None:
            hit = await asyncio.to_thread(self.cache.get, "llm", key)  # SQLite off the event loop
            if hit is not None:
                self._record_needed(purpose, hit.get("prompt_tokens", 0), hit.get("completion_tokens", 0))
                return self._reply(hit["text"], schema, cached=True)
        pending = self._in_flight.get(key)
        if pending is not None:
            shared: BackendReply = await asyncio.shield(pending)
            self._record_needed(purpose, shared.prompt_tokens, shared.completion_tokens)
            return self._reply(shared.text, schema, cached=True)
        future = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            reply = await self._call_with_retries(messages, params, purpose)
            if self.cache is not None and reply.cacheable:
                entry = {name: getattr(reply, name) for name in ("text", "prompt_tokens", "completion_tokens")}
                self.cache.put_later("llm", key, entry)  # committed by the cache's writer thread
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it, nobody else must
            raise
        finally:
            self._in_flight.pop(key, None)
        future.set_result(reply)
        return self._reply(reply.text, schema, cached=False)

    def _record_needed(self, purpose: str, prompt_tokens: int, completion_tokens: int) -> None:
        """A reply served without a model call (cache or a shared request): it costs nothing
        now, but the work needed its tokens; old cache entries without usage count 0."""
        self.usage.record(
            purpose,
            cached_calls=1,
            needed_prompt_tokens=int(prompt_tokens or 0),
            needed_completion_tokens=int(completion_tokens or 0),
        )

    def _reply(self, text: str, schema: dict | None, cached: bool) -> Reply:
        data = extract_json(text) if schema is not None else None
        return Reply(text=text, data=data, cached=cached)

    async def _call_with_retries(self, messages: Messages, params: dict, purpose: str) -> BackendReply:
        attempt = 0
        while True:
            try:
                async with self._semaphore:
                    reply = await self.backend.chat(messages, params, purpose)
            except TransientError as exc:
                if attempt >= self.max_retries:
                    self.usage.record(purpose, failures=1)
                    raise EndpointUnavailable(
                        f"{self.backend.description}: gave up after {attempt + 1} attempts: {exc}"
                    ) from exc
                self.usage.record(purpose, retries=1)
                await asyncio.sleep(self.backoff_s * (2**attempt) * (1 + 0.25 * random.random()))
                attempt += 1
                continue
            except ModelCallError as exc:
                self.usage.record(purpose, failures=1)
                if type(exc) is ModelCallError and is_context_overflow(str(exc)):  # a refusal, in its words
                    raise ContextOverflow(str(exc)) from exc
                raise
            self.usage.record(
                purpose,
                calls=1,
                prompt_tokens=reply.prompt_tokens,
                completion_tokens=reply.completion_tokens,
                prompt_cached_tokens=reply.prompt_cached_tokens,
                needed_prompt_tokens=reply.prompt_tokens,
                needed_completion_tokens=reply.completion_tokens,
            )
            return reply

    async def close(self) -> None:
        await self.backend.close()


__all__ = [
    "Backend",
    "BackendReply",
    "ContextOverflow",
    "EndpointUnavailable",
    "LLMClient",
    "ModelCallError",
    "Reply",
    "TransientError",
]
