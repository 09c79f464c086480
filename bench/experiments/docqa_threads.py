"""Threads for the embedded server, measured: prompt reading and decoding speed with 1 and 2
compute threads, on the machine as it is (quiet or not: the load average says) and beside a busy process (issue 23).

    .venv/bin/python -m bench.experiments.docqa_threads                       # default model, 1 and 2 threads, quiet and busy
    .venv/bin/python -m bench.experiments.docqa_threads --embedded qwen2.5-coder-0.5b --repeats 3

For each setting the embedded server (webagent.llm.local.LocalServer) is started with
`--threads T --threads-batch T` and sent the same prompt (a ~1,000-token gist prompt made
of the shipped meeting, a fresh prefix each time so the prompt cache never helps) asking
for a fixed number of tokens (`ignore_eos`). llama.cpp's own `timings` give prompt tokens
per second (n_threads_batch) and decoded tokens per second (n_threads). "busy" runs a
CPU-bound Python loop (one core's worth of work: what another job on a laptop does) for
the duration. `uptime`'s load average is recorded next to every figure. Results go to
``--out``/threads.json (default: bench/results/docqa_threads/DATE-COMMIT-threads-TIME/, with
its meta.json; rows.jsonl holds each row as it comes until then) and a Markdown table on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from bench.lib import ROOT, results_folder
from bench.lib.results_io import load_average, write_meta
from webagent.llm.local import LocalServer
from webagent.llm.registry import ensure
from webagent.prompts import render_prompt

DOC = ROOT / "examples" / "qmsum_remote_control_meeting.txt"


def prompt(words: int, salt: int) -> str:
    text = " ".join(DOC.read_text().split()[:words])
    return render_prompt("gist", page_text=f"(reading {salt})\n{text}")


def call(server: LocalServer, text: str, n_predict: int) -> dict:
    body = {
        "model": server.model,
        "messages": [{"role": "user", "content": text}],
        "max_tokens": n_predict,
        "temperature": 0,
        "ignore_eos": True,
        "cache_prompt": False,
    }
    req = urllib.request.Request(
        server.base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    start = time.perf_counter()
    with urllib.request.urlopen(req, timeout=900) as resp:
        reply = json.loads(resp.read())
    t = reply.get("timings", {})
    return {
        "wall_s": round(time.perf_counter() - start, 2),
        "prompt_tokens": t.get("prompt_n"),
        "prompt_tps": round(t.get("prompt_per_second", 0.0), 2),
        "decoded": t.get("predicted_n"),
        "decode_tps": round(t.get("predicted_per_second", 0.0), 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedded", default=None, help="registry model (default: the registry's default)")
    parser.add_argument("--threads", default="1,2", help="thread counts to try (both n_threads and n_threads_batch)")
    parser.add_argument("--pairs", default="", help="extra decode:batch pairs, e.g. 1:2")
    parser.add_argument(
        "--conditions",
        default="as-is,busy",
        help="as-is: the machine as it is (quiet or not: its load average is recorded); "
        "busy: plus one CPU-bound process",
    )
    parser.add_argument("--words", type=int, default=700, help="document words in the prompt (~1,000 tokens)")
    parser.add_argument("--n-predict", type=int, default=48)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--out", type=Path, help="results folder (default: a new one under bench/results/docqa_threads)"
    )
    args = parser.parse_args()
    gguf = ensure(args.embedded)
    settings = [(int(t), int(t)) for t in args.threads.split(",")]
    for pair in filter(None, args.pairs.split(",")):
        decode, batch = pair.split(":")
        settings.append((int(decode), int(batch)))
    rows = []
    salt = int(time.time())
    out = args.out or results_folder("docqa_threads", "threads-" + time.strftime("%H%M%S"))
    write_meta(out)
    for condition in args.conditions.split(","):
        for decode, batch in settings:
            hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if condition == "busy" else None
            try:
                with LocalServer(gguf, n_ctx=4096, slots=1, threads=decode, threads_batch=batch) as server:
                    call(server, prompt(50, salt), 4)  # warm-up: weights paged in
                    for r in range(args.repeats):
                        salt += 1
                        before = load_average()
                        m = call(server, prompt(args.words, salt), args.n_predict)
                        row = {
                            "condition": condition,
                            "n_threads": decode,
                            "n_threads_batch": batch,
                            "repeat": r,
                            "load_before": before,
                            "load_after": load_average(),
                            **m,
                        }
                        rows.append(row)
                        print(json.dumps(row), flush=True)
                        with open(out / "rows.jsonl", "a") as f:  # every row as it comes
                            f.write(json.dumps({"model": gguf.name, **row}) + "\n")
            finally:
                if hog is not None:
                    hog.terminate()
                    hog.wait()
    meta = {
        "model": gguf.name,
        "cpus": os.cpu_count(),
        "words": args.words,
        "n_predict": args.n_predict,
        "uptime": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
    }
    (out / "threads.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    (out / "rows.jsonl").unlink(missing_ok=True)  # threads.json holds them all now
    print(f"\nmodel {gguf.name}; {args.words} document words, {args.n_predict} decoded tokens; wrote {out}\n")
    print(
        "| condition | n_threads | n_threads_batch | prompt tok/s (median) | decode tok/s (median) | wall s | load avg (1/5/15 min) |"
    )
    print("|---|---|---|---|---|---|---|")
    keys = sorted(
        {(r["condition"], r["n_threads"], r["n_threads_batch"]) for r in rows},
        key=lambda k: (args.conditions.split(",").index(k[0]), k[1], k[2]),
    )
    for key in keys:
        part = [r for r in rows if (r["condition"], r["n_threads"], r["n_threads_batch"]) == key]
        print(
            f"| {key[0]} | {key[1]} | {key[2]} | {statistics.median(r['prompt_tps'] for r in part):.1f} | "
            f"{statistics.median(r['decode_tps'] for r in part):.1f} | "
            f"{statistics.median(r['wall_s'] for r in part):.1f} | {part[-1]['load_after']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
