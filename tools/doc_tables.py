"""The table renderers of tools/render_docs.py: each reads one results-file format and returns a
``Table`` (``--list`` prints them and what they read); a new format is a function here
decorated with ``@renderer("name")``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.lib.results_io import read_result
from webagent.miniwob.scripted import SCRIPTED_TASKS, SUITE_TASKS


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


Column = tuple[str, Callable[[dict], Any]]  # a header and the cell a record gives under it


def column_table(columns: list[Column], records: Iterable[dict], after: list[str]) -> Table:
    """A row per record, a column per (header, cell) of ``columns``."""
    return Table([header for header, _ in columns], [[cell(r) for _, cell in columns] for r in records], after)


def markdown_table(table: Table, digits: int = 2) -> list[str]:
    lines = ["| " + " | ".join(table.header) + " |", "|" + "---|" * len(table.header)]
    lines += ["| " + " | ".join(fmt(c, digits) for c in row) + " |" for row in table.rows]
    return lines


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


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
    """The methods of an evaluation, from its ``REGISTRY`` (``webagent.method_registry.Registry``): PATH is
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
        columns: list[Column] = [
            ("tasks", lambda s: s["tasks"]),
            ("success", lambda s: frac(s["success"], s["tasks"])),
            ("median steps", lambda s: s.get("median_steps")),
            ("median s / task", lambda s: s.get("median_seconds")),
            ("median prompt tokens / task", lambda s: s.get("median_prompt_tokens")),
        ]
        return column_table(columns, [s], [_summary_config(s)])
    raise RenderError(f"apps-summary: unknown view {view!r} (by-app, by-kind, causes, totals)")


@renderer("apps-peers")
def render_apps_peers(paths: list[Path], opts: dict[str, str]) -> Table:
    """``results.json`` of ``bench/rivals/apps_peers.py``: each peer on the real-app suite
    through one model server (per setting: model, cap, step limit)."""
    (path,) = paths
    d = load_json(path)
    columns: list[Column] = [
        ("setting", lambda p: p["setting"]),
        ("peer", lambda p: p["peer"]),
        ("tasks", lambda p: p["tasks"]),
        ("success", lambda p: frac(p["success"], p["tasks"])),
        ("failure", lambda p: p["failure"]),
        ("capped", lambda p: p["capped"]),
        ("error", lambda p: p["error"]),
        ("model calls / task", lambda p: round(p["calls"], 1)),
        ("prompt tokens / task", lambda p: round(p["prompt_tokens"])),
        ("completion tokens / task", lambda p: round(p["completion_tokens"])),
        ("s / task", lambda p: round(p["wall_s"])),
    ]
    peers = [{**p, "setting": s, "peer": peer} for s, by in d["summary"].items() for peer, p in sorted(by.items())]
    return column_table(columns, peers, [f"Tasks: {', '.join(d.get('tasks', []))}."])


