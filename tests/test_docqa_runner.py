"""qa-eval: results as they finish, resume, configuration pinning, the cache, the report files."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from webagent.docqa.data import load
from webagent.docqa.methods import parse_methods
from webagent.docqa.options import QAOptions
from webagent.docqa.report import write_report
from webagent.docqa.runner import make_config, run_eval, select
from webagent.errors import UserError
from webagent.llm.cache import Cache
from webagent.llm.testing import FunctionBackend, fake_client, heuristic_reply

FIX = Path(__file__).parent / "fixtures" / "docqa"
SETTINGS = QAOptions(min_words=150, max_words=300)


def model(messages, params, purpose):
    if purpose == "answer":
        return "Answer: (B)" if "multiple choice" in messages[0]["content"] else "they agreed on transcripts"
    if purpose == "rater":
        return "Yes, partially" if "partially" in messages[0]["content"] else "NO"
    return heuristic_reply(messages, params, purpose)


async def _run(
    out,
    methods="readagent-p@2,gistmem,bm25@1",
    dataset="qmsum",
    data="qmsum_val_sample.jsonl",
    cache=None,
    limit=None,
    counting=None,
):
    loaded = load(dataset, str(FIX / data))
    variants = parse_methods(methods)
    backend = FunctionBackend(model)
    client = fake_client(backend, cache=cache)
    config = make_config(dataset, data, variants, client.model_name, SETTINGS)
    docs = select(loaded.documents, limit, (0, 1))
    summary = await run_eval(client, docs, variants, out, config)
    return summary, backend, client


async def test_results_resume_and_the_report(tmp_path):
    out = tmp_path / "run"
    summary, backend, _ = await _run(out, limit=3)
    assert summary == {"planned": 9, "resumed": 0, "ran": 9, "endpoint_failures": 0}
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 9 and {r["method"] for r in rows} == {"readagent-p@2", "gistmem", "bm25@1"}
    # the gist memory was built once per document, for every method and question
    gists = [r for r in backend.requests if r["purpose"] == "gist"]
    docs = [json.loads(line) for line in (out / "documents.jsonl").read_text().splitlines()]
    assert len(gists) == sum(d["builds"]["gists"]["calls"] for d in docs)
    assert {d["doc_id"] for d in docs} == {r["doc_id"] for r in rows}
    row = rows[0]
    assert row["rating"] == "partial" and 0 <= row["rouge1"] <= 1 and row["calls"] >= 1

    # a killed run: drop two results and tear the last line; the resume redoes only those
    lines = (out / "results.jsonl").read_text().splitlines()
    (out / "results.jsonl").write_text("\n".join(lines[:6]) + "\n" + lines[6][:20])
    summary, _, _ = await _run(out, limit=3)
    assert summary["resumed"] == 6 and summary["ran"] == 3
    resumed = (out / "results.jsonl").read_text().splitlines()
    assert len(resumed) == 9 and all(json.loads(line)["qid"] for line in resumed)  # the torn line was cut

    report = write_report(out)
    assert set(report["methods"]) == {"readagent-p@2", "gistmem", "bm25@1"}
    md = (out / "report.md").read_text()
    assert "| readagent-p@2 |" in md and "LR-2" in md and "One-time memory building" in md
    assert report["methods"]["gistmem"]["lr2"] == 100.0 and report["methods"]["gistmem"]["lr1"] == 0.0
    assert (out / "accuracy_vs_compression.png").read_bytes()[:4] == b"\x89PNG"


async def test_a_changed_configuration_refuses_to_resume(tmp_path):
    out = tmp_path / "run"
    await _run(out, methods="gistmem", limit=1)
    with pytest.raises(UserError, match="another configuration .*methods"):
        await _run(out, methods="gistmem,bm25@1", limit=1)


async def test_a_repeated_run_is_served_from_the_cache(tmp_path):
    cache = Cache(tmp_path / "c.sqlite")
    await _run(tmp_path / "a", cache=cache, limit=2)
    _, backend, client = await _run(tmp_path / "b", cache=cache, limit=2)
    assert backend.requests == [] and client.usage.total.cached_calls > 0
    docs = [json.loads(line) for line in (tmp_path / "b" / "documents.jsonl").read_text().splitlines()]
    assert all(b["from_cache"] for d in docs for b in d["builds"].values())


async def test_a_degraded_memory_is_not_cached(tmp_path):
    cache = Cache(tmp_path / "c.sqlite")

    def failing_gists(messages, params, purpose):
        return "" if purpose == "gist" else model(messages, params, purpose)

    loaded = load("qmsum", str(FIX / "qmsum_val_sample.jsonl"))
    variants = parse_methods("gistmem")
    client = fake_client(FunctionBackend(failing_gists), cache=cache)
    config = make_config("qmsum", "x", variants, client.model_name, SETTINGS)
    await run_eval(
        client,
        select(loaded.documents, 1, (0, 1)),
        variants,
        tmp_path / "r",
        config,
    )
    doc = json.loads((tmp_path / "r" / "documents.jsonl").read_text().splitlines()[0])
    assert doc["builds"]["gists"]["failures"] > 0
    assert cache.count("docqa-memory") == 1  # the pages, not the degraded gists


async def test_quality_accuracy_end_to_end(tmp_path):
    out = tmp_path / "q"
    await _run(out, methods="full,gistmem", dataset="quality", data="quality_dev_sample.jsonl")
    report = write_report(out)
    # the fake always answers (B): right on the one question whose gold label is 2
    assert report["methods"]["full"]["accuracy"] == 20.0 and report["methods"]["full"]["accuracy_difficult"] == 25.0
    assert "Accuracy (difficult)" in (out / "report.md").read_text()


def run_cli(*args, home):
    env = {**os.environ, "WEBAGENT_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "webagent.cli", *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_cli_writes_the_three_report_files(tmp_path):
    out = tmp_path / "out"
    proc = run_cli(
        "qa-eval",
        "--dataset",
        "narrativeqa",
        "--data",
        str(FIX / "narrativeqa"),
        "--method",
        "readagent-p,gistmem,full,bm25",
        "--out",
        str(out),
        "--model",
        "fake:heuristic",
        home=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert {"report.md", "report.json", "accuracy_vs_compression.png", "results.jsonl"} <= {
        p.name for p in out.iterdir()
    }
    assert "| readagent-p@5 |" in proc.stdout


def test_cli_bad_record_is_one_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"meeting_transcripts": [], "general_query_list": [], "specific_query_list": []}\n')
    proc = run_cli(
        "qa-eval",
        "--dataset",
        "qmsum",
        "--data",
        str(bad),
        "--model",
        "fake:heuristic",
        "--out",
        str(tmp_path / "o"),
        home=tmp_path,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {bad}, record line 1, field 'meeting_transcripts': no transcript text"


def test_ask_with_another_method(tmp_path):
    doc = Path(__file__).parent.parent / "examples" / "qmsum_remote_control_meeting.txt"
    proc = run_cli(
        "ask",
        str(doc),
        "What about the buttons?",
        "--method",
        "bm25@2",
        "--json",
        "--model",
        "fake:heuristic",
        home=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["method"] == "bm25@2" and len(result["pages_read"]) == 2 and 0 < result["compression_rate"] < 100
    proc = run_cli("ask", str(doc), "Q?", "--method", "nope", "--model", "fake:heuristic", home=tmp_path)
    assert proc.returncode == 2 and proc.stderr.startswith("error: unknown method 'nope'")


async def test_endpoint_failures_are_left_for_the_resume(tmp_path):
    from webagent.llm.client import TransientError

    down = {"on": True}

    def flaky(messages, params, purpose):
        if purpose == "answer" and down["on"]:
            raise TransientError("503")
        return model(messages, params, purpose)

    loaded = load("qmsum", str(FIX / "qmsum_val_sample.jsonl"))
    variants = parse_methods("full,gistmem")
    config = make_config("qmsum", "x", variants, "fake:function", SETTINGS)
    docs = select(loaded.documents, 2, (0, 1))
    out = tmp_path / "r"
    client = fake_client(FunctionBackend(flaky), max_retries=0)
    summary = await run_eval(client, docs, variants, out, config)
    assert summary["endpoint_failures"] == 4 and summary["ran"] == 0
    assert (out / "results.jsonl").read_text() == ""
    down["on"] = False
    summary = await run_eval(fake_client(FunctionBackend(flaky)), docs, variants, out, config)
    assert summary["ran"] == 4 and summary["endpoint_failures"] == 0


def test_cli_refuses_a_changed_configuration_before_starting_a_model(tmp_path):
    out = tmp_path / "o"
    base = [
        "qa-eval",
        "--dataset",
        "qmsum",
        "--data",
        str(FIX / "qmsum_val_sample.jsonl"),
        "--limit",
        "1",
        "--out",
        str(out),
        "--no-rater",
    ]
    assert run_cli(*base, "--method", "gistmem", "--model", "fake:heuristic", home=tmp_path).returncode == 0
    # no --model: the embedded model would be started; the refusal must come first, in one line
    proc = run_cli(*base, "--method", "full", home=tmp_path)
    assert proc.returncode == 2 and proc.stderr.strip().endswith(
        'holds a qa-eval run with another configuration (methods (["gistmem"] → ["full"])); use another --out'
    )


async def test_memories_on_fallback_pages_are_not_cached_and_say_so(tmp_path):
    from webagent.llm.client import ModelCallError

    cache = Cache(tmp_path / "c.sqlite")

    def failing_pagination(messages, params, purpose):
        if purpose == "pagination":
            raise ModelCallError("refused")
        return model(messages, params, purpose)

    loaded = load("qmsum", str(FIX / "qmsum_val_sample.jsonl"))
    variants = parse_methods("gistmem,summary-tree")
    client = fake_client(FunctionBackend(failing_pagination), cache=cache)
    config = make_config("qmsum", "x", variants, client.model_name, SETTINGS)
    out = tmp_path / "r"
    await run_eval(
        client,
        select(loaded.documents, 1, (0, 1)),
        variants,
        out,
        config,
        rate=False,
    )
    doc = json.loads((out / "documents.jsonl").read_text().splitlines()[0])
    assert doc["builds"]["pages"]["failures"] > 0
    assert doc["builds"]["gists"]["input_failures"] == doc["builds"]["pages"]["failures"]
    assert doc["builds"]["summary-tree"]["input_failures"] > 0
    assert cache.count("docqa-memory") == 0
    assert "in what it was built on" in (write_report(out) and (out / "report.md").read_text())


def test_cli_reads_a_narrativeqa_folder_by_split(tmp_path):
    from test_docqa_data import _nqa_with_three_splits

    folder = _nqa_with_three_splits(tmp_path)
    base = [
        "qa-eval",
        "--dataset",
        "narrativeqa",
        "--data",
        str(folder),
        "--method",
        "gistmem",
        "--no-rater",
        "--model",
        "fake:heuristic",
    ]
    out = tmp_path / "valid"
    assert run_cli(*base, "--out", str(out), home=tmp_path).returncode == 0
    docs = {json.loads(line)["doc_id"] for line in (out / "results.jsonl").read_text().splitlines()}
    assert docs == {"a1b2c3", "d4e5f6"}  # no train or test questions mixed in
    assert json.loads((out / "config.json").read_text())["split"] == "valid"
    out = tmp_path / "test"
    proc = run_cli(*base, "--split", "test", "--out", str(out), home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert {json.loads(line)["doc_id"] for line in (out / "results.jsonl").read_text().splitlines()} == {"t4e5s6"}
    proc = run_cli(*base, "--split", "train", "--out", str(out), home=tmp_path)  # another split: another run
    assert proc.returncode == 2 and "another configuration (split (test → train))" in proc.stderr


async def test_a_rating_lost_to_the_endpoint_is_rerun_on_resume_and_the_report_counts_scored_questions(tmp_path):
    from webagent.llm.client import TransientError

    down = {"on": True}

    def flaky_rater(messages, params, purpose):
        if purpose == "rater" and down["on"]:
            raise TransientError("503")
        return model(messages, params, purpose)

    loaded = load("qmsum", str(FIX / "qmsum_val_sample.jsonl"))
    variants = parse_methods("full,gistmem")
    config = make_config("qmsum", "x", variants, "fake:function", SETTINGS)
    docs = select(loaded.documents, 2, (0, 1))
    out = tmp_path / "r"
    summary = await run_eval(
        fake_client(FunctionBackend(flaky_rater), max_retries=0),
        docs,
        variants,
        out,
        config,
    )
    # not written with rating None (which would silently shrink LR-1/LR-2's denominator): left for the resume
    assert summary["endpoint_failures"] == 4 and summary["ran"] == 0
    assert (out / "results.jsonl").read_text() == ""
    down["on"] = False
    summary = await run_eval(fake_client(FunctionBackend(flaky_rater)), docs, variants, out, config)
    assert summary["ran"] == 4
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert all(r["rating"] is not None for r in rows)
    report = write_report(out)
    assert report["methods"]["full"]["rated"] == 2 and report["methods"]["full"]["questions"] == 2
    md = (out / "report.md").read_text()
    assert "| Method | scored |" in md and "| full | 2 of 2 |" in md


def test_shards_merge_into_the_whole_run(tmp_path):
    """qa-eval shards and merges as apps eval and miniwob do (webagent.results_folder)."""
    base = ["qa-eval", "--dataset", "qmsum", "--data", str(FIX / "qmsum_val_sample.jsonl"), "--limit", "4"]
    base += ["--no-rater", "--method", "gistmem", "--model", "fake:heuristic"]
    rows = []
    for i in range(2):
        proc = run_cli(*base, "--shard", f"{i}/2", "--out", str(tmp_path / f"s{i}"), home=tmp_path)
        assert proc.returncode == 0, proc.stderr[-2000:]
        rows.append({json.loads(line)["qid"] for line in (tmp_path / f"s{i}" / "results.jsonl").open()})
    assert rows[0] and rows[1] and not rows[0] & rows[1]
    merged = run_cli(
        "qa-eval", "merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out", str(tmp_path / "all"), home=tmp_path
    )
    assert merged.returncode == 0 and "method-questions" in merged.stdout, merged.stderr[-2000:]
    assert {json.loads(line)["qid"] for line in (tmp_path / "all" / "results.jsonl").open()} == rows[0] | rows[1]
    assert (tmp_path / "all" / "report.md").is_file() and (tmp_path / "all" / "documents.jsonl").read_text()
    other = run_cli(
        *base[:-2], "--model", "fake:heuristic", "--method", "full", "--out", str(tmp_path / "s1"), home=tmp_path
    )
    assert other.returncode == 2  # s1 now holds another configuration: refused
    mixed = run_cli(
        "qa-eval", "merge", str(tmp_path / "s0"), str(tmp_path / "o"), "--out", str(tmp_path / "m"), home=tmp_path
    )
    assert mixed.returncode != 0
