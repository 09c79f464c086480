"""``report.html``: one self-contained page per run (screenshots inlined as data URIs):
the outcome, then each step — URL, the action and the element acted on, its result, the
screenshot with that element outlined, sizes and time, and folded: the gists, the
look-up, the model's replies, the step's usage."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from html import escape
from pathlib import Path

from webagent.trace.record import FILE, StepRecord, read_steps

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.4em} .step{border:1px solid #ccc;border-radius:6px;padding:.6em 1em;margin:1em 0}
.ok{color:#1a7f37} .fail{color:#c62828} .meta{color:#666;font-size:.9em}
img{max-width:100%;border:1px solid #ddd;margin:.5em 0} pre{white-space:pre-wrap;background:#f6f6f6;padding:.5em}
summary{cursor:pointer;color:#333} table{border-collapse:collapse} td,th{padding:2px 8px;border-bottom:1px solid #eee}
"""


def _pre(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, indent=1, ensure_ascii=False)
    return f"<pre>{escape(text)}</pre>"


def _fold(title: str, body: str) -> str:
    return f"<details><summary>{escape(title)}</summary>{body}</details>"


def _image(folder: Path, name: str | None) -> str:
    if not name or not (folder / name).is_file():
        return ""
    data = base64.b64encode((folder / name).read_bytes()).decode("ascii")
    return f'<img alt="{escape(name)}" src="data:image/png;base64,{data}">'


def _step_html(folder: Path, step: StepRecord, mark: str = "") -> str:
    cls = "ok" if step.ok else "fail"
    badge = f'<span class="mark {mark}">{mark}</span>' if mark else ""
    parts = [
        f'<div class="step"><h2>Step {step.step}{badge}</h2>',
        f'<div class="meta">{escape(step.url)} — {escape(step.title)}</div>',
        f"<p><b>Action:</b> {escape(step.action_text)}</p>",
    ]
    if step.reason:  # the model's reason before its action (never executed)
        parts.insert(2, f"<p><b>Reason:</b> {escape(step.reason)}</p>")
    if step.element:
        parts.append(f"<p><b>Element:</b> {escape(step.element)}</p>")
    parts.append(f'<p><b>Result:</b> <span class="{cls}">{escape(step.result_text)}</span></p>')
    if step.problem:
        parts.append(f'<p class="fail"><b>Problem:</b> {escape(step.problem)}</p>')
    times = ", ".join(f"{k.removesuffix('_s')} {v:.2f}s" for k, v in step.times.items())
    parts.append(
        f'<p class="meta">{step.snippets} snippets, {step.raw_words} words on the page, '
        f"{step.context_words} in context; {escape(times)}</p>"
    )
    if step.lookup_skipped:
        parts.append(f'<p class="meta">look-up skipped: {escape(step.lookup_skipped)}</p>')
    parts.append(_image(folder, step.screenshot))
    if step.gists:
        gists = "\n".join(f"{i}: {g}" for i, g in enumerate(step.gists))
        parts.append(_fold(f"Gists ({len(step.gists)}, {step.gists_reused} reused)", _pre(gists)))
    if step.lookup:
        parts.append(
            _fold(
                f"Look-up: snippets {step.lookup.get('pages')} (shown in full: {step.expanded})",
                _pre(step.lookup),
            )
        )
    if step.replies:
        parts.append(_fold("Model replies (action)", _pre("\n---\n".join(step.replies))))
    if step.result:
        parts.append(_fold("Browser result", _pre(step.result)))
    parts.append(_fold("Usage", _pre(step.usage)))
    parts.append("</div>")
    return "\n".join(p for p in parts if p)


# (the steps, run.json) -> (a style, a table after the outcome's, each step's mark by its number)
Annex = Callable[[list[StepRecord], dict], tuple[str, str, dict[int, str]]]


def write_report(folder: str | Path, kind: str = "run", annex: Annex | None = None) -> Path:
    """Build ``report.html`` from ``steps.jsonl`` and ``run.json`` in ``folder``; a replay's
    (``kind``) adds its ``annex`` (``webagent.replay.report``)."""
    folder = Path(folder)
    steps_path = folder / FILE
    steps = read_steps(steps_path) if steps_path.is_file() else []
    run = json.loads((folder / "run.json").read_text(encoding="utf-8")) if (folder / "run.json").is_file() else {}
    usage = run.get("usage") or {}
    style, table, marks = annex(steps, run) if annex is not None else ("", "", {})
    head = [
        f"<h1>webagent {kind}: {escape(run.get('status', 'interrupted'))}</h1>",
        "<table>",
        f"<tr><th>Task</th><td>{escape(str(run.get('task', '')))}</td></tr>",
        f"<tr><th>Status</th><td>{escape(str(run.get('status', 'interrupted')))}</td></tr>",
        f"<tr><th>Answer</th><td>{escape(str(run.get('answer') or ''))}</td></tr>",
        f"<tr><th>Error</th><td>{escape(str(run.get('error') or ''))}</td></tr>",
        f"<tr><th>Steps</th><td>{len(steps)} ({sum(not s.ok for s in steps)} failed)</td></tr>",
        f"<tr><th>Model calls</th><td>{usage.get('calls', 0)} ({usage.get('cached_calls', 0)} cached), "
        f"{usage.get('prompt_tokens', 0)} prompt + {usage.get('completion_tokens', 0)} completion tokens, "
        f"{usage.get('failures', 0)} failed calls</td></tr>",
        "</table>" + table,
    ]
    body = "\n".join(head + [_step_html(folder, s, marks.get(s.step, "")) for s in steps])
    out = folder / "report.html"
    out.write_text(
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>webagent {kind}</title>'
        f"<style>{_STYLE}</style>{style}</head><body>{body}</body></html>",
        encoding="utf-8",
    )
    return out
