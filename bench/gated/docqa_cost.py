"""Cost of each document-QA method, the paper's section 3.3 accounting, on QMSum val.

A fake model with a fixed latency and fixed-length replies answers every call (valid
replies for every purpose, so every method runs its full control flow). For each method:
model calls and words processed (prompt + reply) per question, and the one-time
memory-building cost (pagination, gists, trees, key-value stores) amortised over the
document's questions. Targets, from section 3.3, checked in this one run:

  pagination words / document words  <= max_words / min_words   (the paper's bound)
  gisting words / document words     <= 1.25                    (one pass plus the prompt)
  readagent-p look-up + answer words per question < document words (reads gists, not the text)

    .venv/bin/python -m bench.gated.docqa_cost [--data ../shared/data/qmsum/val.jsonl] [--docs N]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
from pathlib import Path

from bench.lib import ROOT
from bench.lib.verdict import Targets
from webagent.docqa.data import load
from webagent.docqa.methods import parse_methods
from webagent.docqa.options import QAOptions
from webagent.docqa.runner import make_config, read_jsonl, run_eval, select
from webagent.llm.client import LLMClient
from webagent.llm.testing import FunctionBackend

REPLY_WORDS = 40
LATENCY_S = 0.002
METHODS = "readagent-p@5,readagent-s@5,gistmem,full,truncate-first,truncate-last,bm25@3,memwalker,summary-tree,kv-memory,kv-memory-rolling"
# What each method builds once per document (and shares).
BUILDS = {
    "readagent-p": ("pages", "gists"),
    "readagent-s": ("pages", "gists"),
    "gistmem": ("pages", "gists"),
    "bm25": ("pages",),
    "memwalker": ("pages", "gists", "memwalker-tree"),
    "summary-tree": ("pages", "summary-tree"),
    "kv-memory": ("pages", "kv-memory"),
    "kv-memory-rolling": ("pages", "kv-memory-rolling"),
}
FILLER = " ".join(f"word{i}" for i in range(REPLY_WORDS))


def _find(pattern: str, text: str) -> str:
    """The first group of ``pattern`` in a prompt this fake knows contains it."""
    found = re.search(pattern, text)
    assert found is not None, f"the prompt no longer holds {pattern!r}"
    return found.group(1)


def fixed_reply(messages: list[dict], params: dict, purpose: str) -> str:
    text = messages[-1]["content"]
    if purpose == "pagination":
        labels = [int(n) for n in re.findall(r"⟨(\d+)⟩", text.split("Passage:", 1)[1])]
        return f"Break point: ⟨{max(labels)}⟩\nBecause {FILLER}"
    if purpose == "lookup":
        if "SINGLE page" in text:  # ReadAgent-S: two pages, then STOP
            read = _find(r"DO NOT ask to read them again\): (.*)", text)
            return "STOP" if read.count(",") >= 1 else f"Page {1 if read.strip() == '0' else 0}"
        return "I want to look up Page [0, 1] to check."
    if purpose == "memwalker-triage":
        return f"Reasoning: {FILLER}\nAction: 0"
    if purpose == "memwalker-leaf":
        return f"Reasoning: yes\nAction: -2\nAnswer: {FILLER}"
    if purpose == "summary-tree-cut":  # the first document that is not a leaf
        eligible = re.findall(r"^Document (\d+):$", text, re.MULTILINE)
        return f"{FILLER} INSUFFICIENT DETAIL {eligible[0] if eligible else 1}"
    if purpose == "kv-read":
        chunk = _find(r"Input: \((\d+)/", text)
        return "[EOQ]" if "#1:" in text else f"[write] (chunk-{chunk}) {FILLER}"
    return FILLER  # gists, summaries, answers


class SlowBackend(FunctionBackend):
    async def chat(self, messages, params, purpose=""):
        await asyncio.sleep(LATENCY_S)
        return await super().chat(messages, params, purpose)


async def measure(data: str, docs: int | None) -> dict:
    loaded = load("qmsum", data)
    documents = loaded.documents[:docs] if docs else loaded.documents
    settings = QAOptions(min_words=280, max_words=600)
    variants = parse_methods(METHODS)
    client = LLMClient(
        SlowBackend(fixed_reply, name="fake:fixed", record=False), cache=None, concurrency=16, structured=False
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        config = make_config("qmsum", data, variants, client.model_name, settings)
        await run_eval(
            client,
            select(documents, None, (0, 1)),
            variants,
            out,
            config,
            rate=False,
            doc_concurrency=4,
        )
        rows, doc_rows = read_jsonl(out / "results.jsonl"), read_jsonl(out / "documents.jsonl")
    questions = sum(len(d.questions) for d in documents)
    doc_words = sum(d.words for d in documents)
    build_words = {
        k: sum(
            d["builds"].get(k, {}).get("prompt_words", 0) + d["builds"].get(k, {}).get("reply_words", 0)
            for d in doc_rows
        )
        for k in ("pages", "gists", "memwalker-tree", "summary-tree", "kv-memory", "kv-memory-rolling")
    }
    build_calls = {k: sum(d["builds"].get(k, {}).get("calls", 0) for d in doc_rows) for k in build_words}
    table = {}
    for v in variants:
        mine = [r for r in rows if r["method"] == v.name]
        own_words = sum(r["prompt_words"] + r["reply_words"] for r in mine) / len(mine)
        own_calls = sum(r["calls"] for r in mine) / len(mine)
        builds = BUILDS.get(v.method, ())
        table[v.name] = {
            "calls_per_q": own_calls,
            "words_per_q": own_words,
            "build_calls_per_q": sum(build_calls[b] for b in builds) / questions,
            "build_words_per_q": sum(build_words[b] for b in builds) / questions,
            "failures": sum(r["failures"] for r in mine),
        }
    return {
        "documents": len(documents),
        "questions": questions,
        "doc_words": doc_words,
        "table": table,
        "pagination_ratio": build_words["pages"] / doc_words,
        "gisting_ratio": build_words["gists"] / doc_words,
        "words_per_doc": doc_words / len(documents),
        "max_over_min": settings.max_words / settings.min_words,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/qmsum/val.jsonl"))
    ap.add_argument("--docs", type=int, help="only the first N meetings")
    args = ap.parse_args()
    if not Path(args.data).is_file():
        print(f"error: {args.data} not found (pass --data PATH to QMSum val.jsonl)", file=sys.stderr)
        return 2
    m = asyncio.run(measure(args.data, args.docs))
    print(
        f"QMSum val: {m['documents']} meetings, {m['questions']} questions, {m['words_per_doc']:.0f} words per meeting; "
        f"fake model: {LATENCY_S * 1000:.0f} ms, {REPLY_WORDS}-word replies\n"
    )
    print(
        "| method | calls/q | words/q | build calls/q (amortised) | build words/q (amortised) | total words/q | failures |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, t in m["table"].items():
        print(
            f"| {name} | {t['calls_per_q']:.1f} | {t['words_per_q']:.0f} | {t['build_calls_per_q']:.1f} | "
            f"{t['build_words_per_q']:.0f} | {t['words_per_q'] + t['build_words_per_q']:.0f} | {t['failures']} |"
        )
    rp = m["table"]["readagent-p@5"]["words_per_q"]
    full = m["table"]["full"]["words_per_q"]
    targets = Targets("docqa_cost")
    targets.check(
        f"pagination words / document words <= max_words / min_words = {m['max_over_min']:.2f}",
        f"{m['pagination_ratio']:.2f}",
        "the paper's bound (section 3.3)",
        m["pagination_ratio"] <= m["max_over_min"],
    )
    targets.check(
        "gisting words / document words <= 1.25",
        f"{m['gisting_ratio']:.2f}",
        "floor: one pass over the text (1.00) plus the prompt",
        m["gisting_ratio"] <= 1.25,
    )
    targets.check(
        "readagent-p look-up + answer words per question < document words",
        f"{rp:.0f} words ({rp / m['words_per_doc']:.2f}x)",
        f"the document, {m['words_per_doc']:.0f} words; full text reads {full:.0f} per question",
        rp < m["words_per_doc"],
    )
    return targets.report()


if __name__ == "__main__":
    sys.exit(main())
