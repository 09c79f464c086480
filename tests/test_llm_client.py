import asyncio
import json
import multiprocessing

import pytest

from webagent.errors import EndpointError
from webagent.llm.cache import Cache
from webagent.llm.client import LLMClient, ModelCallError
from webagent.llm.endpoint import EndpointOptions, open_client
from webagent.llm.openai_backend import OpenAIBackend
from webagent.llm.structured import extract_json
from webagent.llm.testing import FakeOpenAIServer, ScriptedBackend, fake_client


async def test_cache_hit_makes_no_call_and_is_counted(tmp_path):
    cache = Cache(tmp_path / "c.sqlite")
    client = fake_client(["first", "second"], cache=cache)
    a = await client.complete("hello", purpose="gist")
    b = await client.complete("hello", purpose="gist")
    c = await client.complete("hello", purpose="gist", max_tokens=10)  # other params: other key
    assert (a.text, a.cached) == ("first", False)
    assert (b.text, b.cached) == ("first", True)
    assert c.text == "second"
    assert client.usage.total.calls == 2 and client.usage.total.cached_calls == 1
    assert client.usage.purpose("gist").cached_calls == 1


async def test_cache_persists_across_clients(tmp_path):
    path = tmp_path / "c.sqlite"
    first = Cache(path)
    await fake_client(["x"], cache=first).complete("q", purpose="p")
    first.flush()  # the reply was queued for the writer thread; another connection sees it once committed
    second = fake_client([], cache=Cache(path))  # an empty script would fail on a real call
    assert (await second.complete("q", purpose="p")).text == "x"
    assert second.usage.total.calls == 0


def _write_many(path, start):
    cache = Cache(path)
    for i in range(start, start + 200):
        cache.put("llm", f"k{i}", {"text": str(i)})


def _in_three_processes(target, path):
    """``target(path, start)`` for starts 0, 200, 400 in separate processes, as when several
    runs share one cache (SQLite forbids carrying an open connection across fork(), so
    they are spawned fresh)."""
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=target, args=(path, s)) for s in (0, 200, 400)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0


def test_cache_is_safe_across_processes(tmp_path):
    path = tmp_path / "shared.sqlite"
    Cache(path).close()  # create the schema before the writers race
    _in_three_processes(_write_many, path)
    cache = Cache(path)
    assert cache.count("llm") == 600
    assert cache.get("llm", "k399") == {"text": "399"}


def _queue_many_and_exit(path, start):
    cache = Cache(path)
    for i in range(start, start + 200):
        cache.put_later("llm", f"k{i}", {"text": str(i)})
    # no flush, no close: the interpreter's exit commits what is still queued


def test_entries_queued_for_the_writer_thread_are_readable_at_once_and_land_at_exit(tmp_path):
    path = tmp_path / "queued.sqlite"
    cache = Cache(path)
    cache.put_later("llm", "a", {"text": "A"})
    assert cache.get("llm", "a") == {"text": "A"}  # before or after the commit, the same answer
    assert cache.count("llm") == 1  # count waits for the writer
    other = Cache(path)
    assert other.get("llm", "a") == {"text": "A"}
    cache.close()
    _in_three_processes(_queue_many_and_exit, path)
    assert other.count("llm") == 601
    assert other.get("llm", "k599") == {"text": "599"}


def test_a_cache_write_that_fails_is_counted_and_never_hangs(tmp_path, capsys):
    cache = Cache(tmp_path / "c.sqlite")
    cache.put_later("llm", "ok", {"text": "fine"})
    cache.flush()
    cache._db.execute("DROP TABLE entries")  # every later write fails
    cache.put_later("llm", "lost", {"text": "x"})
    cache.flush()  # returns: the writer thread survives the failure
    assert cache.write_errors == 1
    assert "could not write the cache" in capsys.readouterr().err
    cache.put_later("llm", "lost2", {"text": "y"})
    cache.flush()
    assert cache.write_errors == 2


async def test_structured_reply_is_parsed_and_schema_sent():
    backend = ScriptedBackend(['Sure! ```json\n{"pages": [1, 2]}\n```'])
    client = LLMClient(backend)
    reply = await client.complete("pick", purpose="lookup", schema={"type": "object"})
    assert reply.data == {"pages": [1, 2]}
    assert backend.requests[0]["params"]["response_format"]["type"] == "json_schema"
    plain = LLMClient(ScriptedBackend(['{"pages": [3]}']), structured=False)
    r = await plain.complete("pick", purpose="lookup", schema={"type": "object"})
    assert r.data == {"pages": [3]} and "response_format" not in plain.backend.requests[0]["params"]


@pytest.mark.parametrize(
    "text,expected",
    [
        ('{"a": 1}', {"a": 1}),
        ('noise {"a": [1, 2]} trailing', {"a": [1, 2]}),
        ("[3]", [3]),
        ("no json here", None),
        ("", None),
    ],
)
def test_extract_json(text, expected):
    assert extract_json(text) == expected


