"""report.md / report.json / token histogram from the rows of steps.jsonl files.

The table is shaped like the ReadAgent paper's Table 10: per split and method, the
compression rate, element accuracy, operation F1, step success rate and task success rate
(macro: per task, then over tasks), plus what each method cost.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from mind2web.methods import REGISTRY
from mind2web.metrics import StepResult, aggregate
from mind2web.rows import Manifest, PlannedTask, StepRow
from webagent.results_folder import figure

SPLIT_ORDER = ("test_task", "test_website", "test_domain")
PERCENTILES = (50, 75, 90, 95, 99, 100)
# A step row's fields that a StepResult takes (its split is the summary's).
SCORED = {"annotation_id", "action_uid", "element_correct", "op_f1", "step_success"}
# Step SR reported by others (cross-task / cross-website / cross-domain), for reference.
ANCHORS = {
    "ReadAgent-P, PaLM 2-L (Lee et al. 2024, Table 10)": (29.2, 31.1, 33.4),
    "MindAct, GPT-4 (Deng et al. 2023)": (36.2, 30.1, 26.4),
    "AWM, GPT-4 (Wang et al. 2024)": (45.1, 33.9, 35.5),
}


def _mean(xs: list[float]) -> float:
    return float(np.mean(xs)) if xs else 0.0


def summarise(rows: list[StepRow], manifest: Manifest) -> dict:
    """{split: {variant: metrics}} over the gold tasks of the manifest: a step with no row
    (never run, or cut by --limit) counts as a failure, so a task with a missing step is not
    a success, and it is counted in ``incomplete_tasks``. Every variant that has rows is
    reported on every split of the manifest."""
    gold_by_split: dict[str, list[PlannedTask]] = defaultdict(list)
    for task in manifest.tasks:
        gold_by_split[task.split].append(task)
    by_variant: dict[str, dict[tuple[str, str], StepRow]] = defaultdict(dict)
    for r in rows:
        by_variant[r.variant][(r.annotation_id, r.action_uid)] = r
    out: dict[str, dict[str, dict]] = {}
    for split, gold in sorted(gold_by_split.items()):
        out[split or "all"] = {}
        for variant, keyed in sorted(by_variant.items()):
            rs = [
                keyed[(t.annotation_id, uid)] for t in gold for uid in t.action_uids if (t.annotation_id, uid) in keyed
            ]
            results = [StepResult(split=split, **r.model_dump(include=SCORED)) for r in rs]
            m = aggregate(results, tasks=gold)
            m.update(
                {
                    "steps_run": len(rs),
                    "incomplete_tasks": sum(
                        1 for t in gold if any((t.annotation_id, uid) not in keyed for uid in t.action_uids)
                    ),
                    "compression_rate": _mean([r.compression_rate for r in rs]),
                    "lookups_per_step": _mean([len(r.lookups) for r in rs]),
                    "calls_per_step": _mean([r.calls for r in rs]),
                    "needed_calls_per_step": _mean([r.calls + r.cached_calls for r in rs]),
                    "cached_calls_per_step": _mean([r.cached_calls for r in rs]),
                    "prompt_tokens_per_step": _mean([r.prompt_tokens for r in rs]),
                    "completion_tokens_per_step": _mean([r.completion_tokens for r in rs]),
                    "needed_prompt_tokens_per_step": _mean([r.needed_prompt_tokens for r in rs]),
                    "needed_completion_tokens_per_step": _mean([r.needed_completion_tokens for r in rs]),
                    "failures": int(sum(r.failures for r in rs)),
                    "lookup_failures": int(sum(r.lookup_failures for r in rs)),
                    "endpoint_failures": int(sum(r.endpoint_failed for r in rs)),
                }
            )
            out[split or "all"][variant] = m
    return out


def _variant_key(name: str) -> tuple[int, int, str]:
    method, _, k = name.partition("@")
    names = REGISTRY.names()
    order = names.index(method) if method in names else len(names)
    return order, int(k) if k.isdigit() else 0, name


def _split_key(split: str) -> tuple[int, str]:
    return (SPLIT_ORDER.index(split) if split in SPLIT_ORDER else len(SPLIT_ORDER), split)


def token_stats(rows: list[StepRow]) -> dict:
    """Per step: words of the whole rendered page vs words of all its gists (paper Figure 6)."""
    seen_raw = {(r.annotation_id, r.action_uid): r.full_words for r in rows if r.full_words}
    seen_gist = {(r.annotation_id, r.action_uid): r.gist_memory_words for r in rows if r.gist_memory_words}
    return {"raw_html": list(seen_raw.values()), "gist_memory": list(seen_gist.values())}


def percentile_table(stats: dict) -> list[str]:
    head = "| | " + " | ".join("max" if p == 100 else f"p{p}" for p in PERCENTILES) + " | steps |"
    lines = [head, "|---" * (len(PERCENTILES) + 2) + "|"]
    for name, values in stats.items():
        if values:
            cells = " | ".join(f"{np.percentile(values, p):.0f}" for p in PERCENTILES)
            lines.append(f"| {name.replace('_', ' ')} (words) | {cells} | {len(values)} |")
    return lines


def plot_histogram(stats: dict, path: Path) -> bool:
    if not any(stats.values()):
        return False
    with figure(path, (7, 4), dpi=120) as ax:
        values = np.concatenate([v for v in stats.values() if v])
        # Page sizes span orders of magnitude on real sites: log bins then.
        log = values.min() > 0 and values.max() / values.min() > 20
        bins = np.geomspace(values.min(), values.max() + 1, 30) if log else np.histogram_bin_edges(values, bins=30)
        if log:
            ax.set_xscale("log")
        for name, vals in stats.items():
            if vals:
                ax.hist(vals, bins=bins.tolist(), alpha=0.6, label=f"{name.replace('_', ' ')} (n={len(vals)})")
        ax.set_xlabel("words per page (whitespace tokens)")
        ax.set_ylabel("steps")
        ax.set_title("Mind2Web pages: raw HTML vs gist memory")
        ax.legend()
    return True


def _previous_k_text(k) -> str:
    if k is None:
        return "?"
    if k == 0:
        return "none"
    return f"the last {k}, teacher-forced" + (" (MindAct's default)" if k == 5 else "")


PLAIN_TEXT = "plain (any allowed id with any operation; the benchmark's)"
TYPED_TEXT = (
    "typed (--typed-actions: CLICK on clickable or unclassified ids, TYPE on text fields, SELECT on "
    "selects with a value among their options)"
)
ACT_ON_TEXT = {"looked-up": "ids of the looked-up snippets only", "context": "any id in the prompt (gists included)"}


def _snippet_text(meta: dict) -> str:
    """auto is ours (budgeted); an integer depth is the paper's cut, which has no budget."""
    if meta.get("depth") == "auto":
        return f"snippets: auto depth with a {meta.get('budget_words')}-word budget (ours)"
    return f"snippets: the paper's cut at depth {meta.get('depth')} (no budget)"


