"""Benchmark: the embedded model server, new (llama.cpp's own server via xllamacpp: parallel
slots, continuous batching, prompt cache) against old (llama-cpp-python's server: one
request at a time), in one run, on the same fixed batch of real prompts:

- gist:    6 pages of the shipped QMSum meeting (examples/qmsum_remote_control_meeting.txt)
- look-up: 8 questions over one gist memory of that meeting (a long shared prefix)
- action:  the steps of a Mind2Web fixture task (tests/fixtures/mind2web), page + task

The three kinds run one after another, as in a ReadAgent run (gist, then look up, then
act), each kind concurrently.

The new server gets the slots the embedded model gets on this machine (``embedded_slots``: one
per two cores). Both get the same GGUF (SmolLM2-135M), the same context per request, the same client at
concurrency 4 (no reply cache), greedy decoding, the same compute threads. Reported: wall time, completion and total
(prompt + completion) tokens per second, and the prompt-cache hit ratio (prompt tokens
served from the server's cache / all prompt tokens; the old server does not report it).
Targets: new/old total tokens/s >= 1.0 and a new-server cache-hit ratio > 0. Exits 1 when
one is missed. The old server is the `bench-old-server` extra; without it only the new
server runs (`make bench-server` installs it in a venv of its own, .venv-bench-server).
Run: make bench-server
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from bench.lib import ROOT
from bench.lib.verdict import Targets
from webagent.llm.client import LLMClient
from webagent.llm.llama_server import server_threads
from webagent.llm.local import LocalServer, die_with_parent, embedded_slots, free_port
from webagent.llm.openai_backend import OpenAIBackend
from webagent.llm.registry import ensure
from webagent.prompts import render_prompt

MEETING = ROOT / "examples" / "qmsum_remote_control_meeting.txt"
TASK_FILE = ROOT / "tests" / "fixtures" / "mind2web" / "test_website" / "test_website_0.json"
CONCURRENCY, N_CTX, PAGE_WORDS = 4, 4096, 350
QUESTIONS = [
    "What did the group think of safety design for the children's remote control?",
    "Who presented the budget, and what did it cover?",
    "What did they decide about the buttons?",
    "Which materials were considered for the case?",
    "What was said about the target age group?",
    "Did anyone mention batteries or power?",
    "How should the remote control look?",
    "What did the marketing expert report?",
]
LOOKUP_SCHEMA = {
    "type": "object",
    "properties": {"pages": {"type": "array", "items": {"type": "integer"}}},
    "required": ["pages"],
}
ACTION_SCHEMA = {
    "type": "object",
    "properties": {
        "element_id": {"type": "string"},
        "operation": {"type": "string", "enum": ["CLICK", "TYPE", "SELECT"]},
        "value": {"type": "string"},
    },
    "required": ["element_id", "operation", "value"],
}


def build_batch() -> list[dict]:
    """(purpose, prompt, schema, max_tokens) for every request, in a fixed order."""
    words = MEETING.read_text(encoding="utf-8").split()
    pages = [" ".join(words[i : i + PAGE_WORDS]) for i in range(0, len(words), PAGE_WORDS)][:6]
    batch: list[dict] = [
        {"purpose": "gist", "prompt": render_prompt("gist", page_text=p), "schema": None, "max_tokens": 96}
        for p in pages
    ]
    memory = "\n".join(f"<Page {i}>\n{' '.join(p.split()[:60])}" for i, p in enumerate(pages))
    batch += [
        {
            "purpose": "lookup",
            "schema": LOOKUP_SCHEMA,
            "max_tokens": 24,
            "prompt": render_prompt(
                "lookup_parallel", memory=memory, question=q, max_pages=2, last_index=len(pages) - 1
            ),
        }
        for q in QUESTIONS
    ]
    task = json.loads(TASK_FILE.read_text())[0]
    for i, action in enumerate(task["actions"]):
        context = re.sub(r"\s+", " ", action["cleaned_html"])[:6000]
        previous = "\n".join(task["action_reprs"][:i]) or "None"
        batch.append(
            {
                "purpose": "action",
                "schema": ACTION_SCHEMA,
                "max_tokens": 48,
                "prompt": render_prompt(
                    "web_action",
                    context=context,
                    task=task["confirmed_task"],
                    previous_actions=previous,
                    target_hint="",
                ),
            }
        )
    return batch


def metrics(server_url: str) -> dict[str, float]:
    try:
        with urllib.request.urlopen(server_url + "/metrics", timeout=5) as resp:
            text = resp.read().decode()
    except OSError:
        return {}
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^llamacpp:(\w+) ([0-9.e+-]+)$", text, re.M)}


KINDS = ("gist", "lookup", "action")


async def run_batch(base_url: str, model: str, batch: list[dict], *, dialect: str) -> tuple[float, LLMClient, dict]:
    client = LLMClient(
        OpenAIBackend(base_url, model, None, timeout_s=900, schema_dialect=dialect),
        concurrency=CONCURRENCY,
        max_retries=0,
    )
    start, phases = time.perf_counter(), {}
    for kind in KINDS:
        t0 = time.perf_counter()
        await asyncio.gather(
            *(
                client.complete(r["prompt"], purpose=r["purpose"], schema=r["schema"], max_tokens=r["max_tokens"])
                for r in batch
                if r["purpose"] == kind
            )
        )
        phases[kind] = time.perf_counter() - t0
    wall = time.perf_counter() - start
    await client.close()
    return wall, client, phases


class OldServer:
    """llama-cpp-python's server, started as the embedded model was before."""

    def __init__(self, gguf: Path):
        self.gguf, self.port = gguf, free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> OldServer:
        cmd = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.gguf),
            "--model_alias",
            "old",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(N_CTX),
            "--verbose",
            "False",
            # the same compute threads as the new server: the comparison is of the servers
            "--n_threads",
            str(server_threads()[0]),
            "--n_threads_batch",
            str(server_threads()[1]),
        ]
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent
        )
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"old server exited with code {self.proc.returncode}")
            try:
                urllib.request.urlopen(self.base_url + "/models", timeout=2)
                return self
            except OSError:
                time.sleep(0.3)
        raise SystemExit("old server did not start")

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(30)