async def test_concurrency_is_bounded():
    running, peak = 0, 0

    class Slow(ScriptedBackend):
        async def chat(self, messages, params, purpose=""):
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(0.01)
            running -= 1
            return await super().chat(messages, params, purpose)

    client = LLMClient(Slow(["ok"] * 20), concurrency=3)
    await asyncio.gather(*(client.complete(f"q{i}", purpose="p") for i in range(20)))
    assert peak == 3 and client.usage.total.calls == 20


async def test_retries_500s_then_succeeds():
    async with FakeOpenAIServer(fail_first=2, responder=lambda m, b: "fine") as server:
        client = LLMClient(OpenAIBackend(server.base_url, "fake", None), backoff_s=0.01)
        reply = await client.complete("hi", purpose="p")
        await client.close()
    assert reply.text == "fine"
    assert server.requests == 3
    assert client.usage.total.retries == 2 and client.usage.total.calls == 1
    assert client.usage.total.prompt_tokens == 1 and client.usage.total.completion_tokens == 1


async def test_retries_timeouts_then_succeeds():
    async with FakeOpenAIServer(hang_first=1, hang_s=5, responder=lambda m, b: "late") as server:
        client = LLMClient(OpenAIBackend(server.base_url, "fake", None, timeout_s=0.3), backoff_s=0.01)
        reply = await client.complete("hi", purpose="p")
        await client.close()
    assert reply.text == "late" and client.usage.total.retries == 1


async def test_gives_up_after_max_retries():
    async with FakeOpenAIServer(fail_first=100) as server:
        client = LLMClient(OpenAIBackend(server.base_url, "fake", None), backoff_s=0.0, max_retries=2)
        with pytest.raises(ModelCallError, match="gave up after 3 attempts"):
            await client.complete("hi", purpose="p")
        await client.close()
    assert server.requests == 3 and client.usage.total.failures == 1


async def test_wrong_api_key_is_a_clear_endpoint_error():
    async with FakeOpenAIServer(api_key="right") as server:
        opts = EndpointOptions(base_url=server.base_url, model="fake", api_key="wrong", cache=False)
        with pytest.raises(EndpointError, match="rejected the API key"):
            async with open_client(opts):
                pass


async def test_unreachable_endpoint_is_a_clear_endpoint_error(monkeypatch):
    monkeypatch.setenv("WEBAGENT_FAKE_ENDPOINTS", "http://127.0.0.1:9/v1")
    opts = EndpointOptions(base_url="http://127.0.0.1:9/v1", model="m", cache=False)
    with pytest.raises(EndpointError, match="cannot reach the model endpoint"):
        async with open_client(opts):
            pass


async def test_real_endpoints_are_blocked_in_tests():
    with pytest.raises(RuntimeError, match="blocked inside the test suite"):
        OpenAIBackend("https://api.openai.com/v1", "gpt-4o-mini", "sk-x")
    with pytest.raises(RuntimeError, match="blocked inside the test suite"):
        async with open_client(EndpointOptions(cache=False)):
            pass


async def test_llama_cpp_style_rejection_steps_down_to_json_object():
    seen = []

    def responder(messages, body):
        seen.append(body.get("response_format", {}).get("type"))
        return json.dumps({"pages": [1]})

    class Picky(FakeOpenAIServer):
        async def _chat(self, request):
            from aiohttp import web

            body = await request.json()
            if body.get("response_format", {}).get("type") == "json_schema":
                seen.append("json_schema")
                return web.json_response(
                    {"error": "body.response_format.type: Input should be 'text' or 'json_object'"}, status=500
                )
            return web.json_response(
                {
                    "id": "x",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "fake",
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": responder(body["messages"], body)},
                        }
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
            )

    async with Picky() as server:
        backend = OpenAIBackend(server.base_url, "fake", None)
        client = LLMClient(backend, backoff_s=0.0)
        r = await client.complete("pick", purpose="lookup", schema={"type": "object"})
        r2 = await client.complete("pick again", purpose="lookup", schema={"type": "object"})
        await client.close()
    assert r.data == {"pages": [1]} and r2.data == {"pages": [1]}
    assert seen == ["json_schema", "json_object", "json_object"]
    assert backend.schema_dialect == "json_object" and client.usage.total.retries == 0


async def test_identical_requests_in_flight_are_sent_once_and_scoped_usage_counts_up():
    class Slow(ScriptedBackend):
        async def chat(self, messages, params, purpose=""):
            await asyncio.sleep(0.05)  # both requests overlap
            return await super().chat(messages, params, purpose)

    backend = Slow(["only once"])
    client = LLMClient(backend)
    a, b = client.scoped(), client.scoped()
    r1, r2 = await asyncio.gather(a.complete("same", purpose="gist"), b.complete("same", purpose="gist"))
    assert r1.text == r2.text == "only once" and len(backend.requests) == 1
    assert (a.usage.total.calls + b.usage.total.calls, a.usage.total.cached_calls + b.usage.total.cached_calls) == (
        1,
        1,
    )
    assert client.usage.total.calls == 1 and client.usage.total.cached_calls == 1


