"""`webagent ask`: the pipeline with fakes, the CLI in a subprocess against a real HTTP fake."""

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from webagent.docqa.ask import ask
from webagent.docqa.options import QAOptions
from webagent.llm.cache import Cache
from webagent.llm.testing import FakeOpenAIServer, FunctionBackend, fake_client, heuristic_reply

DOC = Path(__file__).parent.parent / "examples" / "qmsum_remote_control_meeting.txt"


async def test_second_question_reuses_the_gist_memory(tmp_path):
    cache = Cache(tmp_path / "c.sqlite")
    opts = QAOptions(min_words=150, max_words=300)
    first = fake_client(FunctionBackend(heuristic_reply), cache=cache)
    r1 = await ask(first, DOC, "What about safety?", opts)
    assert r1.num_pages > 5 and not r1.memory_from_cache
    assert r1.usage["by_purpose"]["pagination"]["calls"] > 0 and r1.usage["by_purpose"]["gist"]["calls"] == r1.num_pages
    second = fake_client(FunctionBackend(heuristic_reply), cache=cache)
    r2 = await ask(second, DOC, "Who is the project manager?", opts)
    assert r2.memory_from_cache and r2.num_pages == r1.num_pages
    assert "pagination" not in r2.usage["by_purpose"] and "gist" not in r2.usage["by_purpose"]
    assert 0 < r2.compression_rate < 100


async def test_lookup_pages_are_expanded_for_the_answer(tmp_path):
    seen = {}

    def fn(messages, params, purpose):
        if purpose == "lookup":
            return {"pages": [1]}
        if purpose == "answer":
            seen["answer_prompt"] = messages[0]["content"]
            return "Because of safety."
        return heuristic_reply(messages, params, purpose)

    result = await ask(fake_client(FunctionBackend(fn)), DOC, "Why?", QAOptions(min_words=150, max_words=300))
    assert result.answer == "Because of safety." and result.pages_looked_up == [1]
    prompt = seen["answer_prompt"]
    page1 = prompt.split("<Page 1>\n")[1].split("\n\n<Page 2>")[0]
    assert len(page1.split()) > 100  # the full page, not its 25-word gist
    assert result.compression_rate < 100


def run_cli(*args, env_extra=None):
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "webagent.cli", *args], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.fixture
def fake_server():
    def purpose(prompt: str) -> str:
        if "natural to break reading" in prompt:
            return "pagination"
        return "lookup" if "look up" in prompt or "read again" in prompt else "gist"

    server = FakeOpenAIServer(
        responder=lambda m, body: (
            json.dumps(heuristic_reply(m, body, purpose(m[0]["content"]))) if body.get("response_format") else "a gist"
        )
    ).start_in_thread()
    yield server
    server.stop_thread()


def test_cli_json_twice_second_run_makes_no_pagination_or_gist_calls(fake_server):
    args = ["ask", str(DOC), "What did they decide?", "--json", "--base-url", fake_server.base_url, "--model", "fake"]
    first = run_cli(*args)
    assert first.returncode == 0, first.stderr
    r1 = json.loads(first.stdout)
    assert {"answer", "pages_looked_up", "num_pages", "compression_rate", "usage"} <= set(r1)
    assert {"calls", "cached_calls", "prompt_tokens", "completion_tokens"} <= set(r1["usage"])
    assert r1["usage"]["by_purpose"]["gist"]["calls"] == r1["num_pages"]
    second = json.loads(run_cli(*args).stdout)
    assert second["memory_from_cache"] is True
    assert "pagination" not in second["usage"]["by_purpose"] and "gist" not in second["usage"]["by_purpose"]


