"""bench/ and tools/ by role (issue 35): every script runs as a module from the repository root,
so none edits sys.path, and every benchmark `make bench` names is a module of bench/gated/."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _scripts() -> list[Path]:
    return [p for folder in ("bench", "tools") for p in (ROOT / folder).rglob("*.py") if "/.venv-" not in str(p)]


def test_no_script_edits_sys_path():
    edits = [str(p.relative_to(ROOT)) for p in _scripts() if re.search(r"sys\.path\.(insert|append)", p.read_text())]
    assert edits == []


def test_make_bench_runs_modules_of_bench_gated():
    makefile = (ROOT / "Makefile").read_text()
    names = re.search(r"^BENCHES := (.*?)(?<!\\)\n", makefile, re.M | re.S).group(1).replace("\\\n", " ").split()
    assert names and all((ROOT / "bench" / "gated" / f"{n}.py").is_file() for n in names), names


def test_every_results_folder_has_its_meta():
    runs = [
        p for topic in (ROOT / "bench" / "results").iterdir() if topic.is_dir() for p in topic.iterdir() if p.is_dir()
    ]
    assert runs and all(re.fullmatch(r"\d{4}-\d\d-\d\d-[0-9a-f]{7}-[\w.-]+", p.name) for p in runs), runs
    assert [p.name for p in runs if not (p / "meta.json").is_file()] == []


def test_the_packages_import_nothing_from_bench_or_tools():
    found = [
        str(p.relative_to(ROOT))
        for package in ("webagent", "mind2web")
        for p in (ROOT / package).rglob("*.py")
        if re.search(r"^\s*(from|import) (bench|tools)\b", p.read_text(encoding="utf-8"), re.M)
    ]
    assert found == []
