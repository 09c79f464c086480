"""Fakes that ship with the package: for unit tests and for `--model fake:...` dry runs.

- ScriptedBackend: replies from a queue (strings, dicts turned into JSON, or exceptions).
- FunctionBackend: replies computed by a function of (messages, params, purpose), and of
  ``context`` when it takes one: what the call is about as data (``client.call_context``; the
  live agent's step gives ``webagent.web.live_action.LiveContext``: URL, history, controls,
  the page's lines, an open dialog).
- heuristic_reply: a crude, deterministic stand-in model used by `--model fake:heuristic`.
- FakeOpenAIServer: a real HTTP server speaking the OpenAI chat API on 127.0.0.1, with a
  fixed delay, scripted failures (500s, hangs), a seeded random fault mode, and optionally
  llama.cpp's /slots, for retry tests and the benchmarks.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import random
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from webagent.llm.cache import Cache
from webagent.llm.client import BackendReply, LLMClient, call_context
from webagent.llm.guard import register_fake_endpoint


def _count_tokens(text: str) -> int:
    return len(text.split())  # a fake's token: a word (the llm layer does not import memory)


def _prompt_text(messages: list[dict]) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages)


class FunctionBackend:
    def __init__(
        self,
        fn: Callable[
            ..., Any
        ],  # (messages, params, purpose[, context]) -> a reply (str, dict, BackendReply) or an awaitable of one
        name: str = "fake:function",
        record: bool = True,
    ):
        self.fn = fn
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):  # a callable without a signature: the three arguments
            params = {}  # type: ignore[assignment]
        self.takes_context = "context" in params or any(p.kind == p.VAR_KEYWORD for p in params.values())
        self.name = name
        self.identity = name
        self.description = f"fake model {name}"
        self.record = record  # tests inspect requests; dry runs on big inputs should not keep them
        self.requests: list[dict] = []

    async def chat(self, messages: list[dict], params: dict, purpose: str = "") -> BackendReply:
        if self.record:
            self.requests.append({"messages": messages, "params": params, "purpose": purpose})
        extra = {"context": call_context.get()} if self.takes_context else {}
        out = self.fn(messages, params, purpose, **extra)
        if inspect.isawaitable(out):  # an async fn (the ceiling's gold model reads the live page)
            out = await out
        if isinstance(out, BaseException):
            raise out
        if isinstance(out, BackendReply):  # full control: token counts, finish_reason
            return out
        text = out if isinstance(out, str) else json.dumps(out)
        return BackendReply(text, _count_tokens(_prompt_text(messages)), _count_tokens(text))

    async def close(self) -> None:
        pass


class ScriptedBackend(FunctionBackend):
    """Replies in order; an Exception in the script is raised instead of replying."""

    def __init__(self, replies: list[Any], name: str = "fake:scripted"):
        self.script = list(replies)
        super().__init__(self._next, name=name)

    def _next(self, messages, params, purpose):
        if not self.script:
            raise AssertionError(f"ScriptedBackend ran out of replies (purpose={purpose!r})")
        return self.script.pop(0)


def fake_client(backend: FunctionBackend | Callable | list, *, cache: Cache | None = None, **kwargs) -> LLMClient:
    """An LLMClient over a fake backend; a list makes a ScriptedBackend, a callable a FunctionBackend."""
    if isinstance(backend, list):
        backend = ScriptedBackend(backend)
    elif not isinstance(backend, FunctionBackend):
        backend = FunctionBackend(backend)
    kwargs.setdefault("backoff_s", 0.0)
    return LLMClient(backend, cache=cache, **kwargs)


# --- a crude deterministic model for dry runs -------------------------------------------

_LABEL = re.compile(r"⟨(\d+)⟩")
_PAGE = re.compile(r"<Page (\d+)>|\"index\": (\d+)")
_ELEMENT_ID = re.compile(r"\bid=(\d+)")


def heuristic_reply(messages: list[dict], params: dict, purpose: str) -> str | dict:
    text = _prompt_text(messages)
    if purpose == "pagination":
        labels = [int(n) for n in _LABEL.findall(text.split("Passage:", 1)[-1])]  # not the instructions' examples
        return {"break_point": max(labels) if labels else 0, "because": "the last pause"}
    if purpose.startswith("gist"):
        body = max(text.split("\n\n"), key=len)
        return " ".join(body.split()[:25])
    if purpose.startswith("lookup"):
        pages = [int(a or b) for a, b in _PAGE.findall(text)]
        return {"pages": pages[:1], "reason": "to read the first page"}
    if purpose == "action":
        ids = _ELEMENT_ID.findall(text)
        return {"element_id": ids[0] if ids else "", "operation": "CLICK", "value": ""}
    return {"answer": "unknown"} if params.get("response_format") else "unknown"


# --- a real HTTP server with fake answers -----------------------------------------------

FAULT_KINDS = ("http_500", "http_429", "drop_connection", "not_json")


class FakeOpenAIServer:
    """OpenAI-compatible chat server on 127.0.0.1 that answers after `delay_s`.

    responder(messages, body) -> reply text (default "ok").
    `fail_first` requests get HTTP 500, then `hang_first` requests hang for `hang_s`
    (longer than the client's timeout). `api_key`, when set, is required.

    Flaky endpoint: `fault_rate=0.3, seed=0` fails that fraction of completion calls
    (drawn from a random.Random(seed), so a run is reproducible), each with one of
    FAULT_KINDS in turn: HTTP 500, HTTP 429, a connection dropped before any reply, and a
    200 whose body is an HTML page instead of JSON. `faults` counts them by kind.

    `report_slots=True` serves llama.cpp's /slots: one busy slot per request in progress,
    its decoded-token count growing with time, as the embedded server reports it.
    """

    def __init__(
        self,
        delay_s: float = 0.0,
        *,
        responder: Callable[[list[dict], dict], str] | None = None,
        fail_first: int = 0,
        hang_first: int = 0,
        hang_s: float = 30.0,
        api_key: str | None = None,
        fault_rate: float = 0.0,
        seed: int = 0,
        report_slots: bool = False,
    ):
        if not 0.0 <= fault_rate <= 1.0:
            raise ValueError("fault_rate must be between 0 and 1")
        self.delay_s, self.responder = delay_s, responder or (lambda messages, body: "ok")
        self.fail_first, self.hang_first, self.hang_s, self.api_key = fail_first, hang_first, hang_s, api_key
        self.fault_rate, self.report_slots = fault_rate, report_slots
        self._rng = random.Random(seed)
        self.faults: dict[str, int] = {kind: 0 for kind in FAULT_KINDS}
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._started: dict[int, float] = {}  # request number -> start time, for /slots
        self.port: int | None = None
        self._runner: Any = None  # aiohttp's AppRunner, once started
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _authorised(self, request) -> bool:
        return self.api_key is None or request.headers.get("Authorization") == f"Bearer {self.api_key}"

    async def _models(self, request):
        from aiohttp import web

        if not self._authorised(request):
            return web.json_response({"error": {"message": "invalid api key"}}, status=401)
        return web.json_response({"object": "list", "data": [{"id": "fake", "object": "model"}]})

    async def _slots(self, request):
        from aiohttp import web

        now = time.monotonic()
        return web.json_response(
            [
                {
                    "id": i,
                    "id_task": n,
                    "is_processing": True,
                    "n_prompt_tokens_processed": 1,
                    "next_token": [{"n_decoded": int((now - t0) * 100)}],
                }
                for i, (n, t0) in enumerate(sorted(self._started.items()))
            ]
        )

    def _fault(self, request):
        """A fault response for this request, or None to answer normally."""
        from aiohttp import web

        if self.fault_rate <= 0 or self._rng.random() >= self.fault_rate:
            return None
        kind = FAULT_KINDS[sum(self.faults.values()) % len(FAULT_KINDS)]
        self.faults[kind] += 1
        if kind == "http_500":
            return web.json_response({"error": {"message": "injected fault"}}, status=500)
        if kind == "http_429":
            return web.json_response({"error": {"message": "rate limited (injected)"}}, status=429)
        if kind == "drop_connection":
            request.transport.abort()  # the client sees the connection reset, no reply
            return web.Response(status=500)
        return web.Response(text="<html><body>502 Bad Gateway</body></html>", content_type="text/html")

    async def _chat(self, request):
        from aiohttp import web

        if not self._authorised(request):
            return web.json_response({"error": {"message": "invalid api key"}}, status=401)
        body = await request.json()
        self.requests += 1
        n = self.requests
        if (fault := self._fault(request)) is not None:
            return fault
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self._started[n] = time.monotonic()
        try:
            if n <= self.fail_first:
                return web.json_response({"error": {"message": "scripted failure"}}, status=500)
            if n <= self.fail_first + self.hang_first:
                await asyncio.sleep(self.hang_s)
            await asyncio.sleep(self.delay_s)
            text = self.responder(body["messages"], body)
        finally:
            self.in_flight -= 1
            self._started.pop(n, None)
        prompt_tokens = _count_tokens(_prompt_text(body["messages"]))
        return web.json_response(
            {
                "id": f"fake-{n}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "fake"),
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": _count_tokens(text),
                    "total_tokens": prompt_tokens + _count_tokens(text),
                },
            }
        )

    async def start(self) -> FakeOpenAIServer:
        from aiohttp import web

        app = web.Application()
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._chat)
        if self.report_slots:
            app.router.add_get("/slots", self._slots)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port or 0)
        await site.start()
        server = site._server
        assert isinstance(server, asyncio.Server), "aiohttp's TCPSite serves through an asyncio.Server"
        self.port = server.sockets[0].getsockname()[1]
        register_fake_endpoint(self.base_url)
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAIServer:
        return await self.start()

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    # For subprocess tests: run the server on its own loop in a thread.
    def start_in_thread(self) -> FakeOpenAIServer:
        ready = threading.Event()

        def run():
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self.start())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop_thread(self) -> None:
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(self.stop(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            if self._thread is not None:
                self._thread.join(10)