def row(name: str, wall: float, client: LLMClient, hit_ratio: float | None, phases: dict) -> tuple[float, float]:
    t = client.usage.total
    completion_tps = t.completion_tokens / wall
    total_tps = (t.prompt_tokens + t.completion_tokens) / wall
    hits = "n/a" if hit_ratio is None else f"{hit_ratio:.1%}"
    print(
        f"{name:<5}{wall:>9.1f}{t.calls:>7}{t.prompt_tokens:>9}{t.completion_tokens:>8}"
        f"{completion_tps:>11.1f}{total_tps:>10.1f}{hits:>11}" + "".join(f"{phases[k]:>9.1f}" for k in KINDS)
    )
    return completion_tps, total_tps


def main() -> None:
    gguf = ensure()  # the registry's default model, pulled on first use
    batch = build_batch()
    kinds = {k: sum(r["purpose"] == k for r in batch) for k in ("gist", "lookup", "action")}
    print(
        f"{len(batch)} requests ({', '.join(f'{n} {k}' for k, n in kinds.items())}), {gguf.name}, "
        f"concurrency {CONCURRENCY}, n_ctx {N_CTX} per request"
    )
    with LocalServer(gguf, n_ctx=N_CTX, slots=embedded_slots(CONCURRENCY)) as server:
        print(f"new server: {server.slots} slot(s), as the embedded model gets them here (embedded_slots)")
        new_wall, new, new_phases = asyncio.run(run_batch(server.base_url, server.model, batch, dialect="json_schema"))
        m = metrics(server.server_url)
    cached, processed = m.get("prompt_tokens_cached_total", 0.0), m.get("prompt_tokens_total", 0.0)
    new_hits = cached / (cached + processed) if cached + processed else 0.0
    old = None
    if importlib.util.find_spec("llama_cpp") is not None:
        with OldServer(gguf) as old_server:
            old_wall, old, old_phases = asyncio.run(run_batch(old_server.base_url, "old", batch, dialect="json_object"))
    print(
        f"{'':<5}{'wall s':>9}{'calls':>7}{'prompt':>9}{'compl.':>8}{'compl. t/s':>11}{'total t/s':>10}{'cache hits':>11}"
        + "".join(f"{k + ' s':>9}" for k in KINDS)
    )
    _, new_tps = row("new", new_wall, new, new_hits, new_phases)
    targets = Targets("local server")
    targets.check(
        "the new server's prompt cache hits (> 0)", f"{new_hits:.1%} of prompt tokens", "none cached", new_hits > 0
    )
    if old is None:
        print("old server (llama-cpp-python) not installed: pip install -e '.[bench-old-server]' to compare")
    else:
        _, old_tps = row("old", old_wall, old, None, old_phases)
        ratio = new_tps / old_tps
        figure = f"{ratio:.2f}x the tokens/s, wall old/new {old_wall / new_wall:.2f}x"
        targets.check(
            "the new server at least as fast (>= 1.0x)", figure, "the old server (llama-cpp-python)", ratio >= 1.0
        )
    sys.exit(targets.report())


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # only --help: no options
    main()
