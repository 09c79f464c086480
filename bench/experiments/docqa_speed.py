"""`webagent ask` end to end with the embedded model: seconds, and prompt and completion
tokens by purpose (pagination, gist, look-up, answer), one run per figure (issue 23).

    .venv/bin/python -m bench.experiments.docqa_speed --label after -- --single-pass --gist-model qwen2.5-coder-0.5b
    .venv/bin/python -m bench.experiments.docqa_speed --label before --threads 1          # the old thread choice
    .venv/bin/python -m bench.experiments.docqa_speed --qmsum 15 --label qmsum-10k -- --single-pass ...

Every run gets an empty cache (a fresh $WEBAGENT_HOME; the pulled models are shared through
$WEBAGENT_MODELS), so the memory is built from scratch; `--second` then asks a second
question about the same file in the same home, which must make no pagination or gist call.
`--qmsum N` asks the N-th meeting of QMSum val (written out as "Speaker: words" paragraphs,
as qa-eval reads it) its first query. The machine's load average is recorded before and
after each run. Rows are appended to ``--out``/runs.jsonl (default: today's folder for this
commit, bench/results/docqa_speed/DATE-COMMIT-ask/, with its meta.json).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.lib import ROOT, results_folder
from bench.lib.results_io import load_average, write_meta

DEMO_DOC = ROOT / "examples" / "qmsum_remote_control_meeting.txt"
DEMO_QUESTION = "What did the group think of safety design when discussing the design of remote control for children?"
SECOND_QUESTION = "Who presented the industrial design and what did they propose?"
QMSUM = ROOT.parent / "shared" / "data" / "qmsum" / "val.jsonl"
PURPOSES = ("pagination", "gist", "lookup", "answer")


def qmsum_meeting(n: int, folder: Path) -> tuple[Path, str]:
    rec = json.loads(QMSUM.read_text().splitlines()[n])
    paragraphs = [
        f"{t['speaker']}: {' '.join(t['content'].split())}" for t in rec["meeting_transcripts"] if t["content"].strip()
    ]
    path = folder / f"qmsum-val-{n}.txt"
    path.write_text("\n\n".join(paragraphs) + "\n")
    query = (rec["specific_query_list"] or rec["general_query_list"])[0]["query"]
    return path, query


def excerpt(doc: Path, words: int, folder: Path) -> Path:
    """The document's first paragraphs, up to `words` words."""
    kept, n = [], 0
    for paragraph in doc.read_text().split("\n\n"):
        if n + len(paragraph.split()) > words:
            break
        kept.append(paragraph)
        n += len(paragraph.split())
    path = folder / f"{doc.stem}-first-{n}-words.txt"
    path.write_text("\n\n".join(kept) + "\n")
    return path


def ask(doc: Path, question: str, home: Path, extra: list[str]) -> dict:
    env = {
        **os.environ,
        "WEBAGENT_HOME": str(home),
        "WEBAGENT_MODELS": os.environ.get("WEBAGENT_MODELS", str(Path.home() / ".cache" / "webagent" / "models")),
    }
    cmd = [sys.executable, "-m", "webagent.cli", "ask", str(doc), question, "--json", *extra]
    before, start = load_average(), time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    timing = {"seconds": round(seconds, 1), "load_before": before, "load_after": load_average()}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        return {"error": done.stderr.strip()[-500:], **timing}
    result = json.loads(lines[-1])
    by = result["usage"].get("by_purpose", {})
    return {
        **timing,
        "calls": result["usage"]["calls"],
        "prompt_tokens": result["usage"]["prompt_tokens"],
        "completion_tokens": result["usage"]["completion_tokens"],
        "by_purpose": {
            p: {k: by.get(p, {}).get(k, 0) for k in ("calls", "cached_calls", "prompt_tokens", "completion_tokens")}
            for p in PURPOSES
        },
        "num_pages": result["num_pages"],
        "document_words": result["document_words"],
        "pages_looked_up": result["pages_looked_up"],
        "memory_from_cache": result["memory_from_cache"],
        "pagination_fallbacks": result["pagination_fallbacks"],
        "gist_failures": result["gist_failures"],
        "answer": result["answer"],
        "model": result["model"],
        "gist_model": result.get("gist_model"),
        "progress": [line for line in done.stderr.splitlines() if line.startswith("…")][-12:],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True)
    parser.add_argument("--qmsum", type=int, help="ask the N-th QMSum val meeting instead of the demo's")
    parser.add_argument("--threads", type=int, help="passed to ask as --threads")
    parser.add_argument("--second", action="store_true", help="then a second question about the same file")
    parser.add_argument("--words", type=int, help="only the demo meeting's first paragraphs up to this many words")
    parser.add_argument("--out", type=Path, help="results folder (default: bench/results/docqa_speed/DATE-COMMIT-ask)")
    parser.add_argument("extra", nargs="*", help="more `webagent ask` options (after --)")
    args = parser.parse_args()
    extra = list(args.extra) + (["--threads", str(args.threads)] if args.threads else [])
    out = args.out or results_folder("docqa_speed", "ask")
    if not (out / "meta.json").exists():
        write_meta(out, note="each row keeps its label, options and load average before and after")
    with tempfile.TemporaryDirectory(prefix="docqa-speed-") as tmp:
        home = Path(tmp) / "home"
        doc, question = qmsum_meeting(args.qmsum, Path(tmp)) if args.qmsum is not None else (DEMO_DOC, DEMO_QUESTION)
        if args.words:
            doc = excerpt(doc, args.words, Path(tmp))
        rows = [
            {
                "label": args.label,
                "question_no": n,
                "doc": doc.name,
                "question": asked,
                "options": extra,
                **ask(doc, asked, home, extra),
            }
            for n, asked in enumerate([question, SECOND_QUESTION] if args.second else [question], 1)
        ]
    with open(out / "runs.jsonl", "a", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps({"time": time.strftime("%Y-%m-%d %H:%M:%S"), **row}, ensure_ascii=False) + "\n")
    for row in rows:
        if "error" in row:
            print(f"{row['label']} q{row['question_no']}: error after {row['seconds']} s: {row['error']}")
            continue
        parts = ", ".join(
            f"{p} {v['calls']} calls {v['prompt_tokens']:,}+{v['completion_tokens']:,}"
            for p, v in row["by_purpose"].items()
        )
        print(
            f"{row['label']} q{row['question_no']}: {row['seconds']:.0f} s ({row['document_words']:,} words, "
            f"{row['num_pages']} pages; load {row['load_before']} -> {row['load_after']}); "
            f"{row['prompt_tokens']:,} prompt + {row['completion_tokens']:,} completion tokens; {parts}; "
            f"memory from cache: {row['memory_from_cache']}\n  answer: {row['answer'][:300]}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