def _header(meta: dict) -> list[str]:
    structured = meta.get("structured")
    return [
        "# Mind2Web evaluation",
        "",
        f"Model: `{meta.get('model')}` (endpoint `{meta.get('endpoint', meta.get('model'))}`); "
        f"data: `{meta.get('data')}`; {_snippet_text(meta)}; "
        f"context: {meta.get('context_tokens')} tokens.",
        f"Previous actions shown to the model: {_previous_k_text(meta.get('previous_k'))}. "
        f"readagent-p acts on: {ACT_ON_TEXT.get(meta.get('act_on') or '', meta.get('act_on'))}. "
        f"Structured replies: {'on' if structured else 'off' if structured is not None else '?'}.",
        f"Action space: {TYPED_TEXT if meta.get('typed_actions') else PLAIN_TEXT}.",
        "",
    ]


def write_report(rows: list[StepRow], manifest: Manifest, out: Path, meta: dict) -> dict:
    summary = summarise(rows, manifest)
    stats = token_stats(rows)
    png = out / "tokens_histogram.png"
    has_png = plot_histogram(stats, png)
    splits = sorted(summary, key=_split_key)
    lines = _header(meta)
    header = "| Method | " + " | ".join(f"{s}: CR | Ele. Acc | Op. F1 | Step SR | SR" for s in splits) + " |"
    lines += [
        "Macro averages in percent (per task, then over tasks), as the paper reports, over every planned "
        "step: a step never run counts as wrong.",
        "",
        header,
        "|---" * (1 + 5 * len(splits)) + "|",
    ]
    variants = sorted({v for s in splits for v in summary[s]}, key=_variant_key)
    for v in variants:
        cells = []
        for s in splits:
            m = summary[s].get(v)
            cells.append(
                " | ".join(f"{m[k]:.1f}" for k in ("compression_rate", "element_acc", "op_f1", "step_sr", "task_sr"))
                if m
                else " | ".join(["-"] * 5)
            )
        lines.append(f"| {v} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Cost and counts per method. Tokens per step: *needed* by the method (cached replies "
        "included), *spent* in this run (calls that reached the model).",
        "",
        "| Split | Method | tasks | steps run / planned | incomplete tasks | micro Step SR | look-ups/step | "
        "calls/step | cached/step | needed prompt+completion tok/step | spent prompt+completion tok/step | "
        "failures | look-up failures | endpoint failures |",
        "|---" * 14 + "|",
    ]
    for s in splits:
        for v, m in sorted(summary[s].items(), key=lambda item: _variant_key(item[0])):
            lines.append(
                f"| {s} | {v} | {m['num_tasks']} | {m['steps_run']} / {m['num_steps']} | {m['incomplete_tasks']} | "
                f"{m['micro_step_sr']:.1f} | {m['lookups_per_step']:.2f} | {m['calls_per_step']:.2f} | "
                f"{m['cached_calls_per_step']:.2f} | "
                f"{m['needed_prompt_tokens_per_step']:.0f} + {m['needed_completion_tokens_per_step']:.0f} | "
                f"{m['prompt_tokens_per_step']:.0f} + {m['completion_tokens_per_step']:.0f} | {m['failures']} | "
                f"{m['lookup_failures']} | {m['endpoint_failures']} |"
            )
    lines += ["", "Reference Step SR from the literature (cross-task / cross-website / cross-domain):", ""]
    lines += [f"- {name}: {a} / {b} / {c}" for name, (a, b, c) in ANCHORS.items()]
    lines += ["", "## Page sizes: raw HTML vs gist memory (cf. the paper's Figure 6)", ""]
    lines += percentile_table(stats)
    if has_png:
        lines += ["", f"![histogram]({png.name})"]
    lines += [
        "",
        "Failures count replies still unusable after one re-ask (no pages, an id not on the page) "
        "and calls that failed; such a step predicts nothing and is scored as wrong. Endpoint failures "
        "(the server was unreachable through every retry) are re-run when the same command is run again.",
        "",
    ]
    (out / "report.md").write_text("\n".join(lines), encoding="utf-8")
    report = {
        "meta": meta,
        "results": summary,
        "page_words": {k: {f"p{p}": float(np.percentile(v, p)) for p in PERCENTILES} for k, v in stats.items() if v},
    }
    (out / "report.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report


SUMMARY_COLUMNS = (  # (heading, metric key, format)
    ("Ele.Acc", "element_acc", "{:.1f}"),
    ("Op F1", "op_f1", "{:.1f}"),
    ("Step SR", "step_sr", "{:.1f}"),
    ("SR", "task_sr", "{:.1f}"),
    ("CR", "compression_rate", "{:.1f}"),
    ("calls/step", "needed_calls_per_step", "{:.2f}"),
    ("failures", "failures", "{}"),
    ("look-up fail.", "lookup_failures", "{}"),
    ("endpoint fail.", "endpoint_failures", "{}"),
    ("incomplete", "incomplete_tasks", "{}"),
)


def summary_lines(summary: dict) -> list[str]:
    """A compact per-split table for the terminal: one aligned line per method. Calls per
    step are those the method needed (from the model or the cache), not what this run paid."""
    lines: list[str] = []
    for split in sorted(summary, key=_split_key):
        methods = sorted(summary[split], key=_variant_key)
        if not methods:
            continue
        first = summary[split][methods[0]]
        lines.append(f"{split}: {first['num_tasks']} tasks, {first['num_steps']} steps (macro %, as the paper)")
        table = [["method", *(h for h, _, _ in SUMMARY_COLUMNS)]]
        table += [[v, *(fmt.format(summary[split][v][key]) for _, key, fmt in SUMMARY_COLUMNS)] for v in methods]
        widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
        for row in table:
            lines.append(
                "  "
                + "  ".join(
                    cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))
                ).rstrip()
            )
    return lines
