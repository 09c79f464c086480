"""The tables in README.md and docs/*.md are rendered from bench/results/ (tools/render_docs.py):
the committed pages must match their results files, and a stale table is caught."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tools.render_docs", *args], capture_output=True, text=True, cwd=ROOT)


def results_io():
    spec = importlib.util.spec_from_file_location("results_io", ROOT / "bench" / "lib" / "results_io.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_tables_match_their_results_files():
    done = run("--check")
    assert done.returncode == 0, done.stderr
    assert "tables in" in done.stdout


def test_a_stale_table_is_caught_and_rewritten(tmp_path):
    io = results_io()
    result = tmp_path / "bench" / "results" / "demo" / "run.json"
    io.write_result(
        result,
        [{"task": "a", "ok": True, "seconds": 1.5}],
        command="bench/demo.py",
        commit="0" * 40,
        machine_info={"cpus": 2, "loadavg": [1.0, 1.0, 1.0]},
        date="2026-01-01",
    )
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text(
        "# Page\n\n<!-- table: rows bench/results/demo/run.json columns=task,seconds -->\n<!-- /table -->\n\nAfter.\n",
        encoding="utf-8",
    )
    assert run("--write", "--root", str(tmp_path)).returncode == 0
    text = page.read_text(encoding="utf-8")
    assert "| a | 1.5 |" in text
    assert "Source: [`bench/results/demo/run.json`](../bench/results/demo/run.json)" in text
    assert "`bench/demo.py` · commit 0000000 · 2 CPUs, load average 1.0 1.0 1.0 · 2026-01-01" in text
    assert text.endswith("<!-- /table -->\n\nAfter.\n")
    assert run("--check", "--root", str(tmp_path)).returncode == 0

    doc = json.loads(result.read_text(encoding="utf-8"))
    doc["rows"][0]["seconds"] = 2.5  # a new measurement, the page not rendered again
    result.write_text(json.dumps(doc), encoding="utf-8")
    done = run("--check", "--root", str(tmp_path))
    assert done.returncode == 1
    assert "docs/page.md:3: table 'rows bench/results/demo/run.json columns=task,seconds' is stale" in done.stderr
    assert page.read_text(encoding="utf-8") == text  # --check writes nothing

    result.unlink()
    done = run("--check", "--root", str(tmp_path))
    assert done.returncode == 1 and "bench/results/demo/run.json does not exist" in done.stderr


def test_write_result_records_command_commit_and_machine(tmp_path):
    io = results_io()
    path = io.write_result(tmp_path / "r.json", [{"x": 1}], command="bench/x.py --quick")
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["format"] == "webagent-result/1" and doc["command"] == "bench/x.py --quick"
    assert doc["commit"] is None or len(doc["commit"]) == 40  # None outside a git checkout
    assert doc["machine"]["cpus"] >= 1 and doc["rows"] == [{"x": 1}]
    rows, rest = io.read_result(path)
    assert rows == [{"x": 1}] and rest["command"] == "bench/x.py --quick"

    io.append_row(tmp_path / "r.jsonl", {"x": 2}, command="bench/x.py")
    rows, _ = io.read_result(tmp_path / "r.jsonl")
    assert rows[0]["x"] == 2 and rows[0]["command"] == "bench/x.py" and rows[0]["machine"]["cpus"] >= 1


def test_a_run_is_described_once_per_page(tmp_path):
    io = results_io()
    result = tmp_path / "bench" / "results" / "demo" / "2026-01-01-0000000-x" / "run.json"
    io.write_result(result, [{"task": "a", "seconds": 1.5}], command="c", commit="0" * 40, machine_info="m")
    marker = "<!-- table: rows bench/results/demo/2026-01-01-0000000-x/run.json columns={} -->\n<!-- /table -->\n"
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text("# Page\n\n" + marker.format("task") + "\nText.\n\n" + marker.format("seconds"), encoding="utf-8")
    assert run("--write", "--root", str(tmp_path)).returncode == 0
    sources = [line for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("Source: ")]
    assert len(sources) == 2 and "`c` · commit 0000000 · m" in sources[0]
    assert sources[1].endswith("/run.json), the run described above") and "commit" not in sources[1]


def test_a_run_folder_is_named_date_commit_label_with_its_meta(tmp_path):
    io = results_io()
    assert io.folder_name("0.5b-skills", commit="9fc3498" + "0" * 33, date="2026-11-26T10:00:00") == (
        "2026-11-26-9fc3498-0.5b-skills"
    )
    meta = json.loads(io.write_meta(tmp_path / "run", command="bench x").read_text(encoding="utf-8"))
    assert meta["command"] == "bench x" and len(meta["load"].split()) == 3
    assert {"commit", "machine", "date"} <= set(meta)
