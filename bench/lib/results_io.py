"""Results under bench/results/: one folder per run, named ``DATE-COMMIT-LABEL``
(``folder_name``) with a ``meta.json`` (``write_meta``: command, commit, machine, load, date),
and in it one JSON file per measurement recording the rows measured and what produced them,
so the tables in docs/ are rendered from it (tools/render_docs.py), never copied by hand.

    from bench.lib.results_io import folder_name, write_result
    out = ROOT / "bench/results/mything" / folder_name("quick")   # 2026-11-26-9fc3498-quick
    write_result(out / "run.json", rows, notes="load average 8-11 from other jobs",
                 targets=["ratio <= 1.3: 1.12: PASS"])

A results file (format ``webagent-result/1``)::

    {"format": "webagent-result/1",
     "command": "the command line that produced the rows",
     "commit": "the git commit measured (full hash)", "dirty": false,
     "machine": {"cpus": 2, "cpu": "...", "memory_gb": 23.4, "platform": "...",
                 "python": "3.11.2", "loadavg": [7.1, 6.9, 8.2]},
     "date": "2026-11-25T03:17:43",
     "notes": "optional free text", "targets": ["optional target lines"],
     "rows": [{"column": value, ...}, ...]}

``commit`` defaults to ``git rev-parse HEAD`` of this repository (``dirty`` says whether
tracked files differed from it), ``machine`` to this machine now, ``command`` to the
running script's command line. ``append_row`` keeps a JSONL file of rows instead, each
row carrying its own ``command``, ``commit``, ``machine`` and ``date`` (for benches that
add one row per run). ``read_result`` reads either.

Run it to print this machine's description and the commit:
``.venv/bin/python -m bench.lib.results_io``. It imports nothing of bench or webagent, so a
test can load it from its file.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

FORMAT = "webagent-result/1"
HERE = Path(__file__).resolve().parent  # inside the checkout: git finds its root from here


def git_commit(root: Path = HERE) -> tuple[str | None, bool | None]:
    """(HEAD's full hash, whether tracked files differ from it); (None, None) outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
        diff = subprocess.run(["git", "diff", "--quiet", "HEAD", "--"], cwd=root, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return None, None
    return head.stdout.strip(), diff.returncode != 0


def machine() -> dict[str, Any]:
    """This machine, now: CPUs, CPU model, memory, platform, Python, load average."""
    info: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                info["memory_gb"] = round(int(line.split()[1]) / 1024**2, 1)
                break
    except OSError:
        pass
    try:
        info["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    return info


def default_command() -> str:
    """The running script's command line: ``-m MODULE`` for a module run with ``-m``."""
    argv = list(sys.argv)
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if argv and spec is not None and spec.name:
        argv[0:1] = ["-m", spec.name]
    return shlex.join([".venv/bin/python", *argv])


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, as ``uptime`` prints them ("1.02 0.87 0.61")."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def folder_name(label: str, commit: str | None = None, date: str | None = None) -> str:
    """A run's folder under bench/results/TOPIC/: ``DATE-COMMIT-LABEL`` (today, HEAD)."""
    commit = commit or git_commit()[0] or "nocommit"
    date = date or _dt.date.today().isoformat()
    return f"{date[:10]}-{commit[:7]}-{label}"


def write_meta(folder: str | Path, *, command: str | None = None, note: str | None = None, **extra: Any) -> Path:
    """``meta.json`` of a run's folder: command, commit (``dirty`` when tracked files differed),
    machine, load (the load average as the run starts), date, and an optional note."""
    info = provenance(command)
    doc = {**info, "load": load_average(), **({"note": note} if note else {}), **extra}
    path = Path(folder) / "meta.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def provenance(
    command: str | None = None,
    commit: str | None = None,
    machine_info: Mapping[str, Any] | str | None = None,
    date: str | None = None,
) -> dict[str, Any]:
    head, dirty = git_commit()
    return {
        "command": command or default_command(),
        "commit": commit or head,
        "dirty": dirty if commit is None else None,
        "machine": machine_info if machine_info is not None else machine(),
        "date": date or _dt.datetime.now().replace(microsecond=0).isoformat(),
    }


def write_result(
    path: str | Path,
    rows: Iterable[Mapping[str, Any]],
    *,
    command: str | None = None,
    commit: str | None = None,
    machine_info: Mapping[str, Any] | str | None = None,
    date: str | None = None,
    notes: str | None = None,
    targets: Iterable[str] = (),
    **extra: Any,
) -> Path:
    """Write ``rows`` (a list of flat dicts) as a results file at ``path`` (JSON), with the
    command, commit and machine; ``extra`` keys are kept as they are. Returns the path."""
    path = Path(path)
    doc: dict[str, Any] = {"format": FORMAT, **provenance(command, commit, machine_info, date)}
    if notes:
        doc["notes"] = notes
    if targets:
        doc["targets"] = list(targets)
    doc.update(extra)
    doc["rows"] = [dict(r) for r in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def append_row(
    path: str | Path,
    row: Mapping[str, Any],
    *,
    command: str | None = None,
    commit: str | None = None,
    machine_info: Mapping[str, Any] | str | None = None,
) -> Path:
    """Append one row to a JSONL results file, the row carrying its own provenance."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {**dict(row), **{k: v for k, v in provenance(command, commit, machine_info).items() if k not in row}}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def read_result(path: str | Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(rows, everything else) of a results file: a ``write_result`` JSON, any JSON with a
    ``rows`` list (other keys, or its ``meta`` object, are the rest), or a JSONL of rows."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()], {}
    doc = json.loads(text)
    if isinstance(doc, list):
        return doc, {}
    rest = {k: v for k, v in doc.items() if k != "rows"}
    if isinstance(rest.get("meta"), dict):
        rest = {**rest.pop("meta"), **rest}
    return list(doc.get("rows") or []), rest


if __name__ == "__main__":
    print(json.dumps({**provenance(), "load": load_average()}, indent=1))
