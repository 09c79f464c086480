"""``webagent apps eval``: the agent on the suite's tasks, one fresh instance per task (the
app reset to pristine), a trace per task, success by the app's own database check.

* The run ends when the app's check passes after an action (the site's word, as the demo
  shop's confirmation or MiniWoB's reward), or when the agent stops (DONE, step limit,
  stuck, error). An answer task is judged on the DONE answer by the same check.
  ``stop_at_goal=False`` lets the model go on after the check first passes (its step is the
  row's ``goal_step``) until it stops; the task then counts only if the check still passes
  at the end, and ``went_on`` counts the actions it took after the goal (DONE aside). Up to
  the goal step the run is the one ``stop_at_goal`` would have made.
* ``OUT/config.json`` holds what decides the results; ``OUT/episodes.jsonl`` gets a row per
  finished task at once, so a killed run resumes (an ``error`` row is run again). Resuming
  with another configuration is refused. ``--shard i/n`` takes every n-th task from the i-th (0-based);
  ``merge`` joins the shards' rows. With ``--ray`` each pending task is a Ray task, in a worker
  with its own instance of the app (``webagent.cluster``, ``apps.remote``), its row appended as
  it comes back.
* ``ceiling``: the model is the gold path itself (``webagent.apps.ceiling``): the share of
  tasks the agent lets a perfect model finish, and where it stood in the way.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

import webagent.harness as harness
from webagent.apps.ceiling import GoldModel
from webagent.apps.episode import error_row, run_task
from webagent.apps.instance import AppInstance, stable_port
from webagent.apps.learn import for_instance
from webagent.apps.online import for_task
from webagent.apps.spec import App, Task
from webagent.errors import UserError
from webagent.harness import ResultsFolder


class AppsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str
    max_steps: int
    lookup: str
    context_tokens: int
    stop_at_goal: bool = True
    skills: bool = False  # the apps' skills learned from their demonstrations (``apps learn``) are offered
    online: bool = False  # a second pass offered skills learned from the first pass's confirmed runs


def select_tasks(apps: list[App], task_ids: list[str], shard: tuple[int, int]) -> list[tuple[App, Task]]:
    chosen = [(a, t) for a in apps for t in a.tasks if not task_ids or t.id in task_ids]
    if task_ids:
        known = {t.id for _, t in chosen}
        missing = [t for t in task_ids if t not in known]
        if missing:
            raise UserError(f"unknown task {missing[0]!r} (see `webagent apps list --tasks`)")
    return harness.shard(chosen, *shard)


def results(out: Path) -> ResultsFolder[AppsConfig]:
    """An apps eval results folder (``webagent.harness``): rows keyed by task."""
    return ResultsFolder(out, AppsConfig, key=lambda row: row["task"], what="an apps eval run")


def read_rows(out: Path) -> dict[str, dict]:
    """The last row of each task in ``episodes.jsonl``."""
    return results(out).rows()  # type: ignore[return-value]


async def evaluate(
    apps: list[App],
    task_ids: list[str],
    out: Path,
    *,
    options,
    config: AppsConfig,
    client=None,
    ceiling: bool = False,
    shard: tuple[int, int] = (0, 1),
    say: Callable[[str], None] = print,
    online: dict[str, list] | None = None,
    cluster=None,
    endpoint=None,
) -> list[dict]:
    """Run the chosen tasks not yet in ``out`` (see the module docstring); returns all rows.
    ``online``: per app, skills learned from a first pass's runs (``apps.online``), offered
    to every task but the one each was learned from. ``cluster``: a connected Ray
    (``webagent.cluster``) runs the tasks instead, each in a worker with its own instance, on
    ``endpoint`` (the run's ``EndpointOptions``; the workers open their own clients)."""
    from webagent.llm.testing import fake_client

    folder = results(out)
    folder.pin(config)
    pairs = select_tasks(apps, task_ids, shard)
    rows = read_rows(out)
    done = folder.done(rows)
    todo = [(a, t) for a, t in pairs if t.id not in done]
    say(f"{len(pairs)} tasks, {len(pairs) - len(todo)} already in {out / 'episodes.jsonl'}")
    done_before = len(pairs) - len(todo)
    if cluster is not None:
        # Each pending task a Ray task (``webagent.cluster``; the worker side is ``apps.remote``),
        # its row appended as it comes back.
        from webagent.apps import remote
        from webagent.cluster import Job, run_jobs, worker_endpoint

        model = None if ceiling else worker_endpoint(endpoint, client)
        pending_apps = {app.name: app for app, _ in todo}
        by_demos = {name: _demonstrated(app) for name, app in pending_apps.items()} if config.skills else {}
        jobs = [
            Job(
                key=task.id,
                label=task.id,
                run=remote.episode,
                args=(
                    app,
                    task.id,
                    options,
                    config.stop_at_goal,
                    ceiling,
                    model,
                    by_demos.get(app.name, []),
                    (online or {}).get(app.name, []),
                ),
                trace=str(out / "traces" / task.id),
            )
            for app, task in todo
        ]

        def keep(job, row: dict) -> None:
            rows[row["task"]] = row
            folder.append(row)

        def lost(job, why: str) -> dict:
            app, task_id = job.args[0], job.args[1]
            return error_row(app.name, next(t for t in app.tasks if t.id == task_id), job.trace, why)

        run_jobs(
            cluster,
            jobs,
            on_row=keep,
            lost_row=lost,
            describe=_outcome,
            failed=lambda row: not row["success"],
            say=say,
            done_before=done_before,
        )
        return [rows[t.id] for _, t in pairs if t.id in rows]
    by_app: dict[str, list[Task]] = {}
    for app, task in todo:
        by_app.setdefault(app.name, []).append(task)
    apps_by_name = {a.name: a for a in apps}
    k = done_before
    for name, tasks in by_app.items():
        with AppInstance(apps_by_name[name], say=say, port=stable_port(name)) as instance:
            say(f"{name}: serving at {instance.base_url}")
            demonstrated = for_instance(_demonstrated(apps_by_name[name]), instance.base_url) if config.skills else []
            learned = for_instance((online or {}).get(name, []), instance.base_url)
            for task in tasks:
                skills = for_task(demonstrated, learned, task.id) or None
                gold = GoldModel(task) if ceiling else None
                task_client = fake_client(gold.backend()) if gold else client
                row = await run_task(
                    instance,
                    task,
                    task_client,
                    options,
                    out / "traces" / task.id,
                    gold,
                    config.stop_at_goal,
                    say,
                    skills,
                )
                rows[task.id] = row
                folder.append(row)
                k += 1
                say(f"[{k}/{len(pairs)}] {task.id}: {_outcome(row)}")
    return [rows[t.id] for _, t in pairs if t.id in rows]


def _outcome(row: dict) -> str:
    verdict = "success" if row["success"] else f"failed: {row['cause']}"
    return f"{verdict}; {row['steps']} steps, {row['time_s']:.0f} s, {row.get('prompt_tokens', 0)} prompt tokens"


def _demonstrated(app: App) -> list:
    """The app's skills (``webagent apps learn``), at the address they were learned on; a clear
    stop when there are none."""
    from webagent.apps.learn import app_site
    from webagent.skills import store

    learned = store.load(app_site(app))
    if not learned:
        raise UserError(f"app {app.name} has no skills yet: run `webagent apps learn --app {app.name}` first")
    return learned


def merge(shards: list[Path], out: Path) -> int:
    """Join the rows of shard folders (same configuration) into ``out``; returns the row count."""
    return harness.merge(shards, out, results(out))
