"""Render the tables of docs/*.md and README.md from the results files under bench/results/.

A table in a page sits between two markers; everything between them is generated:

    <!-- table: RENDERER PATH [PATH ...] [OPTION=VALUE ...] -->
    | ... the table, a blank line, then "Source: PATH · command · commit · machine" ... |
    <!-- /table -->

RENDERER names one of the renderers below (``--list`` prints them), each reading one
results-file format; PATH is relative to the repository root. The line after each table
names the results file and, when recorded, the command, commit, machine and date (from
the file itself, else from a ``meta.json`` beside it), once per run and page: a later table
of the same folder with the same record names only its file.

    .venv/bin/python -m tools.render_docs --write      # regenerate every table in place
    .venv/bin/python -m tools.render_docs --check      # exit 1 naming each stale table
    .venv/bin/python -m tools.render_docs --list       # the renderers and what they read
    .venv/bin/python -m tools.render_docs --check docs/benchmarks.md --root DIR

``make test`` runs ``--check`` (tests/test_render_docs.py), so a table that no longer
matches its results file fails the tests until ``--write`` is run.
"""

from __future__ import annotations

import argparse
import difflib
import inspect
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.lib.results_io import read_result
from tools.doc_tables import RENDERERS, RenderError, fmt, load_json, markdown_table

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^<!-- table: (?P<args>.+?) -->\n(?P<body>.*?)^<!-- /table -->$", re.S | re.M)


# ---------------------------------------------------------------- provenance


def source_info(path: Path) -> dict[str, Any]:
    """command / commit / machine / date of a results file: its own keys (top level or under
    ``meta``; for JSONL, the rows' own), else its run folder's ``meta.json``."""
    info: dict[str, Any] = {}
    meta = path.parent / "meta.json"
    if meta.is_file() and meta != path:
        info.update(load_json(meta))
    try:
        rows, rest = read_result(path) if path.suffix in (".json", ".jsonl") else ([], {})
    except (ValueError, AttributeError):
        rows, rest = [], {}
    if isinstance(rows, list) and rows and isinstance(rows[0], dict) and path.suffix == ".jsonl":
        for key in ("command", "commit", "machine", "date"):
            seen = list(dict.fromkeys(json.dumps(r[key], sort_keys=True) for r in rows if r.get(key)))
            if seen:
                info[key] = json.loads(seen[0]) if len(seen) == 1 else f"{len(seen)} different (see the rows)"
    for key in ("command", "commit", "dirty", "machine", "date", "commit_note"):
        if rest.get(key) not in (None, ""):
            info[key] = rest[key]
    return info


def describe_machine(m: Any) -> str:
    if isinstance(m, str):
        return m
    if not isinstance(m, dict):
        return fmt(m)
    parts = []
    if m.get("cpus"):
        parts.append(f"{m['cpus']} CPUs" + (f" ({m['cpu']})" if m.get("cpu") else ""))
    if m.get("memory_gb"):
        parts.append(f"{m['memory_gb']} GB")
    if m.get("loadavg"):
        parts.append("load average " + " ".join(str(x) for x in m["loadavg"]))
    return ", ".join(parts) or json.dumps(m)


def source_line(path: Path, root: Path, page: Path, said: set[tuple[str, ...]] | None = None) -> str:
    """ "Source: FILE · command · commit · machine · date · note". ``said`` holds the runs this
    page has described already (folder and record): for those, only the file is named."""
    rel = path.relative_to(root).as_posix()
    link = os.path.relpath(path, page.parent).replace(os.sep, "/")
    info = source_info(path)
    parts = [f"[`{rel}`]({link})"]
    if info.get("command"):
        command = str(info["command"])
        parts.append(f"`` {command} ``" if "`" in command else f"`{command}`")
    commit = str(info.get("commit") or "")
    if commit:
        short = commit[:7] if re.fullmatch(r"[0-9a-f]{40}", commit) else commit
        if info.get("commit_note"):
            parts.append(f"committed with {short}")
        else:
            parts.append(f"commit {short}" + (" with uncommitted changes" if info.get("dirty") else ""))
    if info.get("machine"):
        parts.append(describe_machine(info["machine"]))
    if info.get("date"):
        parts.append(str(info["date"])[:10])
    if info.get("note"):
        parts.append(str(info["note"]))
    run = ((path if path.is_dir() else path.parent).as_posix(), *parts[1:])
    if said is not None and len(parts) > 1:
        if run in said:
            return f"Source: {parts[0]}, the run described above"
        said.add(run)
    return "Source: " + " · ".join(parts)


