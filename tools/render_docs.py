"""Render the tables of docs/*.md and README.md from the results files under bench/results/.

A table in a page sits between two markers; everything between them is generated:

    <!-- table: RENDERER PATH [PATH ...] [OPTION=VALUE ...] -->
    | ... the table, a blank line, then "Source: PATH · command · commit · machine" ... |
    <!-- /table -->

RENDERER names one of the renderers below (``--list`` prints them), each reading one
results-file format; PATH is relative to the repository root. The line after each table
names the results file and, when recorded, the command, commit, machine and date (from
the file itself, else from a ``meta.json`` beside it).

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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.lib.results_io import read_result

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^<!-- table: (?P<args>.+?) -->\n(?P<body>.*?)^<!-- /table -->$", re.S | re.M)


class RenderError(Exception):
    """A table cannot be rendered (missing file, unknown renderer, bad option)."""


@dataclass
class Table:
    header: list[str]
    rows: list[list[Any]]
    after: list[str] = field(default_factory=list)  # lines between the table and its source line


Renderer = Callable[[list[Path], dict[str, str]], Table]
RENDERERS: dict[str, Renderer] = {}


def renderer(name: str) -> Callable[[Renderer], Renderer]:
    def register(fn: Renderer) -> Renderer:
        RENDERERS[name] = fn
        return fn

    return register


# ---------------------------------------------------------------- formatting


def fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return str(round(value, digits))
    if isinstance(value, (list, tuple)):
        return ", ".join(fmt(v, digits) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value).replace("|", "\\|").replace("\n", " ")


def frac(done: int, total: int) -> str:
    return f"{done}/{total} ({done / total:.0%})" if total else "0/0"


def markdown_table(table: Table, digits: int = 2) -> list[str]:
    lines = ["| " + " | ".join(table.header) + " |", "|" + "---|" * len(table.header)]
    lines += ["| " + " | ".join(fmt(c, digits) for c in row) + " |" for row in table.rows]
    return lines


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# ---------------------------------------------------------------- provenance


def source_info(path: Path) -> dict[str, Any]:
    """command / commit / machine / date of a results file: its own keys (top level or under
    ``meta``; for JSONL, the rows' own), else a ``meta.json`` beside it (flat, or a ``files``
    object keyed by file name)."""
    info: dict[str, Any] = {}
    meta = path.parent / "meta.json"
    if meta.is_file() and meta != path:
        doc = load_json(meta)
        files = doc.get("files")
        info.update(files.get(path.name, {}) if isinstance(files, dict) else doc)
    try:
        rows, rest = read_result(path) if path.suffix in (".json", ".jsonl") else ([], {})
    except (ValueError, AttributeError):
        rows, rest = [], {}
    if isinstance(rows, list) and rows and isinstance(rows[0], dict) and path.suffix == ".jsonl":
        for key in ("command", "commit", "machine", "date"):
            seen = list(dict.fromkeys(json.dumps(r[key], sort_keys=True) for r in rows if r.get(key)))
            if seen:
                info[key] = json.loads(seen[0]) if len(seen) == 1 else f"{len(seen)} different (see the rows)"
    for key in ("command", "commit", "agent_commit", "dirty", "machine", "date", "commit_note"):
        if rest.get(key) not in (None, ""):
            info[key] = rest[key]
    if "commit" not in info and info.get("agent_commit"):
        info["commit"] = info["agent_commit"]
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


def source_line(path: Path, root: Path, page: Path) -> str:
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
    return "Source: " + " · ".join(parts)


# ---------------------------------------------------------------- renderers


@renderer("rows")
def render_rows(paths: list[Path], opts: dict[str, str]) -> Table:
    """Any results file of bench/lib/results_io.py (``write_result`` JSON or ``append_row`` JSONL),
    or any JSON with a ``rows`` list. Options: ``columns=a,b,c`` (keys, default: the first
    row's), ``headers="A;B;C"`` (default: the keys), ``digits=N`` for floats (default 2),
    ``where=key:value`` (only rows whose key equals value). Its ``targets`` lines follow the table."""
    rows: list[dict] = []
    targets: list[str] = []
    notes: list[str] = []
    for path in paths:
        got, rest = read_result(path)
        rows += got
        targets += [str(t) for t in rest.get("targets") or []]
        if rest.get("notes"):
            notes.append(str(rest["notes"]))
    if "where" in opts:
        key, _, value = opts["where"].partition(":")
        rows = [r for r in rows if fmt(r.get(key)) == value]
    columns = opts["columns"].split(",") if "columns" in opts else list(rows[0]) if rows else []
    headers = opts["headers"].split(";") if "headers" in opts else columns
    if len(headers) != len(columns):
        raise RenderError(f"headers= names {len(headers)} columns, columns= {len(columns)}")
    return Table(headers, [[r.get(c) for c in columns] for r in rows], notes + [f"target: {t}" for t in targets])


def _summary_config(s: dict) -> str:
    c = s.get("config", {})
    return (
        f"Model: {c.get('model', '?')}; step limit {c.get('max_steps', '?')}, look-up {c.get('lookup', '?')}, "
        f"context {c.get('context_tokens', '?')} tokens; success is the app's database check."
    )


@renderer("methods")
def render_methods(paths: list[Path], opts: dict[str, str]) -> Table:
    """The methods of an evaluation, from its ``REGISTRY`` (``webagent.variant.Registry``): PATH is
    the module that lists them (``webagent/docqa/methods/__init__.py``, ``mind2web/methods.py``)."""
    import importlib

    rows: list[list[Any]] = []
    for path in paths:
        root = Path(__file__).resolve().parents[1]
        module = ".".join(path.resolve().relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        rows += importlib.import_module(module).REGISTRY.rows()
    return Table(["method", "what the model reads"], rows)


@renderer("apps-summary")
def render_apps_summary(paths: list[Path], opts: dict[str, str]) -> Table:
    """``summary.json`` of ``webagent apps eval`` (``meta.json`` beside it for the command).
    ``view=by-app`` (default), ``by-kind``, ``causes`` (how failed tasks ended) or ``totals``.
    A run written with ``apps report --beside`` gets a column for the other run."""
    (path,) = paths
    s = load_json(path)
    view = opts.get("view", "by-app")
    beside = s.get("beside")
    other = Path(beside["folder"]).name if beside else None
    if view in ("by-app", "by-kind"):
        key = view.replace("-", "_")
        header = ["app" if view == "by-app" else "task kind", "success"] + ([other] if other else [])
        rows = []
        for name, d in sorted(s[key].items()):
            row = [name, frac(d["success"], d["tasks"])]
            if other:
                b = beside[key].get(name)
                row.append(frac(b["success"], b["tasks"]) if b else "–")
            rows.append(row)
        if view == "by-app":
            total = ["**all**", frac(s["success"], s["tasks"])]
            rows.append(total + ([frac(beside["success"], beside["tasks"])] if other else []))
        return Table(header, rows, [_summary_config(s)])
    if view == "causes":
        causes = s.get("causes") or {}
        rows = [[cause, n] for cause, n in sorted(causes.items(), key=lambda kv: -kv[1])] or [["(no failure)", 0]]
        return Table(["how a failed task ended", "tasks"], rows, [_summary_config(s)])
    if view == "totals":
        return Table(
            ["tasks", "success", "median steps", "median s / task", "median prompt tokens / task"],
            [
                [
                    s["tasks"],
                    frac(s["success"], s["tasks"]),
                    s.get("median_steps"),
                    s.get("median_seconds"),
                    s.get("median_prompt_tokens"),
                ]
            ],
            [_summary_config(s)],
        )
    raise RenderError(f"apps-summary: unknown view {view!r} (by-app, by-kind, causes, totals)")


@renderer("apps-peers")
def render_apps_peers(paths: list[Path], opts: dict[str, str]) -> Table:
    """``results.json`` of ``bench/rivals/apps_peers.py``: each peer on the real-app suite
    through one model server (per setting: model, cap, step limit)."""
    (path,) = paths
    d = load_json(path)
    rows = []
    for setting, peers in d["summary"].items():
        for peer, p in sorted(peers.items()):
            rows.append(
                [
                    setting,
                    peer,
                    p["tasks"],
                    frac(p["success"], p["tasks"]),
                    p["failure"],
                    p["capped"],
                    p["error"],
                    round(p["calls"], 1),
                    round(p["prompt_tokens"]),
                    round(p["completion_tokens"]),
                    round(p["wall_s"]),
                ]
            )
    header = [
        "setting",
        "peer",
        "tasks",
        "success",
        "failure",
        "capped",
        "error",
        "model calls / task",
        "prompt tokens / task",
        "completion tokens / task",
        "s / task",
    ]
    return Table(header, rows, [f"Tasks: {', '.join(d.get('tasks', []))}."])


@renderer("miniwob-peers")
def render_miniwob_peers(paths: list[Path], opts: dict[str, str]) -> Table:
    """``results.json`` of ``bench/rivals/run.py``: webagent, browser-use and AgentLab on the
    same MiniWoB++ episodes through one model server."""
    (path,) = paths
    d = load_json(path)
    rows = []
    for agent, a in d["summary"].items():
        rows.append(
            [
                agent,
                a["episodes"],
                frac(a["successes"], a["episodes"]),
                round(a["mean_steps"], 1),
                round(a["mean_calls"], 1),
                round(a["mean_prompt_tokens"]),
                round(a["mean_cached_tokens"]),
                round(a["prompt_tokens_per_success"]) if a.get("prompt_tokens_per_success") else None,
                a["timeouts"],
                a["errors"],
            ]
        )
    header = [
        "agent",
        "episodes",
        "success",
        "mean steps",
        "model calls / episode",
        "prompt tokens / episode",
        "of which from the prompt cache",
        "prompt tokens / success",
        "capped by wall time",
        "errors",
    ]
    after = [
        f"Model {d.get('model')}; tasks {', '.join(d.get('tasks', []))}; seeds "
        f"{', '.join(str(s) for s in d.get('seeds', []))}; at most {d.get('max_steps')} steps and "
        f"{d.get('episode_timeout_s')} s per episode."
    ]
    return Table(header, rows, after + [f"target: {t}" for t in d.get("targets", [])])


MINIWOB_TASKS = ("click-button", "enter-text", "login-user", "choose-list", "click-checkboxes", "book-flight")
NON_FLIGHT = MINIWOB_TASKS[:5]


@renderer("miniwob")
def render_miniwob(paths: list[Path], opts: dict[str, str]) -> Table:
    """``episodes.jsonl`` of ``webagent miniwob`` runs (a folder or the file; several give a
    row each; ``config.json`` beside it names the model): success per task, on the five
    non-flight tasks, prompt tokens and model seconds per step on those five.
    ``seeds=0,1,2`` keeps only those seeds."""
    seeds = {int(x) for x in opts["seeds"].split(",")} if "seeds" in opts else None
    runs = []
    for path in paths:
        file = path / "episodes.jsonl" if path.is_dir() else path
        eps = [e for e in jsonl(file) if seeds is None or e.get("seed") in seeds]
        config = file.parent / "config.json"
        model = load_json(config).get("model", "?") if config.is_file() else "?"
        runs.append((file.parent.name, model.split("@")[0], eps))
    tasks = [t for t in MINIWOB_TASKS if any(e["task"] == t for _, _, eps in runs for e in eps)]
    header = ["run", "model", *tasks, "five tasks", "prompt tokens / step", "s / step"]
    rows = []
    for name, model, eps in runs:
        row: list[Any] = [name, model]
        for t in tasks:
            mine = [e for e in eps if e["task"] == t]
            row.append(f"{sum(bool(e['success']) for e in mine)}/{len(mine)}" if mine else "–")
        five = [e for e in eps if e["task"] in NON_FLIGHT]
        steps = sum(e["steps"] for e in five) or 1
        row += [
            f"**{sum(bool(e['success']) for e in five) / len(five):.0%}**" if five else "–",
            round(sum(e["usage"].get("prompt_tokens", 0) for e in five) / steps),
            round(sum(e["usage"].get("wall_time_s", 0) for e in five) / steps, 1),
        ]
        rows.append(row)
    return Table(header, rows, ["Success is MiniWoB's own raw reward > 0; seconds are model-call wall time."])


@renderer("docqa-report")
def render_docqa_report(paths: list[Path], opts: dict[str, str]) -> Table:
    """``report.json`` of ``webagent qa-eval``: a row per reading method (``view=methods``,
    the default) or the one-time memory building per artefact (``view=building``)."""
    (path,) = paths
    r = load_json(path)
    view = opts.get("view", "methods")
    about = (
        f"{r['dataset']}: {r['documents']} document(s), {r['questions']} question(s); model {r['model'].split('@')[0]}."
    )
    if view == "building":
        rows = [
            [
                name,
                b["documents"],
                b["from_cache"],
                b["calls"],
                b["prompt_words"] + b["reply_words"],
                round(b["words_per_question"], 1),
                b["failures"],
            ]
            for name, b in r["memory_building"].items()
        ]
        return Table(
            ["artefact", "documents", "from cache", "calls", "words", "words / question (amortised)", "failures"],
            rows,
            [about],
        )
    if view != "methods":
        raise RenderError(f"docqa-report: unknown view {view!r} (methods, building)")
    quality = r["dataset"] == "quality"
    header = (
        ["method", "CR (# LU)"]
        + (["accuracy", "unparsed"] if quality else ["LR-1", "LR-2", "R-1", "R-2", "R-L"])
        + ["calls / q", "words / q", "failures"]
    )
    rows = []
    for name, m in r["methods"].items():
        row: list[Any] = [name, f"{m['compression_rate']:.2f}% ({m['lookups']:.2f})"]
        if quality:
            row += [f"{m['accuracy']:.2f}%", m.get("unparsed_options", 0)]
        else:
            row += [
                f"{m['lr1']:.2f}%" if m.get("rated") else "–",
                f"{m['lr2']:.2f}%" if m.get("rated") else "–",
                m["rouge1"],
                m["rouge2"],
                m["rougeL"],
            ]
        row += [
            m["calls_per_question"],
            round(m["prompt_words_per_question"] + m["reply_words_per_question"]),
            f"{m['failures']} ({m['questions_with_failures']} q)",
        ]
        rows.append(row)
    return Table(header, rows, [about + " CR: compression rate; # LU: pages looked up."])


@renderer("docqa-speed")
def render_docqa_speed(paths: list[Path], opts: dict[str, str]) -> Table:
    """``runs.jsonl`` of ``bench/experiments/docqa_speed.py``: one ``webagent ask`` per row, its seconds,
    the load average around it, and prompt + completion tokens by purpose."""
    (path,) = paths

    def tok(p: dict | None) -> str:
        if not p:
            return "–"
        calls = p.get("calls", 0)
        return (
            f"{calls} call{'' if calls == 1 else 's'}, "
            f"{p.get('prompt_tokens', 0):,} + {p.get('completion_tokens', 0):,}"
        )

    rows = []
    for r in jsonl(path):
        by = r.get("by_purpose", {})
        rows.append(
            [
                f"{r['label']} (question {r['question_no']})",
                f"`{' '.join(r.get('options', []))}`",
                round(r["seconds"]),
                f"{r['load_before'].split()[0]} → {r['load_after'].split()[0]}",
                r.get("num_pages"),
                tok(by.get("pagination")),
                tok(by.get("gist")),
                tok(by.get("lookup")),
                tok(by.get("answer")),
                f"{r['prompt_tokens']:,} + {r['completion_tokens']:,}",
            ]
        )
    header = [
        "run",
        "options",
        "seconds",
        "load average before → after",
        "pages",
        "pagination",
        "gist",
        "look-up",
        "answer",
        "total tokens",
    ]
    return Table(header, rows, ["Tokens are prompt + completion."])


# ---------------------------------------------------------------- pages


@dataclass
class Block:
    page: Path
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


def render_block(args: str, root: Path, page: Path) -> str:
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
    except RenderError:
        raise
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
        lines += ["", source_line(f, root, page)]
    return "\n".join(lines) + "\n"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    return [
        Block(
            page, text.count("\n", 0, m.start()) + 1, m.group("args"), m.start("body"), m.end("body"), m.group("body")
        )
        for m in MARKER.finditer(text)
    ]


def default_pages(root: Path) -> list[Path]:
    pages = [root / "README.md"] if (root / "README.md").is_file() else []
    return pages + sorted((root / "docs").glob("*.md"))


def process(pages: list[Path], root: Path, write: bool) -> list[str]:
    """Render every table of ``pages``; with ``write`` update them in place. Returns one
    message per stale or broken table."""
    problems = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        new, pos = [], 0
        rel = page.relative_to(root).as_posix() if page.is_relative_to(root) else str(page)
        for b in blocks(page):
            where = f"{rel}:{b.line}: table '{b.args}'"
            try:
                body = render_block(b.args, root, page)
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
    pages = [p.resolve() for p in args.pages] or default_pages(root)
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