@renderer("miniwob-peers")
def render_miniwob_peers(paths: list[Path], opts: dict[str, str]) -> Table:
    """``results.json`` of ``bench/rivals/run.py``: webagent, browser-use and AgentLab on the
    same MiniWoB++ episodes through one model server."""
    (path,) = paths
    d = load_json(path)
    columns: list[Column] = [
        ("agent", lambda a: a["agent"]),
        ("episodes", lambda a: a["episodes"]),
        ("success", lambda a: frac(a["successes"], a["episodes"])),
        ("mean steps", lambda a: round(a["mean_steps"], 1)),
        ("model calls / episode", lambda a: round(a["mean_calls"], 1)),
        ("prompt tokens / episode", lambda a: round(a["mean_prompt_tokens"])),
        ("of which from the prompt cache", lambda a: round(a["mean_cached_tokens"])),
        (
            "prompt tokens / success",
            lambda a: round(a["prompt_tokens_per_success"]) if a.get("prompt_tokens_per_success") else None,
        ),
        ("capped by wall time", lambda a: a["timeouts"]),
        ("errors", lambda a: a["errors"]),
    ]
    agents = [{**a, "agent": agent} for agent, a in d["summary"].items()]
    after = [
        f"Model {d.get('model')}; tasks {', '.join(d.get('tasks', []))}; seeds "
        f"{', '.join(str(s) for s in d.get('seeds', []))}; at most {d.get('max_steps')} steps and "
        f"{d.get('episode_timeout_s')} s per episode."
    ]
    return column_table(columns, agents, after + [f"target: {t}" for t in d.get("targets", [])])


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
        eps = [e for e in read_result(file)[0] if seeds is None or e.get("seed") in seeds]
        config = file.parent / "config.json"
        model = load_json(config).get("model", "?") if config.is_file() else "?"
        runs.append((file.parent.name, model.split("@")[0], eps))
    tasks = [t for t in SUITE_TASKS if any(e["task"] == t for _, _, eps in runs for e in eps)]
    header = ["run", "model", *tasks, "five tasks", "prompt tokens / step", "s / step"]
    rows = []
    for name, model, eps in runs:
        row: list[Any] = [name, model]
        for t in tasks:
            mine = [e for e in eps if e["task"] == t]
            row.append(f"{sum(bool(e['success']) for e in mine)}/{len(mine)}" if mine else "–")
        five = [e for e in eps if e["task"] in SCRIPTED_TASKS]
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
        columns: list[Column] = [
            ("artefact", lambda b: b["artefact"]),
            ("documents", lambda b: b["documents"]),
            ("from cache", lambda b: b["from_cache"]),
            ("calls", lambda b: b["calls"]),
            ("words", lambda b: b["prompt_words"] + b["reply_words"]),
            ("words / question (amortised)", lambda b: round(b["words_per_question"], 1)),
            ("failures", lambda b: b["failures"]),
        ]
        return column_table(columns, [{**b, "artefact": k} for k, b in r["memory_building"].items()], [about])
    if view != "methods":
        raise RenderError(f"docqa-report: unknown view {view!r} (methods, building)")
    columns = [
        ("method", lambda m: m["method"]),
        ("CR (# LU)", lambda m: f"{m['compression_rate']:.2f}% ({m['lookups']:.2f})"),
    ]
    if r["dataset"] == "quality":
        columns += [
            ("accuracy", lambda m: f"{m['accuracy']:.2f}%"),
            ("unparsed", lambda m: m.get("unparsed_options", 0)),
        ]
    else:
        columns += [
            ("LR-1", lambda m: f"{m['lr1']:.2f}%" if m.get("rated") else "–"),
            ("LR-2", lambda m: f"{m['lr2']:.2f}%" if m.get("rated") else "–"),
            ("R-1", lambda m: m["rouge1"]),
            ("R-2", lambda m: m["rouge2"]),
            ("R-L", lambda m: m["rougeL"]),
        ]
    columns += [
        ("calls / q", lambda m: m["calls_per_question"]),
        ("words / q", lambda m: round(m["prompt_words_per_question"] + m["reply_words_per_question"])),
        ("failures", lambda m: f"{m['failures']} ({m['questions_with_failures']} q)"),
    ]
    methods = [{**m, "method": name} for name, m in r["methods"].items()]
    return column_table(columns, methods, [about + " CR: compression rate; # LU: pages looked up."])


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

    columns: list[Column] = [
        ("run", lambda r: f"{r['label']} (question {r['question_no']})"),
        ("options", lambda r: f"`{' '.join(r.get('options', []))}`"),
        ("seconds", lambda r: round(r["seconds"])),
        ("load average before → after", lambda r: f"{r['load_before'].split()[0]} → {r['load_after'].split()[0]}"),
        ("pages", lambda r: r.get("num_pages")),
        ("pagination", lambda r: tok(r.get("by_purpose", {}).get("pagination"))),
        ("gist", lambda r: tok(r.get("by_purpose", {}).get("gist"))),
        ("look-up", lambda r: tok(r.get("by_purpose", {}).get("lookup"))),
        ("answer", lambda r: tok(r.get("by_purpose", {}).get("answer"))),
        ("total tokens", lambda r: f"{r['prompt_tokens']:,} + {r['completion_tokens']:,}"),
    ]
    return column_table(columns, read_result(path)[0], ["Tokens are prompt + completion."])
