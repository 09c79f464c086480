"""Cache keys, what is cached, what every reply costs, and a flaky endpoint."""

import asyncio
import json
import subprocess
import sys

from webagent.llm.cache import Cache
from webagent.llm.client import BackendReply, EndpointUnavailable, LLMClient
from webagent.llm.gguf_info import file_hash, read_gguf_info
from webagent.llm.openai_backend import OpenAIBackend
from webagent.llm.testing import FAULT_KINDS, FakeOpenAIServer, FunctionBackend, fake_client
from webagent.llm.usage import Usage


async def test_needed_tokens_count_for_every_method_that_used_a_reply(tmp_path):
    cache = Cache(tmp_path / "c.sqlite")
    first = fake_client(lambda m, p, purpose: "the gist of it", cache=cache)
    await first.complete("a page of text", purpose="gist")
    spent = first.usage.total
    assert (spent.calls, spent.prompt_tokens, spent.completion_tokens) == (1, 4, 4)
    # Another run (another method) gets the same gist from the cache: nothing spent now,
    # but the method needed the same tokens.
    second = fake_client(lambda m, p, purpose: AssertionError("must come from the cache"), cache=cache)
    reply = await second.complete("a page of text", purpose="gist")
    t = second.usage.total
    assert reply.cached and (t.calls, t.cached_calls, t.prompt_tokens, t.completion_tokens) == (0, 1, 0, 0)
    assert (t.needed_prompt_tokens, t.needed_completion_tokens) == (4, 4)


async def test_a_shared_in_flight_request_counts_needed_tokens_for_both_callers():
    class Slow(FunctionBackend):
        async def chat(self, messages, params, purpose=""):
            await asyncio.sleep(0.05)
            return await super().chat(messages, params, purpose)

    client = LLMClient(Slow(lambda m, p, purpose: "one two three"))
    a, b = client.scoped(), client.scoped()
    await asyncio.gather(a.complete("same prompt", purpose="gist"), b.complete("same prompt", purpose="gist"))
    for view in (a, b):
        assert view.usage.total.needed_prompt_tokens == 2 and view.usage.total.needed_completion_tokens == 3
    assert client.usage.total.prompt_tokens == 2  # spent once
    assert client.usage.total.needed_prompt_tokens == 4  # needed by each


async def test_old_cache_entries_without_usage_count_zero(tmp_path):
    cache = Cache(tmp_path / "c.sqlite")
    client = fake_client([], cache=cache)
    from webagent.llm.cache import content_hash

    key = content_hash(
        client.backend.identity, [{"role": "user", "content": "q"}], {"max_tokens": 256, "temperature": 0.0}
    )
    cache.put("llm", key, {"text": "old reply"})  # the format before usage was stored
    reply = await client.complete("q", purpose="p")
    assert reply.text == "old reply" and client.usage.total.cached_calls == 1
    assert client.usage.total.needed_prompt_tokens == 0


async def test_cache_key_is_the_backend_identity_not_its_name(tmp_path):
    cache = Cache(tmp_path / "c.sqlite")
    one = FunctionBackend(lambda m, p, purpose: "from endpoint A", name="same-model")
    other = FunctionBackend(lambda m, p, purpose: "from endpoint B", name="same-model")
    one.identity, other.identity = "http://a/v1|m", "http://b/v1|m"
    assert (await LLMClient(one, cache=cache).complete("q", purpose="p")).text == "from endpoint A"
    assert (await LLMClient(other, cache=cache).complete("q", purpose="p")).text == "from endpoint B"
    assert cache.count("llm") == 2


def test_openai_backend_identity_is_url_and_model(monkeypatch):
    monkeypatch.setenv("WEBAGENT_FAKE_ENDPOINTS", "http://127.0.0.1:1/v1,http://127.0.0.1:2/v1")
    a = OpenAIBackend("http://127.0.0.1:1/v1", "m", None)
    b = OpenAIBackend("http://127.0.0.1:2/v1", "m", None)
    c = OpenAIBackend("http://127.0.0.1:2/v1", "m", None, identity="gguf:abc:n_ctx=8192")
    assert a.identity != b.identity and "127.0.0.1:1" in a.identity and a.identity.endswith("|m")
    assert c.identity == "gguf:abc:n_ctx=8192"


async def test_empty_and_cut_off_replies_are_not_cached(tmp_path):
    cache = Cache(tmp_path / "c.sqlite")
    replies = iter(
        [
            BackendReply("", 3, 0, "stop"),
            BackendReply("a cut-off rep", 3, 4, "length"),
            BackendReply("whole", 3, 1, "stop"),
        ]
    )
    client = fake_client(lambda m, p, purpose: next(replies), cache=cache)
    assert (await client.complete("q", purpose="p")).text == ""
    assert (await client.complete("q", purpose="p")).text == "a cut-off rep"
    assert (await client.complete("q", purpose="p")).text == "whole"
    assert (await client.complete("q", purpose="p")).cached  # only the whole reply was kept
    assert client.usage.total.calls == 3 and cache.count("llm") == 1


def test_gguf_hash_is_memoised_by_path_size_and_mtime(tmp_path, monkeypatch):
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF" + b"\x03\x00\x00\x00" + b"\x00" * 16)
    h1 = file_hash(f)
    reads = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda *a, **k: reads.append(a[0]) or real_open(*a, **k))
    assert file_hash(f) == h1 and str(f.resolve()) not in map(str, reads)  # memoised: not re-read
    monkeypatch.undo()
    f.write_bytes(b"GGUF" + b"\x03\x00\x00\x00" + b"\x01" * 16)  # new content, new size/mtime
    assert file_hash(f) != h1
    assert read_gguf_info(f).name == "m"  # no metadata: the file name


