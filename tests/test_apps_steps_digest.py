"""``steps.md``: an eval folder's tasks step by step, read from their traces (``apps.steps_digest``)."""

from __future__ import annotations

import json

from webagent.apps.episode import AppsRow
from webagent.apps.steps_digest import NAME, digest, write_steps
from webagent.trace.record import FILE, StepRecord


def _row(task: str, trace_dir, **kw) -> AppsRow:
    fields = dict(app="notes", task=task, kinds=["create"], gold_steps=3, success=False, status="stuck", steps=2,
                  cause="stuck (after refusals)", check="", answer=None, error=None, usage={},
                  trace_dir=str(trace_dir) if trace_dir else None)  # fmt: skip
    return AppsRow(**{**fields, **kw})


def _eval_folder(tmp_path, rows: list[AppsRow]):
    out = tmp_path / "run"
    out.mkdir()
    (out / "episodes.jsonl").write_text("".join(r.to_line() for r in rows))
    return out


def _trace(folder, task: str, steps: list[StepRecord]):
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"task": task}))
    (folder / FILE).write_text("".join(json.dumps(s.to_json()) + "\n" for s in steps))
    return folder


def test_each_task_is_told_step_by_step_from_its_trace(tmp_path):
    first = StepRecord(
        step=1, url="http://127.0.0.1:4711/notes?page=2", reason="The form makes a note.",
        action_text='SKILL [new_note] (title="Groceries") skill "Save"', result_text="ok, now on /notes/7",
    )  # fmt: skip
    second = StepRecord(
        step=2, url="http://127.0.0.1:4711/notes/7", warning="SKILL [new_note] ran to its end at step 1",
        action_text="no usable action (SKILL [new_note] ran to its end at step 1)", result_text="failed: no usable action",
    )  # fmt: skip
    trace = _trace(tmp_path / "traces" / "notes-create", "Make a note titled Groceries.", [first, second])
    out = _eval_folder(
        tmp_path,
        [
            _row("notes-create", trace),
            _row("notes-count", None, success=True, status="done", steps=1, cause=None, kinds=["answer"]),
            _row(
                "notes-read",
                None,
                status="done",
                steps=1,
                cause="wrong action (said DONE; the app disagrees)",
                answer="3 notes",
            ),
        ],  # fmt: skip
    )
    path = write_steps(out)
    assert path == out / NAME
    text = path.read_text()
    create = text.split("## notes-create\n")[1].split("\n## ")[0]
    assert "failed: stuck (after refusals); 2 steps (gold 3)." in create
    assert "Task: Make a note titled Groceries." in create
    # the address without its host and port (they change from run to run), the query kept
    assert "1. `/notes?page=2`\n   - reason: The form makes a note.\n" in create
    assert '   - action: SKILL [new_note] (title="Groceries") skill "Save"\n   - result: ok, now on /notes/7' in create
    # the warning the second step's prompt carried comes before what the model did there
    assert create.index("2. `/notes/7`\n   - warned: SKILL [new_note] ran to its end") < create.index(
        "   - result: failed: no usable action"
    )
    assert "success (site confirmed); 1 steps (gold 3).\n\n(its trace is not on this machine)" in text
    assert 'failed: wrong action (said DONE; the app disagrees); answered "3 notes"' in text


def test_a_moved_folder_finds_its_traces_under_it(tmp_path):
    out = tmp_path / "run"
    _trace(
        out / "traces" / "notes-create", "Make a note.", [StepRecord(step=1, action_text="DONE", result_text="done")]
    )
    (out / "episodes.jsonl").write_text(_row("notes-create", "/elsewhere/traces/notes-create").to_line())
    assert "1. `/`\n   - action: DONE\n   - result: done" in (digest(out) or "")


def test_no_trace_on_this_machine_writes_nothing_and_keeps_the_digest_there(tmp_path):
    out = _eval_folder(tmp_path, [_row("notes-create", tmp_path / "gone")])
    (out / NAME).write_text("written where the traces were\n")
    assert digest(out) is None and write_steps(out) is None
    assert (out / NAME).read_text() == "written where the traces were\n"


def test_a_long_field_is_cut_and_a_trace_of_a_later_version_is_named(tmp_path):
    long = StepRecord(step=1, reason="why " * 200, action_text="CLICK [3]", result_text="ok")
    good = _trace(tmp_path / "t1", "A task.", [long])
    later = tmp_path / "t2"
    later.mkdir()
    (later / FILE).write_text(json.dumps({"version": 99, "step": 1}) + "\n")
    out = _eval_folder(tmp_path, [_row("notes-a", good), _row("notes-b", later)])
    text = digest(out) or ""
    reason = next(line for line in text.splitlines() if line.startswith("   - reason: "))
    assert len(reason) <= len("   - reason: ") + 300 and reason.endswith("…")
    assert "(its trace cannot be read: " in text and "version 99" in text


def test_the_failures_report_finds_a_trace_under_a_moved_folder(tmp_path):
    """``bench.experiments.apps_failures`` quotes a failed task's trace from ``traces/`` under the
    folder when the path the run wrote is gone (a results folder moved to another machine)."""
    from bench.experiments.apps_failures import report

    step = StepRecord(
        step=1, url="http://127.0.0.1:4711/notes", action_text="CLICK [7] [link] Notes", result_text="no visible change",
    )  # fmt: skip
    out = _eval_folder(tmp_path, [_row("notes-create", tmp_path / "gone" / "notes-create")])
    _trace(out / "traces" / "notes-create", "Make a note.", [step])
    text = report(out)
    assert "**notes-create**" in text and "-> no visible change" in text and "(no trace)" not in text
