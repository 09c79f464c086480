"""``report.html`` of a replay: the run report (``webagent.agent.report``) with each
step marked replayed, repaired or failed, and a table on top: recorded step, mark,
how its element was found again (or why not), model calls."""

from __future__ import annotations

import json
from html import escape

from webagent.trace.record import StepRecord

_MARK_STYLE = (
    "<style>.mark{font-size:.7em;padding:1px 6px;border-radius:4px;margin-left:.5em;color:#fff}"
    ".replayed{background:#1a7f37}.repaired{background:#b26a00}.failed{background:#c62828}</style>"
)


def annex(steps: list[StepRecord], run: dict) -> tuple[str, str, dict[int, str]]:
    """The marks' style, the replay's table and each step's mark."""
    replay = run.get("replay") or {}
    marks = {s.step: s.replay or "failed" for s in steps}
    rows = []
    for s in steps:
        how = s.miss or (s.match or {}).get("why") or ""
        calls = s.usage.get("calls", 0)
        workflow_step = "" if s.workflow_step is None else s.workflow_step
        rows.append(
            f"<tr><td>{s.step}</td><td>{workflow_step}</td>"
            f'<td><span class="mark {escape(marks[s.step])}">{escape(marks[s.step])}</span></td>'
            f"<td>{escape(s.recorded or '')}</td><td>{escape(s.action_text)}</td>"
            f"<td>{escape(how)}</td><td>{calls}</td></tr>"
        )
    table = (
        f"<h2>Replay: {replay.get('replayed', 0)} steps replayed, {replay.get('repaired', 0)} repaired, "
        f"{replay.get('model_calls', 0)} model calls, {replay.get('wall_s', 0):.1f} s</h2>"
        f'<p class="meta">from {escape(str((replay.get("source") or {}).get("trace", "")))}; '
        f"parameters: {escape(json.dumps(replay.get('params') or {}, ensure_ascii=False))}</p>"
        "<table><tr><th>Step</th><th>Recorded step</th><th>Mark</th><th>Recorded</th><th>Done now</th>"
        "<th>Element found again / why not</th><th>Model calls</th></tr>" + "".join(rows) + "</table>"
    )
    return _MARK_STYLE, table, marks