@pytest.mark.parametrize(
    "setup,args,message",
    [
        (None, ["ask", "/no/such/file.txt", "q"], "no such file"),
        ("empty", ["ask", "{path}", "q"], "empty"),
        ("binary", ["ask", "{path}", "q"], "binary"),
        ("text", ["ask", "{path}", "q", "--lookup", "random"], "Invalid value for '--lookup'"),
        ("text", ["ask", "{path}", "q", "--min-words", "700"], "--min-words"),
        ("text", ["ask", "{path}", "q", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"], "cannot reach"),
        ("text", ["ask", "{path}", "q", "--model", "gpt-4o"], "needs an endpoint"),
    ],
)
def test_cli_bad_input_is_one_clear_line(tmp_path, setup, args, message):
    path = tmp_path / "doc.txt"
    if setup == "empty":
        path.write_text("")
    elif setup == "binary":
        path.write_bytes(b"\x00\x01\x02binary\x00" * 100)
    elif setup == "text":
        path.write_text("Some text.\n\nMore text.")
    result = run_cli(
        *[a.replace("{path}", str(path)) for a in args], env_extra={"WEBAGENT_FAKE_ENDPOINTS": "http://127.0.0.1:9/v1"}
    )
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert len([line for line in result.stderr.splitlines() if line.startswith("error:")]) <= 1


async def test_uniform_pagination_makes_no_pagination_calls_and_conditional_gists_see_the_question(tmp_path):
    backend = FunctionBackend(heuristic_reply)
    opts = QAOptions(pagination="uniform", max_words=300, min_words=100, conditional_gist=True)
    result = await ask(fake_client(backend, cache=Cache(tmp_path / "c.sqlite")), DOC, "Was safety discussed?", opts)
    assert "pagination" not in result.usage["by_purpose"]
    assert result.num_pages == -(-result.document_words // 300)
    gist_prompts = [r["messages"][0]["content"] for r in backend.requests if r["purpose"] == "gist"]
    assert len(gist_prompts) == result.num_pages and all("Was safety discussed?" in p for p in gist_prompts)


async def test_a_degraded_memory_is_not_cached_and_its_failures_show_on_every_run(tmp_path):
    """A gist that fell back must not be served from the cache as a clean memory."""
    cache = Cache(tmp_path / "c.sqlite")
    opts = QAOptions(min_words=150, max_words=300)

    def empty_gist_for_page_2(messages, params, purpose):
        if purpose == "gist" and "Passage:" in messages[0]["content"] and "child lock" in messages[0]["content"]:
            return ""  # an empty gist: the page falls back to its first words
        return heuristic_reply(messages, params, purpose)

    r1 = await ask(fake_client(FunctionBackend(empty_gist_for_page_2), cache=cache), DOC, "q1?", opts)
    assert r1.gist_failures >= 1 and not r1.memory_from_cache
    r2 = await ask(fake_client(FunctionBackend(empty_gist_for_page_2), cache=cache), DOC, "q2?", opts)
    assert not r2.memory_from_cache and r2.gist_failures == r1.gist_failures
    # Once gisting works, the clean memory is cached and served.
    r3 = await ask(fake_client(FunctionBackend(heuristic_reply), cache=cache), DOC, "q3?", opts)
    assert r3.gist_failures == 0 and not r3.memory_from_cache
    r4 = await ask(fake_client(FunctionBackend(heuristic_reply), cache=cache), DOC, "q4?", opts)
    assert r4.memory_from_cache and r4.gist_failures == 0


async def test_looked_up_pages_that_overflow_the_context_go_back_to_gists_last_first():
    seen = {}

    def fn(messages, params, purpose):
        if purpose == "lookup":
            return {"pages": [1, 3, 5], "reason": "to check"}
        if purpose == "answer":
            seen["prompt"] = messages[0]["content"]
            return "ok"
        return heuristic_reply(messages, params, purpose)

    from webagent.docqa.ask import estimate_text_tokens

    opts = QAOptions(min_words=150, max_words=300)
    roomy = await ask(fake_client(FunctionBackend(fn)), DOC, "Why?", opts)
    assert roomy.pages_looked_up == [1, 3, 5] and roomy.pages_dropped_for_context == []
    budget = estimate_text_tokens(seen["prompt"]) - 1  # the three pages no longer fit...
    result = await ask(fake_client(FunctionBackend(fn)), DOC, "Why?", replace(opts, context_tokens=budget))
    assert result.pages_dropped_for_context[0] == 5  # ...so the last one goes back to its gist first
    assert result.pages_looked_up == [1, 3, 5][: 3 - len(result.pages_dropped_for_context)]
    assert estimate_text_tokens(seen["prompt"]) <= budget


async def test_an_overflow_reported_by_the_endpoint_drops_another_page_and_never_raises():
    from webagent.llm.client import ModelCallError

    def fn(messages, params, purpose):
        if purpose == "lookup":
            return {"pages": [1, 3], "reason": "to check"}
        if purpose == "answer":
            if "<Page 3>\n" in messages[0]["content"] and len(messages[0]["content"].split()) > 600:
                full = messages[0]["content"].split("<Page 3>\n")[1].split("<Page 4>")[0]
                if len(full.split()) > 100:
                    return ModelCallError("HTTP 400: This model's maximum context length is 2048 tokens")
            return "fine"
        return heuristic_reply(messages, params, purpose)

    result = await ask(fake_client(FunctionBackend(fn)), DOC, "Why?", QAOptions(min_words=150, max_words=300))
    assert result.answer == "fine" and result.pages_looked_up == [1] and result.pages_dropped_for_context == [3]


def test_cli_prints_pages_as_a_list_of_numbers(fake_server):
    result = run_cli("ask", str(DOC), "What did they decide?", "--base-url", fake_server.base_url, "--model", "fake")
    assert result.returncode == 0, result.stderr
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("looked up:"))
    assert "[" not in line and ("pages " in line or "no pages" in line)


@pytest.mark.parametrize("method", ["readagent-p", "gistmem"])
def test_the_python_api_reads_with_single_pass_and_the_gist_model_as_the_cli_does(monkeypatch, method):
    """``ask_sync(single_pass=..., gist_model=...)``: the reader paginates with the gist model's
    client, in one pass (the gist written with its pause point), as ``webagent ask`` does."""
    import webagent.docqa.ask as ask_module
    import webagent.docqa.reading as reading
    from webagent.api import ask_sync
    from webagent.llm.endpoint import EndpointOptions

    seen = []
    real = reading.read_pages

    async def read_pages(client, paragraphs, settings, shown):
        seen.append((client.model_name, settings.single_pass, client.usage.parent is not None))
        return await real(client, paragraphs, settings, shown)

    monkeypatch.setattr(reading, "read_pages", read_pages)
    monkeypatch.setattr(ask_module, "read_pages", read_pages)
    endpoint = EndpointOptions(model="fake:heuristic", cache=False)
    result = ask_sync(DOC, "What about safety?", method=method, endpoint=endpoint, single_pass=True,
                      gist_model="fake:heuristic")  # fmt: skip
    assert result.answer
    assert seen == [("fake:heuristic", True, True)]  # the gist model's client (its usage counts into the main one)
    if method == "readagent-p":
        assert result.single_pass and result.gist_model == "fake:heuristic"
