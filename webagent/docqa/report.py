"""report.md (shaped like the paper's Tables 1–3), report.json, and a PNG of accuracy
(or LR-1) against compression rate, one point per method."""

from __future__ import annotations

import json
from pathlib import Path

from webagent.docqa.metrics import summarize_method
from webagent.docqa.runner import CONFIG_FILE, DOCS_FILE, RESULTS_FILE, read_jsonl
from webagent.results_folder import figure

BUILD_COUNTS = ("calls", "prompt_words", "reply_words", "failures", "input_failures")  # summed over documents


def _fmt(value, suffix: str = "", digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}{suffix}"


def build_report(out: Path) -> dict:
    config = json.loads((out / CONFIG_FILE).read_text(encoding="utf-8"))
    rows = read_jsonl(out / RESULTS_FILE)
    docs = {d["doc_id"]: d for d in read_jsonl(out / DOCS_FILE)}  # the last write of a document wins
    methods = {m: summarize_method(rs) for m in config["methods"] if (rs := [r for r in rows if r["method"] == m])}
    questions = len({r["qid"] for r in rows})
    build: dict[str, dict] = {}
    for d in docs.values():
        for kind, b in sorted(d["builds"].items()):  # by name: documents finish their builds in any order
            agg = build.setdefault(kind, dict.fromkeys(("documents", *BUILD_COUNTS, "from_cache"), 0))
            agg["documents"] += 1
            agg["from_cache"] += bool(b.get("from_cache"))
            for k in BUILD_COUNTS:
                agg[k] += b.get(k, 0)
    for agg in build.values():
        agg["words_per_question"] = round((agg["prompt_words"] + agg["reply_words"]) / max(1, questions), 1)
    return {
        "dataset": config["dataset"],
        "model": config["model"],
        "documents": len({r["doc_id"] for r in rows}),
        "documents_finished": len(docs),
        "questions": questions,
        "methods": methods,
        "memory_building": build,
        "config": config,
    }


def render_markdown(report: dict) -> str:
    mc = report["dataset"] == "quality"
    lines = [
        f"# qa-eval: {report['dataset']} — {report['model']}",
        "",
        f"{report['documents']} documents, {report['questions']} questions. CR is the compression rate "
        "(100 × (1 − longest in-context words / document words)); # LU the pages looked up or retrieved.",
        "",
    ]
    if mc:
        lines += [
            "| Method | scored | CR (# LU) | Accuracy | Accuracy (difficult) | unparsed | calls/q | words/q | failures |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
    else:
        lines += [
            "| Method | scored | CR (# LU) | LR-1 | LR-2 | R-1 | R-2 | R-L | Resp. length | calls/q | words/q | failures |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
    for name, m in report["methods"].items():
        cr = f"{_fmt(m['compression_rate'], '%')} ({_fmt(m['lookups'])})"
        words = (
            None
            if m["prompt_words_per_question"] is None
            else m["prompt_words_per_question"] + (m["reply_words_per_question"] or 0)
        )
        cost = f"{_fmt(m['calls_per_question'], digits=1)} | {_fmt(words, digits=0)}"
        fails = f"{m['failures']} ({m['questions_with_failures']} q)"
        extra = [
            f"{m[k]} {label}"
            for k, label in (
                ("cut_to_context", "cut to the context"),
                ("navigation_failures", "navigation failures"),
                ("reverts", "reverts"),
                ("refinement_cap_hit", "at the refinement cap"),
            )
            if m.get(k)
        ]
        fails += f" {'; '.join(extra)}" if extra else ""
        scored = f"{m.get('scored', 0)} of {m['questions']}"
        if mc:
            lines.append(
                f"| {name} | {scored} | {cr} | {_fmt(m.get('accuracy'), '%')} | "
                f"{_fmt(m.get('accuracy_difficult'), '%')} ({m.get('difficult_questions', 0)} q) | "
                f"{m.get('unparsed_options', 0)} | {cost} | {fails} |"
            )
        else:
            rater = f" ({m['rater_failures']} rater failures)" if m.get("rater_failures") else ""
            lines.append(
                f"| {name} | {scored} | {cr} | {_fmt(m.get('lr1'), '%')}{rater} | {_fmt(m.get('lr2'), '%')} | "
                f"{_fmt(m.get('rouge1'))} | {_fmt(m.get('rouge2'))} | {_fmt(m.get('rougeL'))} | "
                f"{_fmt(m['response_words'], digits=1)} | {cost} | {fails} |"
            )
    lines += [
        "",
        "scored: the questions in the method's scores (LR-1/LR-2 over the rated ones; a question "
        "whose ratings all failed is left out and named under rater failures; an unparsed option counts "
        "as wrong). calls/q and words/q (prompt + reply words the model processed) are each question's own cost "
        "(look-ups, navigation, answer; raters excluded), whether served by the model or the cache. Failures: replies still unusable after one re-ask, "
        "failed calls, failed navigations.",
        "",
        "## One-time memory building (per document, shared by its questions and methods)",
        "",
        f"{report['documents_finished']} of {report['documents']} documents finished (a document's build "
        "cost is written when all its questions are done).",
        "",
        "| artefact | documents | from cache | calls | words | words per question (amortised) | failures |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind, b in report["memory_building"].items():
        inherited = f" (+{b['input_failures']} in what it was built on)" if b.get("input_failures") else ""
        lines.append(
            f"| {kind} | {b['documents']} | {b['from_cache']} | {b['calls']} | "
            f"{b['prompt_words'] + b['reply_words']} | {b['words_per_question']} | {b['failures']}{inherited} |"
        )
    return "\n".join(lines) + "\n"


def plot(report: dict, path: Path) -> None:
    key, label = ("accuracy", "accuracy (%)") if report["dataset"] == "quality" else ("lr1", "LR-1 (%)")
    with figure(path, (6, 4.5), dpi=120) as ax:
        for name, m in report["methods"].items():
            if m.get(key) is None or m.get("compression_rate") is None:
                continue
            ax.scatter(m["compression_rate"], m[key])
            ax.annotate(name, (m["compression_rate"], m[key]), fontsize=8, xytext=(3, 3), textcoords="offset points")
        ax.set_xlabel("compression rate (%)")
        ax.set_ylabel(label)
        ax.set_title(f"{report['dataset']}: {label} vs compression ({report['model']})", fontsize=9)
        ax.grid(alpha=0.3)


def write_report(out: Path) -> dict:
    report = build_report(out)
    (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    (out / "report.md").write_text(render_markdown(report), encoding="utf-8")
    plot(report, out / "accuracy_vs_compression.png")
    return report
