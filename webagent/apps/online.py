"""``apps eval --learn``: skills learned online, from the evaluation's own finished runs.

A first pass runs the tasks (with the demonstrations' skills when ``--skills`` is given); every
run the app's check confirmed is cut into skills (``skills.learn.from_recording``: a SKILL the
run called counts as the steps it did); a second pass runs the tasks again with them. A task is
never offered a skill learned from its own first-pass run: for each task the online skills of
the other runs are merged with the demonstrations' (``merge``), so one run's skill never
reaches its own task through a merge either. Nothing here reads the gold paths.
"""

from __future__ import annotations

from pathlib import Path

from webagent.apps.episode import AppsRow
from webagent.apps.learn import skills_of
from webagent.skills.learn import merge
from webagent.skills.model import Skill
from webagent.skills.store import write_file

ONLINE_FILE = "online_skills.json"


def learn_from_pass(first: Path, rows: list[AppsRow]) -> dict[str, list[Skill]]:
    """Per app, the skills of the first pass's confirmed runs (unmerged: each keeps the run it
    came from in ``sources``), also written to ``first/online_skills.json``."""
    learned: dict[str, list[Skill]] = {}
    for row in rows:
        folder = Path(row.trace_dir or "")
        if not row.success or not (folder / "run.json").is_file():
            continue
        skills = skills_of(folder)  # none from a confirmed run of one click or an answer read off a page
        learned.setdefault(row.app, []).extend(s.model_copy(update={"sources": [str(folder)]}) for s in skills)
    write_file(first / ONLINE_FILE, [s for skills in learned.values() for s in skills])
    return learned


def for_task(demonstrated: list[Skill], online: list[Skill], task_id: str) -> list[Skill]:
    """The skills a second-pass task is offered: the demonstrations' and those learned from
    the other tasks' runs (a run's trace folder is named after its task)."""
    others = [s for s in online if not any(Path(src).name == task_id for src in s.sources)]
    return merge([*demonstrated, *others]) if others else demonstrated


def summary_line(label: str, rows: list[AppsRow]) -> str:
    done = sum(1 for r in rows if r.success)
    return f"{label}: {done}/{len(rows)} tasks" + (f" ({done / len(rows):.0%})" if rows else "")
