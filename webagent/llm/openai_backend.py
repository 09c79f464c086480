"""Backend for any OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp server, Ollama)."""

from __future__ import annotations

import asyncio
import ipaddress
import time
from urllib.parse import urlsplit

import httpx
import openai

from webagent.errors import EndpointError
from webagent.llm.client import BackendReply, ModelCallError, TransientError
from webagent.llm.guard import check_endpoint_allowed
from webagent.llm.progress import ServerProgress, probe_slots

# A call to a server that reports its progress may run this many times --timeout, as long
# as the server keeps working on it; a bound against a server that never finishes.
PROGRESS_HARD_LIMIT = 20


async def _create(client: openai.AsyncOpenAI, body: dict) -> dict:
    """POST /chat/completions with ``body`` as it is; the reply's JSON as a dict. The SDK's
    typed ``create()`` walks every request through its TypedDict annotations and builds a
    pydantic ``ChatCompletion`` from every reply: about 2 ms of CPU per call here, on the
    event loop, which at 16 calls in flight spread each wave of replies out. HTTP errors,
    timeouts and connection errors still come from the SDK as its exceptions."""
    response = await client.post("/chat/completions", body=body, cast_to=httpx.Response)
    return response.json()  # ValueError when the body is not JSON (an HTML error page)


def _is_loopback(base_url: str) -> bool:
    host = urlsplit(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class OpenAIBackend:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        timeout_s: float = 300.0,
        schema_dialect: str = "json_schema",
        *,
        identity: str | None = None,
        progress_url: str | None = None,
    ):
        check_endpoint_allowed(base_url)
        # How this endpoint wants a JSON schema: OpenAI/vLLM/Ollama/llama.cpp take
        # {"type": "json_schema", ...}; llama-cpp-python takes {"type": "json_object", "schema": ...}.
        # On a rejection we step down json_schema -> json_object -> text (no response_format),
        # and remember it for every later call through this backend.
        self.schema_dialect = schema_dialect
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self.name = f"{model}@openai-compatible"
        # What replies depend on, for cache keys: the endpoint and the model it serves.
        self.identity = identity or f"{self.base_url}|{model}"
        self.description = f"model {model!r} at {self.base_url}"
        # The SDK's own retries are off: LLMClient retries and counts them.
        self._client = openai.AsyncOpenAI(
            base_url=self.base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=0
        )
        # A llama.cpp server (the embedded one, or `webagent serve` on this machine): calls
        # time out after timeout_s without progress on its /slots, not timeout_s in all.
        self.progress: ServerProgress | None = ServerProgress(progress_url) if progress_url else None

    async def check(self) -> None:
        """Fail fast, with one clear line, when the endpoint is unreachable or refuses us."""
        try:
            await self._client.with_options(timeout=15.0).models.list()
        except openai.AuthenticationError as exc:
            raise EndpointError(
                f"{self.base_url} rejected the API key ({exc.status_code}); pass --api-key or set OPENAI_API_KEY"
            ) from None
        except (openai.APIConnectionError, openai.APITimeoutError):
            raise EndpointError(
                f"cannot reach the model endpoint {self.base_url}; check --base-url / OPENAI_BASE_URL "
                "or start a server (e.g. `webagent serve`)"
            ) from None
        except openai.APIStatusError:
            pass  # some servers lack /models; the first real call will tell
        if self.progress is None and _is_loopback(self.base_url):
            root = self.base_url.removesuffix("/v1")
            if await probe_slots(root):
                self.progress = ServerProgress(root)

    def _request(self, messages: list[dict], params: dict) -> dict:
        kwargs = {"model": self.model, "messages": messages, **params}
        if "response_format" in kwargs and self.schema_dialect == "json_object":
            schema = kwargs["response_format"]["json_schema"]["schema"]
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        elif self.schema_dialect == "text":
            kwargs.pop("response_format", None)  # the tolerant text parsers take over
        return kwargs

    async def _send(self, kwargs: dict):
        if self.progress is None:
            return await _create(self._client, kwargs)
        client = self._client.with_options(timeout=self.timeout_s * PROGRESS_HARD_LIMIT)
        task = asyncio.ensure_future(_create(client, kwargs))
        sent = time.monotonic()
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=self.progress.poll_s)
                if done:
                    return task.result()
                last = max(sent, await self.progress.last_progress())
                if time.monotonic() - last > self.timeout_s:
                    raise TransientError(f"no progress on the server for {self.timeout_s:.0f}s")
        finally:
            if not task.done():
                task.cancel()

    async def chat(self, messages: list[dict], params: dict, purpose: str = "") -> BackendReply:
        kwargs = self._request(messages, params)
        try:
            resp = await self._send(kwargs)
        except (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError) as exc:
            raise TransientError(f"{type(exc).__name__}: {exc}") from exc
        except openai.AuthenticationError:
            raise EndpointError(f"{self.base_url} rejected the API key; pass --api-key or set OPENAI_API_KEY") from None
        except openai.NotFoundError:
            raise EndpointError(
                f"{self.base_url} does not serve model {self.model!r}; pass --model or set WEBAGENT_MODEL"
            ) from None
        except openai.APIStatusError as exc:
            # Servers reject an unknown response_format with 400, 422 or even 500 (llama.cpp).
            detail = f"{exc} {exc.body}".lower()
            if "response_format" in kwargs and "response_format" in detail:
                self.schema_dialect = "json_object" if self.schema_dialect == "json_schema" else "text"
                return await self.chat(messages, params, purpose)
            if exc.status_code >= 500:
                raise TransientError(f"HTTP {exc.status_code}: {exc}") from exc
            raise ModelCallError(f"{self.description} refused the request: HTTP {exc.status_code}: {exc}") from exc
        except ValueError as exc:  # a 200 whose body claims JSON but does not parse
            raise TransientError(f"unreadable reply body: {exc}") from exc
        # A 200 with a body that is not a chat completion (JSON of another shape): worth retrying.
        choices = resp.get("choices") if isinstance(resp, dict) else None
        if not isinstance(choices, list):
            raise TransientError(f"reply is not a chat completion: {str(resp)[:120]!r}")
        if not choices:
            raise TransientError("reply had no choices")
        first = choices[0] if isinstance(choices[0], dict) else {}
        message = first.get("message")
        if not isinstance(message, dict):
            raise TransientError(f"reply has no message: {str(resp)[:120]!r}")
        text = message.get("content") or ""
        usage = resp.get("usage") if isinstance(resp.get("usage"), dict) else {}
        return BackendReply(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            finish_reason=first.get("finish_reason"),
            prompt_cached_tokens=_cached_tokens(resp, usage),
        )

    async def close(self) -> None:
        await self._client.close()
        if self.progress is not None:
            await self.progress.close()


def _cached_tokens(resp: dict, usage: dict) -> int:
    """Prompt tokens the server did not evaluate again: OpenAI's
    ``usage.prompt_tokens_details.cached_tokens``, else llama.cpp's ``timings.cache_n``."""
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict) and details.get("cached_tokens") is not None:
        return int(details.get("cached_tokens") or 0)
    timings = resp.get("timings")
    return int(timings.get("cache_n") or 0) if isinstance(timings, dict) else 0