# ---------------------------------------------------------------- pages


@dataclass
class Block:
    line: int
    args: str
    start: int
    end: int
    body: str


def parse_args(args: str) -> tuple[str, list[str], dict[str, str]]:
    words = shlex.split(args)
    if not words:
        raise RenderError("empty table marker")
    name, paths, opts = words[0], [], {}
    for w in words[1:]:
        key, sep, value = w.partition("=")
        if sep and "/" not in key:
            opts[key] = value
        else:
            paths.append(w)
    return name, paths, opts


def render_block(args: str, root: Path, page: Path, said: set[tuple[str, ...]] | None = None) -> str:
    name, paths, opts = parse_args(args)
    fn = RENDERERS.get(name)
    if fn is None:
        raise RenderError(f"unknown renderer {name!r} (known: {', '.join(sorted(RENDERERS))})")
    files = [root / p for p in paths]
    if not files:
        raise RenderError(f"{name}: no results file named")
    for f in files:
        if not f.exists():
            raise RenderError(f"{f.relative_to(root).as_posix()} does not exist")
    try:
        table = fn(files, opts)
    except (KeyError, ValueError, TypeError, IndexError) as exc:
        raise RenderError(f"{name} cannot read {', '.join(paths)}: {type(exc).__name__}: {exc}") from None
    lines = markdown_table(table, int(opts.get("digits", 2)))
    notes = [a for a in table.after if not a.startswith("target: ")]
    targets = [a for a in table.after if a.startswith("target: ")]
    for note in notes:  # each a paragraph of its own
        lines += ["", note]
    if targets:
        lines += [""] + [f"- {t}" for t in targets]
    for f in files:
        lines += ["", source_line(f, root, page, said)]
    return "\n".join(lines) + "\n"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    return [
        Block(text.count("\n", 0, m.start()) + 1, m.group("args"), m.start("body"), m.end("body"), m.group("body"))
        for m in MARKER.finditer(text)
    ]


def process(pages: list[Path], root: Path, write: bool) -> list[str]:
    """Render every table of ``pages``; with ``write`` update them in place. Returns one
    message per stale or broken table."""
    problems = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        new, pos = [], 0
        rel = page.relative_to(root).as_posix() if page.is_relative_to(root) else str(page)
        said: set[tuple[str, ...]] = set()  # the runs this page has described, in page order
        for b in blocks(page):
            where = f"{rel}:{b.line}: table '{b.args}'"
            try:
                body = render_block(b.args, root, page, said)
            except RenderError as exc:
                problems.append(f"{where}: {exc}")
                body = b.body
            if body != b.body and not write:
                diff = difflib.unified_diff(
                    b.body.splitlines(), body.splitlines(), "committed", "rendered", lineterm="", n=0
                )
                problems.append(
                    f"{where} is stale (run: .venv/bin/python -m tools.render_docs --write)\n  "
                    + "\n  ".join(list(diff)[2:8])
                )
            new += [text[pos : b.start], body]
            pos = b.end
        new.append(text[pos:])
        if write and "".join(new) != text:
            page.write_text("".join(new), encoding="utf-8")
            print(f"wrote {rel}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate the tables in place")
    mode.add_argument("--check", action="store_true", help="exit 1 when a table differs from its results file")
    mode.add_argument("--list", action="store_true", help="the renderers and the results files each reads")
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this checkout)")
    parser.add_argument("pages", nargs="*", type=Path, help="pages (default: README.md and docs/*.md)")
    args = parser.parse_args(argv)
    if args.list:
        for name, fn in RENDERERS.items():
            print(f"{name}\n    " + "\n    ".join(inspect.cleandoc(fn.__doc__ or "").splitlines()))
        return 0
    root = args.root.resolve()
    readme = [root / "README.md"] if (root / "README.md").is_file() else []
    pages = [p.resolve() for p in args.pages] or readme + sorted((root / "docs").glob("*.md"))
    problems = process(pages, root, write=args.write)
    for p in problems:
        print(p, file=sys.stderr)
    count = sum(len(blocks(p)) for p in pages)
    if problems:
        print(f"{len(problems)} of {count} tables stale or broken", file=sys.stderr)
        return 1
    if args.check:
        print(f"{count} tables in {len(pages)} pages match their results files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
