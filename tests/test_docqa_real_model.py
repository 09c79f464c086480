"""qa-eval end to end with the embedded model (SmolLM2-135M): every path runs and is counted."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
FIX = ROOT / "tests" / "fixtures" / "docqa"

pytestmark = pytest.mark.real_llm


def test_qa_eval_with_the_embedded_model(tmp_path, embedded_env):
    out = tmp_path / "q"
    args = [
        sys.executable,
        "-m",
        "webagent.cli",
        "qa-eval",
        "--dataset",
        "narrativeqa",
        "--data",
        str(FIX / "narrativeqa"),
        "--method",
        "gistmem,bm25@1,memwalker",
        "--limit",
        "1",
        "--out",
        str(out),
        "--no-rater",
        "--min-words",
        "40",
        "--max-words",
        "80",
    ]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600, env=embedded_env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert {r["method"] for r in rows} == {"gistmem", "bm25@1", "memwalker"}
    # every question asked; a call reached the model or the cache (a shared request neither),
    # and in this fresh WEBAGENT_HOME the first replies can only come from the model
    assert all(r["calls"] >= 1 and r["model_calls"] + r["cached_calls"] <= r["calls"] for r in rows)
    assert sum(r["model_calls"] for r in rows) >= 1
    # an answer, or a counted failure: never a silent blank
    assert all(r["answer"].strip() or r["failures"] for r in rows)
    report = json.loads((out / "report.json").read_text())
    assert report["memory_building"]["gists"]["calls"] >= 1
