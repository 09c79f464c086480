"""Quality of the document-QA speed options against the paper's two passes (issue 23), same model.

    .venv/bin/python -m bench.experiments.docqa_options                      # every config on both datasets
    .venv/bin/python -m bench.experiments.docqa_options --only quality       # one dataset
    .venv/bin/python -m bench.experiments.docqa_options --configs two-pass,single-pass

Each (dataset, config) is one `webagent qa-eval` run with `--method readagent-p` into
``--out``/<dataset>-<config>/ with an empty cache (a fresh $WEBAGENT_HOME;
the pulled models are shared), timed end to end. A finished run is not run again (delete its
folder to redo it). Datasets:

- quality: the shipped QuALITY example article (tests/fixtures/docqa/quality_dev_sample.jsonl,
  "The Girl in His Mind", 4,888 words, its 5 questions): accuracy.
- qmsum: QuALITY's long-meeting counterpart, QMSum val meeting 7 (5,835 words, its 10 queries,
  `--shard 7/35`): ROUGE-L, no LLM rater.

The verdict: an option is "no worse" when it loses at most one question's worth against the
two passes: QuALITY, at most one fewer correct answer; QMSum, a ROUGE-L sum over the questions
at most the two passes' best single question below theirs. Rows go to runs.jsonl (with the
command, commit and machine); the script exits non-zero when an option it measured is worse.
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
from bench.lib.results_io import git_commit, load_average, write_meta
from bench.lib.verdict import Targets

MODELS = os.environ.get("WEBAGENT_MODELS", str(Path.home() / ".cache" / "webagent" / "models"))
DATASETS = {
    "quality": ["--dataset", "quality", "--data", str(ROOT / "tests/fixtures/docqa/quality_dev_sample.jsonl")],
    "qmsum": [
        "--dataset",
        "qmsum",
        "--data",
        str(ROOT.parent / "shared/data/qmsum/val.jsonl"),
        "--shard",
        "7/35",
        "--limit",
        "10",
        "--no-rater",
    ],
}
CONFIGS = {
    "two-pass": [],
    "single-pass": ["--single-pass"],
    "single-pass-0.5b": ["--single-pass", "--gist-model", "qwen2.5-coder-0.5b"],
    "two-pass-0.5b": ["--gist-model", "qwen2.5-coder-0.5b"],
    "uniform-0.5b": ["--pagination", "uniform", "--gist-model", "qwen2.5-coder-0.5b"],
}


def machine() -> dict:
    return {"cores": os.cpu_count(), "load_avg": load_average()}


def run(folder: Path, dataset: str, config: str) -> dict:
    out = folder / f"{dataset}-{config}"
    report = out / "report.json"
    if report.exists():
        return json.loads((out / "run.json").read_text())
    cmd = [
        "webagent",
        "qa-eval",
        *DATASETS[dataset],
        "--method",
        "readagent-p",
        *CONFIGS[config],
        "--out",
        os.path.relpath(out, ROOT),
    ]
    before = machine()
    with tempfile.TemporaryDirectory(prefix="docqa-options-") as home:
        env = {**os.environ, "WEBAGENT_HOME": home, "WEBAGENT_MODELS": MODELS}
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "webagent.cli", *cmd[1:]], cwd=ROOT, env=env)
        seconds = time.perf_counter() - start
    if done.returncode or not report.exists():
        raise SystemExit(f"{dataset}-{config}: qa-eval exited {done.returncode} ({out})")
    data = json.loads(report.read_text())
    method = data["methods"]["readagent-p@5"]
    scores = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    per_question = [
        float(r["correct"]) if r.get("gold") is not None else r.get("rougeL")
        for r in scores
        if r.get("method", "").startswith("readagent-p")
    ]
    row = {
        "dataset": dataset,
        "config": config,
        "options": CONFIGS[config],
        "command": " ".join(cmd),
        "commit": (git_commit()[0] or "")[:7],
        "machine_before": before,
        "machine_after": machine(),
        "seconds": round(seconds, 1),
        "questions": method["questions"],
        "score": method.get("accuracy", method.get("rougeL")),
        "metric": "accuracy" if "accuracy" in method else "rougeL",
        "per_question": per_question,
        "memory_building": data["memory_building"],
        "prompt_tokens_per_question": method["prompt_tokens_per_question"],
        "completion_tokens_per_question": method["completion_tokens_per_question"],
        "failures": method["failures"],
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    (out / "run.json").write_text(json.dumps(row, indent=1) + "\n")
    with open(folder / "runs.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")
    return row


def as_points(row: dict) -> list[float]:
    """Per-question points: 1/0 for a correct option, ROUGE-L in [0, 1] for a summary."""
    return [float(p) for p in row["per_question"] if p is not None]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(DATASETS), action="append")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated, from: " + ", ".join(CONFIGS))
    parser.add_argument(
        "--out", type=Path, help="results folder, resumed (default: bench/results/docqa_options/DATE-COMMIT-options)"
    )
    args = parser.parse_args()
    configs = [c for c in args.configs.split(",") if c]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        raise SystemExit(f"unknown config {unknown[0]!r}; choose from {', '.join(CONFIGS)}")
    folder = (args.out or results_folder("docqa_options", "options")).resolve()
    if not (folder / "meta.json").exists():
        write_meta(folder, note="each run.json and runs.jsonl row keeps its qa-eval command, commit and load average")
    targets = Targets("docqa_options")
    for dataset in args.only or list(DATASETS):
        rows = {c: run(folder, dataset, c) for c in (["two-pass"] + [c for c in configs if c != "two-pass"])}
        base = rows["two-pass"]
        base_points = as_points(base)
        slack = 1.0 if base["metric"] == "accuracy" else max(base_points, default=0.0)
        for config, row in rows.items():
            print(
                f"{dataset} {config}: {row['metric']} {row['score']} over {row['questions']} questions, "
                f"{row['seconds']:.0f} s, {row['prompt_tokens_per_question']:.0f} prompt tokens/question"
            )
            if config == "two-pass":
                continue
            points = as_points(row)
            targets.check(
                f"{dataset}: {config} no worse than two passes (within one question)",
                f"{sum(points):.2f} vs {sum(base_points):.2f} points (slack {slack:.2f})",
                "the paper's two passes, same model",
                sum(points) >= sum(base_points) - slack - 1e-9,
            )
    return targets.report()


if __name__ == "__main__":
    sys.exit(main())
