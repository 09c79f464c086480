"""End to end with the embedded model (SmolLM2-135M through llama.cpp's own server, xllamacpp).

These make real calls; they are the only tests allowed to. The model is tiny and the inputs
are the smallest that show each path: the tests check that every path runs on a real
model's replies and is accounted for, not quality. They share one server (the session
fixture ``embedded_server``); only the tests of the server's own start and stop start one.
"""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
DOC = ROOT / "examples" / "qmsum_remote_control_meeting.txt"
FIXTURES = ROOT / "tests" / "fixtures" / "mind2web"

pytestmark = pytest.mark.real_llm

needs_llama = pytest.mark.skipif(
    __import__("importlib").util.find_spec("xllamacpp") is None,
    reason="xllamacpp is not installed (run `make setup`)",
)


def run(*args, env=None, timeout=600):
    result = subprocess.run(
        [sys.executable, "-m", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env or {**os.environ},
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result


def test_ask_twice_with_the_embedded_model(tmp_path, embedded_env):
    doc = tmp_path / "meeting.txt"  # the meeting's first turns, ~450 words: three or four pages
    turns, words = [], 0
    for turn in DOC.read_text().split("\n\n"):
        if words >= 450:
            break
        turns.append(turn)
        words += len(turn.split())
    doc.write_text("\n\n".join(turns))
    args = [
        "webagent.cli",
        "ask",
        str(doc),
        "What did the group decide about the remote control?",
        "--json",
        "--min-words",
        "100",
        "--max-words",
        "200",
    ]
    first = json.loads(run(*args, env=embedded_env).stdout)
    assert first["answer"] and first["num_pages"] >= 2
    assert first["usage"]["by_purpose"]["pagination"]["calls"] >= 1
    assert first["usage"]["by_purpose"]["gist"]["calls"] == first["num_pages"]
    assert first["usage"]["prompt_tokens"] > 300 and first["usage"]["completion_tokens"] > 0
    second = json.loads(run(*args[:3], "Who presented the project?", *args[4:], env=embedded_env).stdout)
    assert second["memory_from_cache"] is True
    assert "pagination" not in second["usage"]["by_purpose"] and "gist" not in second["usage"]["by_purpose"]
    assert second["usage"]["calls"] >= 2  # look-up and answer are real calls for a new question


def test_mind2web_eval_every_method_then_served_from_cache(tmp_path, embedded_env):
    data = tmp_path / "m2w" / "test_website"  # one task, its first step
    data.mkdir(parents=True)
    task = json.loads((FIXTURES / "test_website" / "test_website_0.json").read_text())[0]
    task.update(action_reprs=task["action_reprs"][:1], actions=task["actions"][:1])
    (data / "one_step.json").write_text(json.dumps([task]))
    base = [
        "mind2web.cli",
        "eval",
        "--data",
        str(data.parent),
        "--split",
        "test_website",
        "--method",
        "all",
        "--top-k",
        "1",
        "--max-lookup",
        "1",
    ]
    run(*base, "--out", str(tmp_path / "first"), env=embedded_env)
    report = json.loads((tmp_path / "first" / "report.json").read_text())
    methods = set(report["results"]["test_website"])
    assert methods == {"raw", "bm25@1", "neural@1", "gistmem", "readagent-p@1"}
    for name in ("report.md", "tokens_histogram.png", "steps.jsonl"):
        assert (tmp_path / "first" / name).stat().st_size > 0
    assert report["meta"]["usage"]["calls"] > 0
    from webagent.llm.cache import Cache

    cache = Cache(Path(os.environ["WEBAGENT_HOME"]) / "cache.sqlite")
    kept = cache.count("llm")
    cache.close()
    # Replies cut by max_tokens (SmolLM2 rambles) or empty are not cached; every other one is.
    not_kept = report["meta"]["usage"]["calls"] - kept
    assert kept > 0 and not_kept >= 0
    # A fresh output folder, same model and data: every kept reply comes from the cache,
    # only the ones not kept are asked again.
    run(*base, "--out", str(tmp_path / "second"), env=embedded_env)
    again = json.loads((tmp_path / "second" / "report.json").read_text())
    assert again["meta"]["usage"]["calls"] == not_kept and again["meta"]["usage"]["cached_calls"] > 0
    scores = ("element_acc", "op_f1", "step_sr", "task_sr", "compression_rate", "num_steps")
    for method, m in report["results"]["test_website"].items():
        if again["results"]["test_website"][method]["calls_per_step"] > 0:
            continue  # asked again: batching on the server may change a greedy reply
        # rows arrive in a different order, so float sums may differ in the last bits
        assert {k: again["results"]["test_website"][method][k] for k in scores} == pytest.approx(
            {k: m[k] for k in scores}
        )


@needs_llama
def test_a_broken_gguf_is_one_clear_line(tmp_path):
    junk = tmp_path / "broken.gguf"
    junk.write_bytes(b"GGUF" + b"\x00" * 64)
    result = subprocess.run(
        [sys.executable, "-m", "webagent.cli", "ask", str(DOC), "q", "--gguf", str(junk)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ},
    )
    assert result.returncode == 3
    assert "embedded model server exited" in result.stderr and "Traceback" not in result.stderr


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead too
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@needs_llama
def test_two_servers_of_one_home_keep_a_log_each():
    """Two evals at once under one home: the second server's log no longer empties the first's
    while it runs (it takes the next free name); once both stop, the first name is free."""
    from webagent.llm.local import LocalServer

    with LocalServer(n_ctx=256, slots=1) as first, LocalServer(n_ctx=256, slots=1) as second:
        assert (first.log_path.name, second.log_path.name) == ("llama-server.log", "llama-server-2.log")
        assert f":{first.port}" in first.log_path.read_text() and f":{second.port}" in second.log_path.read_text()
    again = LocalServer(n_ctx=256, slots=1)
    again._open_log().close()
    assert again.log_path.name == "llama-server.log" and again.log_path.read_text() == ""


@needs_llama
def test_a_killed_parent_leaves_no_model_server_behind():
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; from webagent.llm.local import LocalServer; s = LocalServer(n_ctx=512, slots=2).start(); "
            "print(s.proc.pid, s.port, flush=True); time.sleep(300)",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )
    line = parent.stdout.readline().split()
    assert line, "the parent did not start the server"
    server_pid, port = int(line[0]), int(line[1])
    assert _alive(server_pid)
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as resp:
        assert resp.status == 200
    parent.send_signal(signal.SIGKILL)  # no cleanup code runs in the parent
    parent.wait(10)
    deadline = time.monotonic() + 15
    while _alive(server_pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(server_pid), "the model server outlived its killed parent"


def test_json_schema_request_to_the_embedded_server_is_schema_valid_without_step_down(embedded_server):
    from webagent.llm.endpoint import EndpointOptions, open_client

    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["pages", "reason"],
        "properties": {
            "pages": {
                "type": "array",
                "items": {"type": "integer", "minimum": 0, "maximum": 9},
                "minItems": 1,
                "maxItems": 3,
            },
            "reason": {"type": "string", "enum": ["budget", "design", "other"]},
        },
    }

    async def go():
        options = EndpointOptions(
            base_url=embedded_server.base_url, model=embedded_server.model, cache=False, concurrency=2
        )
        async with open_client(options) as client:
            reply = await client.complete(
                "Pages 0-9 of a meeting. Which pages mention the budget?",
                purpose="lookup",
                schema=schema,
                max_tokens=60,
            )
            return reply, client.backend.schema_dialect, client.usage.total

    reply, dialect, usage = asyncio.run(go())
    data = json.loads(reply.text)  # the whole reply is JSON, not JSON somewhere in prose
    assert set(data) == {"pages", "reason"} and data["reason"] in {"budget", "design", "other"}
    assert 1 <= len(data["pages"]) <= 3 and all(isinstance(p, int) and 0 <= p <= 9 for p in data["pages"])
    assert dialect == "json_schema" and usage.retries == 0 and usage.calls == 1
