"""Issue 23: threads for the embedded server, the single pass, --gist-model, readable progress."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from webagent.docqa.ask import ask, memory_key
from webagent.docqa.data import Document, Question
from webagent.docqa.options import QAOptions
from webagent.docqa.progress import ReadingProgress
from webagent.docqa.reading import DocumentState
from webagent.durations import format_duration
from webagent.errors import UserError
from webagent.llm import llama_server, local
from webagent.llm.cache import Cache
from webagent.llm.endpoint import EndpointOptions, open_client, open_gist_client
from webagent.llm.testing import FunctionBackend, fake_client, heuristic_reply
from webagent.llm.usage import Usage
from webagent.text import iter_pages, iter_paragraphs
from webagent.text.paginate import parse_label_gist

DOC = Path(__file__).parent.parent / "examples" / "qmsum_remote_control_meeting.txt"


# --- threads ---------------------------------------------------------------------------------


def test_threads_every_core_when_quiet_one_fewer_for_both_when_busy_or_as_set(monkeypatch):
    monkeypatch.setattr(llama_server, "usable_cpus", lambda: 2)
    monkeypatch.setattr(llama_server, "busy_cores", lambda: 0.1)
    assert llama_server.server_threads() == (2, 2)
    assert llama_server.server_threads(None, 1) == (2, 1)
    monkeypatch.setattr(llama_server, "busy_cores", lambda: 1.2)
    assert llama_server.server_threads() == (1, 1)  # a second prompt thread read no faster beside a busy process
    assert llama_server.server_threads(None, 2) == (1, 2)
    assert llama_server.server_threads(busy=0.0) == (2, 2)
    monkeypatch.setattr(llama_server, "busy_cores", lambda: None)  # not Linux: nothing measured
    assert llama_server.server_threads() == (2, 2)
    monkeypatch.setattr(llama_server, "busy_cores", lambda: pytest.fail("--threads skips the measurement"))
    assert llama_server.server_threads(1) == (1, 1)
    assert llama_server.server_threads(3, 1) == (3, 1)
    monkeypatch.setattr(llama_server, "usable_cpus", lambda: 1)
    assert llama_server.server_threads() == (1, 1)


def test_busy_cores_reads_proc_stat():
    busy = llama_server.busy_cores(0.05)
    assert busy is None or 0.0 <= busy <= (os.cpu_count() or 1)


def test_the_server_command_carries_the_threads(monkeypatch, tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")

    class Info:
        name = "M"

        def kv_bytes_per_token(self):
            return None

    monkeypatch.setattr(local, "read_gguf_info", lambda path: Info())
    monkeypatch.setattr(llama_server, "usable_cpus", lambda: 2)
    monkeypatch.setattr(llama_server, "busy_cores", lambda: 0.0)
    cmd = local.LocalServer(gguf).command()
    assert cmd[cmd.index("--threads") + 1] == "2" and cmd[cmd.index("--threads-batch") + 1] == "2"
    cmd = local.LocalServer(gguf, threads=1).command()
    assert cmd[cmd.index("--threads") + 1] == "1" and cmd[cmd.index("--threads-batch") + 1] == "1"


def test_build_params_sets_decode_and_batch_threads_apart():
    pytest.importorskip("xllamacpp")
    args = llama_server.argparse.Namespace(
        gguf="m.gguf", alias="m", host="127.0.0.1", port=1, slots=1, n_ctx=512, threads=1, threads_batch=2
    )
    params = llama_server.build_params(args)
    assert params.cpuparams.n_threads == 1 and params.cpuparams_batch.n_threads == 2


# --- the single pass ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, expected",
    [
        ({"break_point": 3, "gist": " The team met. "}, (3, "The team met.")),
        ("Break point: ⟨3⟩\nShortened: The team met (2) times.", (3, "The team met (2) times.")),
        ("Break point: <3>\n\nGist: short", (3, "short")),
        ('{"break_point": 3, "gist": "The team met and \\"talked', (3, 'The team met and "talked')),  # cut short
        ("Break point: ⟨3⟩", (3, "")),
    ],
)
def test_parse_label_gist(reply, expected):
    from webagent.llm.client import Reply

    r = Reply(json.dumps(reply), reply) if isinstance(reply, dict) else Reply(reply)
    assert parse_label_gist(r, [2, 3, 5]) == (expected, None)


def test_parse_label_gist_refuses_a_label_not_offered():
    value, problem = parse_label_gist("Break point: ⟨4⟩\nShortened: x", [2, 3])
    assert value is None and "not one of the labels" in problem


def single_pass_model(calls: list):
    """Paginates at the last label and writes a gist with it; gists alone as the heuristic fake."""

    def fn(messages, params, purpose):
        calls.append(purpose)
        text = messages[-1]["content"]
        if purpose == "pagination":
            assert ("Shortened" in text) == ("gist" in json.dumps(params.get("response_format", {})))
            reply = heuristic_reply(messages, params, purpose)
            if "Shortened" in text:
                return {"break_point": reply["break_point"], "gist": f"written with pause {reply['break_point']}"}
            return reply
        return heuristic_reply(messages, params, purpose)

    return fn


async def test_single_pass_gists_the_pages_it_closes_and_only_gists_the_rest():
    calls = []
    client = fake_client(FunctionBackend(single_pass_model(calls)))
    pages = [p async for p in iter_pages(client, iter_paragraphs(DOC), min_words=150, max_words=300, single_pass=True)]
    with_call = [p for p in pages if p.metadata["pause"] == "model"]
    assert with_call and all(p.metadata["gist"].startswith("written with pause") for p in with_call)
    assert all("gist" not in p.metadata for p in pages if p.metadata["pause"] != "model")

    calls.clear()
    result = await ask(
        fake_client(FunctionBackend(single_pass_model(calls))),
        DOC,
        "Safety?",
        QAOptions(min_words=150, max_words=300, single_pass=True),
    )
    by = result.usage["by_purpose"]
    assert by["gist"]["calls"] == len(pages) - len(with_call) < len(pages)
    assert by["pagination"]["calls"] == len(with_call) and result.single_pass


async def test_two_pass_stays_the_default_and_keeps_its_cache_key(tmp_path):
    calls = []
    client = fake_client(FunctionBackend(single_pass_model(calls)))
    result = await ask(client, DOC, "Safety?", QAOptions(min_words=150, max_words=300))
    assert result.usage["by_purpose"]["gist"]["calls"] == result.num_pages and not result.single_pass
    two = memory_key(client, DOC, QAOptions(), None)
    one = memory_key(client, DOC, QAOptions(single_pass=True), None)
    assert two != one


def test_single_pass_needs_llm_pagination():
    with pytest.raises(UserError, match="single-pass"):
        QAOptions(single_pass=True, pagination="uniform")


# --- the gist model -------------------------------------------------------------------------------


async def test_gist_model_paginates_and_gists_the_main_model_looks_up_and_answers(tmp_path):
    cache = Cache(tmp_path / "c.sqlite")
    small, big = FunctionBackend(heuristic_reply, name="small"), FunctionBackend(heuristic_reply, name="big")
    main = fake_client(big, cache=cache)
    memory = fake_client(small, cache=cache, usage=Usage(parent=main.usage))
    opts = QAOptions(min_words=150, max_words=300)
    r1 = await ask(main, DOC, "Safety?", opts, memory_client=memory)
    assert {q["purpose"] for q in small.requests} == {"pagination", "gist"}
    assert {q["purpose"] for q in big.requests} == {"lookup", "answer"}
    assert {"pagination", "gist", "lookup", "answer"} <= set(r1.usage["by_purpose"])  # one usage for both
    assert r1.gist_model == "small" and r1.model == "big"

    # A second question about the same file: no pagination or gist call, on either model.
    small2, big2 = FunctionBackend(heuristic_reply, name="small"), FunctionBackend(heuristic_reply, name="big")
    main2 = fake_client(big2, cache=cache)
    r2 = await ask(
        main2, DOC, "Who leads?", opts, memory_client=fake_client(small2, cache=cache, usage=Usage(parent=main2.usage))
    )
    assert r2.memory_from_cache and not small2.requests
    assert "pagination" not in r2.usage["by_purpose"] and "gist" not in r2.usage["by_purpose"]


async def test_open_gist_client_with_the_fake_and_without_a_gist_model():
    opts = EndpointOptions(model="fake:heuristic", cache=False)
    async with open_client(opts) as client, open_gist_client(opts, None, client) as memory:
        assert memory is None
    async with open_client(opts) as client, open_gist_client(opts, "qwen2.5-coder-0.5b", client) as memory:
        await memory.complete("Please shorten the following passage.\n\nPassage:\nA b c.", purpose="gist")
        assert client.usage.purpose("gist").calls == 1  # counted in the main client's usage


async def test_qa_eval_state_builds_pages_and_gists_with_the_memory_client():
    small, big = FunctionBackend(single_pass_model([]), name="small"), FunctionBackend(heuristic_reply, name="big")
    main = fake_client(big)
    memory = fake_client(small, usage=Usage(parent=main.usage))
    lines = []
    doc = Document("d", list(iter_paragraphs(DOC)), [Question("q", "Safety?")])
    state = DocumentState(main, doc, QAOptions(150, 300, single_pass=True), memory_client=memory, progress=lines.append)
    gists = await state.gist_memory()
    assert not big.requests and {q["purpose"] for q in small.requests} == {"pagination", "gist"}
    assert sum(q["purpose"] == "gist" for q in small.requests) < len(gists.value)
    assert any("read page" in line for line in lines) and lines[0].startswith("doc d: ")


# --- progress -----------------------------------------------------------------------------------


def test_reading_progress_lines():
    now = [0.0]
    usage, lines = Usage(), []
    shown = ReadingProgress(lines.append, usage, 1000, clock=lambda: now[0])
    now[0] = 20.0
    usage.record("pagination", prompt_tokens=900, completion_tokens=100)
    shown.page(250)
    assert lines[-1] == "read page 1 of ~4 (250 of 1,000 words) · 50 tok/s · ~1 min left to paginate"
    now[0] = 30.0
    shown.page(750, last=True)
    assert lines[-1].startswith("read page 2 of 2 (1,000 of 1,000 words)") and "~0 s left" in lines[-1]
    shown.restart()
    now[0] = 40.0
    usage.record("gist", prompt_tokens=400, completion_tokens=0)
    shown.gisted(1, 2)
    assert lines[-1] == "gisted 1 of 2 pages · 40 tok/s · ~10 s left"
    assert format_duration(125) == "2 min 5 s" and format_duration(59.6) == "1 min"


def test_ask_cli_prints_progress_with_the_new_options(tmp_path):
    env = {**os.environ, "WEBAGENT_HOME": str(tmp_path)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "webagent.cli",
            "ask",
            str(DOC),
            "Safety?",
            "--model",
            "fake:heuristic",
            "--single-pass",
            "--gist-model",
            "qwen2.5-coder-0.5b",
            "--threads",
            "1",
            "--min-words",
            "150",
            "--max-words",
            "300",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "read page 1 of ~" in done.stderr and "tok/s" in done.stderr and "left to paginate" in done.stderr
    assert "memory: paginated and gisted by fake:heuristic, single pass" in done.stdout