def test_usage_summary_reads_calls_and_cached_per_purpose():
    usage = Usage()
    usage.record("pagination", calls=3, cached_calls=3, prompt_tokens=20000, completion_tokens=30)
    usage.record("gist", calls=7, prompt_tokens=1031, completion_tokens=1602, retries=2)
    line = usage.summary_line()
    first, second = line.split("\n")
    assert first.startswith(
        "usage: 13 model calls (3 cached); 21,031 prompt + 1,632 completion tokens; 2 retries, 0 failures; "
    )
    assert second.strip() == "pagination 6 (3 cached), gist 7 (0 cached)"


async def test_flaky_endpoint_every_call_completes_or_is_unavailable_and_faults_are_counted():
    server = FakeOpenAIServer(responder=lambda m, b: "fine", fault_rate=0.3, seed=0)
    async with server:
        client = LLMClient(
            OpenAIBackend(server.base_url, "fake", None, timeout_s=5), backoff_s=0.0, max_retries=4, concurrency=4
        )
        results = await asyncio.gather(
            *(client.complete(f"q{i}", purpose="gist") for i in range(60)), return_exceptions=True
        )
        await client.close()
    assert all(getattr(r, "text", None) == "fine" or isinstance(r, EndpointUnavailable) for r in results)
    assert all(server.faults[kind] > 0 for kind in FAULT_KINDS)  # every kind was tried
    u = client.usage.total
    done = sum(1 for r in results if not isinstance(r, BaseException))
    assert u.calls == done and u.failures == len(results) - done
    assert u.retries == sum(server.faults.values()) - u.failures  # each fault was retried or ended a call
    assert server.requests == u.calls + sum(server.faults.values())


async def test_a_200_that_is_not_json_is_retried_not_a_crash():
    class HtmlOnce(FakeOpenAIServer):
        async def _chat(self, request):
            from aiohttp import web

            if self.requests == 0:
                self.requests += 1
                return web.Response(text="<html>proxy error</html>", content_type="text/html")
            return await super()._chat(request)

    async with HtmlOnce(responder=lambda m, b: "ok") as server:
        client = LLMClient(OpenAIBackend(server.base_url, "fake", None), backoff_s=0.0)
        reply = await client.complete("hi", purpose="p")
        await client.close()
    assert reply.text == "ok" and client.usage.total.retries == 1


async def test_a_slow_local_server_reporting_progress_is_not_timed_out():
    # 1.5 s per reply, 0.5 s timeout: a remote endpoint is retried (work re-sent), a server
    # whose /slots shows the request moving is waited for.
    async with FakeOpenAIServer(delay_s=1.5, responder=lambda m, b: "slow", report_slots=True) as server:
        remote = LLMClient(OpenAIBackend(server.base_url, "fake", None, timeout_s=0.5), backoff_s=0.0, max_retries=1)
        local = OpenAIBackend(
            server.base_url, "fake", None, timeout_s=0.5, progress_url=server.base_url.removesuffix("/v1")
        )
        local.progress.poll_s = 0.1
        patient = LLMClient(local, backoff_s=0.0, max_retries=1)
        try:
            await remote.complete("a", purpose="p")
        except EndpointUnavailable:
            pass
        sent_before = server.requests
        reply = await patient.complete("b", purpose="p")
        await remote.close()
        await patient.close()
    assert remote.usage.total.retries == 1  # the remote policy re-sent it
    assert reply.text == "slow" and server.requests - sent_before == 1 and patient.usage.total.retries == 0


async def test_a_local_server_without_progress_still_times_out():
    async with FakeOpenAIServer(hang_first=1, hang_s=5, responder=lambda m, b: "x") as server:
        # /slots is not served, so there is no evidence of progress: the timeout applies.
        backend = OpenAIBackend(
            server.base_url, "fake", None, timeout_s=0.3, progress_url=server.base_url.removesuffix("/v1")
        )
        backend.progress.poll_s = 0.05
        client = LLMClient(backend, backoff_s=0.0)
        reply = await client.complete("q", purpose="p")
        await client.close()
    assert reply.text == "x" and client.usage.total.retries == 1


def test_cache_info_and_clear_commands(tmp_path):
    import os

    env = {**os.environ, "WEBAGENT_HOME": str(tmp_path)}
    cache = Cache(tmp_path / "cache.sqlite")
    for i in range(3):
        cache.put("llm", f"k{i}", {"text": "x"})
    cache.put("memory", "m", {"pages": []})
    cache.close()

    def cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "webagent.cli", "cache", *args], capture_output=True, text=True, env=env, timeout=60
        )

    info = json.loads(cli("info", "--json").stdout)
    assert info["namespaces"] == {"llm": 3, "memory": 1} and info["size_bytes"] > 0
    assert info["path"] == str(tmp_path / "cache.sqlite")
    assert cli("clear", "--namespace", "llm").stdout.strip() == "deleted 3 entries from llm"
    assert json.loads(cli("info", "--json").stdout)["namespaces"] == {"memory": 1}
    bad = cli("clear", "--namespace", "nope")
    assert bad.returncode == 2 and "no such namespace" in bad.stderr and "Traceback" not in bad.stderr
    assert cli("clear").returncode == 0
    assert json.loads(cli("info", "--json").stdout)["namespaces"] == {}