async def test_a_failed_shared_request_fails_every_waiter_once():
    class SlowFail(ScriptedBackend):
        async def chat(self, messages, params, purpose=""):
            await asyncio.sleep(0.05)
            raise ModelCallError("refused")

    client = LLMClient(SlowFail([]))
    results = await asyncio.gather(*(client.complete("same", purpose="p") for _ in range(3)), return_exceptions=True)
    assert all(isinstance(r, ModelCallError) for r in results)
    assert client.usage.total.failures == 1  # one request went out; the other two waited on it


async def test_an_endpoint_refusing_every_schema_dialect_gets_plain_requests_from_then_on():
    seen = []

    class NoSchemas(FakeOpenAIServer):
        async def _chat(self, request):
            from aiohttp import web

            body = await request.json()  # aiohttp keeps the body for the next read
            seen.append(body.get("response_format", {}).get("type"))
            if "response_format" in body:
                return web.json_response({"error": {"message": "response_format is not supported"}}, status=400)
            return await super()._chat(request)

    async with NoSchemas(responder=lambda m, b: 'I pick {"pages": [2]}') as server:
        backend = OpenAIBackend(server.base_url, "fake", None)
        client = LLMClient(backend, backoff_s=0.0)
        first = await client.complete("pick", purpose="lookup", schema={"type": "object"})
        second = await client.scoped().complete("pick again", purpose="lookup", schema={"type": "object"})
        await client.close()
    assert first.data == second.data == {"pages": [2]}  # parsed from the text
    assert seen == ["json_schema", "json_object", None, None]
    assert backend.schema_dialect == "text" and client.usage.total.failures == 0


# --- context overflow: the endpoints' own wordings ------------------------------------------------

OVERFLOW_FIXTURE = (
    __import__("pathlib").Path(__file__).parent / "fixtures" / "llm" / "llama_cpp_exceed_context_size.json"
)
VLLM_OVERFLOW = {  # vLLM's OpenAI server: a 400 whose body is the error itself (no "error" wrapper)
    "object": "error",
    "type": "BadRequestError",
    "param": None,
    "code": 400,
    "message": "This model's maximum context length is 2048 tokens. However, you requested 2304 tokens "
    "(2048 in the messages, 256 in the completion). Please reduce the length of the messages or completion.",
}


@pytest.mark.parametrize(
    "message, overflow",
    [
        ("request (431 tokens) exceeds the available context size (256 tokens), try increasing it", True),
        (
            "the request exceeds the available context size, try increasing the context size or enable context shift",
            True,
        ),
        ("exceed_context_size_error", True),
        (VLLM_OVERFLOW["message"], True),
        ("This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens.", True),
        ("'max_tokens' is too large: 1000. This model's maximum context length is 2048 tokens", True),
        ("context_length_exceeded", True),
        ("invalid api key", False),
        ("Input should be 'text' or 'json_object'", False),
    ],
)
def test_context_overflow_wordings(message, overflow):
    from webagent.llm.client import is_context_overflow

    assert is_context_overflow(message) is overflow


def _error_server(status: int, body: dict):
    class Refusing(FakeOpenAIServer):
        async def _chat(self, request):
            from aiohttp import web

            await request.json()
            self.requests += 1
            return web.json_response(body, status=status)

    return Refusing()


@pytest.mark.parametrize("source", ["llama.cpp", "vllm"])
async def test_the_real_overflow_body_reaches_is_context_overflow_through_the_client(source):
    """The bodies as the servers send them (llama.cpp's captured from the embedded server), through
    the OpenAI SDK and the client: the client raises a ContextOverflow, and does not retry."""
    from webagent.llm.client import ContextOverflow, is_context_overflow

    if source == "llama.cpp":
        captured = json.loads(OVERFLOW_FIXTURE.read_text())
        status, body = captured["status"], captured["body"]
    else:
        status, body = 400, VLLM_OVERFLOW
    async with _error_server(status, body) as server:
        client = LLMClient(OpenAIBackend(server.base_url, "fake", None), backoff_s=0.0)
        with pytest.raises(ModelCallError) as err:
            await client.complete("word " * 400, purpose="answer")
        await client.close()
    assert isinstance(err.value, ContextOverflow) and is_context_overflow(str(err.value)), str(err.value)
    assert server.requests == 1 and client.usage.total.retries == 0


@pytest.mark.real_llm
async def test_the_embedded_server_overflow_is_recognised(embedded_server):
    """The embedded llama.cpp server answers a prompt longer than its context with its own
    wording (exceed_context_size_error); the client's error is recognised as an overflow."""
    from webagent.llm.client import ContextOverflow, is_context_overflow

    client = LLMClient(
        OpenAIBackend(embedded_server.base_url, embedded_server.model, None), backoff_s=0.0, max_retries=0
    )
    with pytest.raises(ModelCallError) as err:
        await client.complete("word " * (embedded_server.n_ctx + 500), purpose="answer", max_tokens=8)
    await client.close()
    assert isinstance(err.value, ContextOverflow) and is_context_overflow(str(err.value)), str(err.value)
