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
  with its own instance of the app (``webagent.cluster``), its row appended as it comes back:
  ``AppsEval`` is the evaluator ``webagent.evaluation.evaluate`` runs, serially or on Ray.
* ``ceiling``: the model is the gold path itself (``webagent.apps.ceiling``): the share of
  tasks the agent lets a perfect model finish, and where it stood in the way.
"""

from __future__ import annotations

import atexit
import contextlib
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

import webagent.results_folder as results_folder
from webagent.agent.options import AgentOptions
from webagent.apps.ceiling import GoldModel
from webagent.apps.episode import AppsRow, error_row, run_task
from webagent.apps.instance import AppInstance, free_port, stable_port
from webagent.apps.learn import for_instance
from webagent.apps.online import for_task
from webagent.apps.spec import App, Task
from webagent.errors import UserError
from webagent.evaluation import Evaluator, Item
from webagent.results_folder import ResultsFolder


class AppsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str
    agent: AgentOptions  # the agent's options, whole: another form check or look-up is another configuration
    stop_at_goal: bool = True
    skills: bool = False  # the apps' skills learned from their demonstrations (``apps learn``) are offered
    online: bool = False  # a second pass offered skills learned from the first pass's confirmed runs


def select_tasks(apps: list[App], task_ids: list[str], shard: tuple[int, int]) -> list[tuple[App, Task]]:
    chosen = [(a, t) for a in apps for t in a.tasks if not task_ids or t.id in task_ids]
    known = {t.id for _, t in chosen}
    if missing := [t for t in task_ids if t not in known]:
        raise UserError(f"unknown task {missing[0]!r} (see `webagent apps list --tasks`)")
    return results_folder.shard(chosen, *shard)


def results(out: Path) -> ResultsFolder[AppsConfig]:
    """An apps eval results folder (``webagent.results_folder``): rows keyed by task."""
    return ResultsFolder(out, AppsConfig, AppsRow, key=lambda row: row.task, what="an apps eval run")


class AppsWorker:
    """What one worker holds: the model's client and the instance of the app it serves now
    (started on first use; a serial run serves one app at a time, a Ray worker process keeps
    one per app for the tasks that follow)."""

    _kept: dict[str, AppInstance] = {}  # a Ray worker process's instance of each app

    def __init__(self, client, remote: bool, say: Callable[[str], None] | None):
        self.client, self.remote, self.say = client, remote, say
        self.serving: AppInstance | None = None

    def instance(self, app: App) -> AppInstance:
        if self.remote:
            kept = self._kept.get(app.name)
            if kept is None or kept.proc is None or kept.proc.poll() is not None:
                # A free port, not the app's usual one: two workers that found the usual port free at
                # once both started on it, and the second worker's tasks ran on the first one's server.
                kept = self._kept[app.name] = AppInstance(app, port=free_port()).start()
                atexit.register(kept.stop)
            return kept
        if self.serving is None or self.serving.app.name != app.name:
            self.close()
            self.serving = AppInstance(app, say=self.say or (lambda line: None), port=stable_port(app.name)).start()
            if self.say:
                self.say(f"{app.name}: serving at {self.serving.base_url}")
        return self.serving

    def close(self) -> None:
        if self.serving is not None:
            self.serving.stop()
            self.serving = None


class AppsEval(Evaluator[tuple[App, Task], AppsWorker, AppsRow]):
    """``apps eval`` (see the module docstring): ``online``, per app, skills learned from a first
    pass's runs (``apps.online``), offered to every task but the one each was learned from."""

    config: AppsConfig
    noun = "tasks"

    def __init__(
        self,
        apps: list[App],
        task_ids: list[str],
        config: AppsConfig,
        *,
        ceiling: bool = False,
        shard: tuple[int, int] = (0, 1),
        online: dict[str, list] | None = None,
        say: Callable[[str], None] | None = print,
    ):
        self.config, self.ceiling, self.online, self.say = config, ceiling, online or {}, say
        pairs = select_tasks(apps, task_ids, shard)
        self.tasks = [Item(task.id, task.id, (app, task)) for app, task in pairs]  # keyed (and traced) by the task
        chosen = {app.name: app for app, _ in pairs}
        self.demonstrated = {name: _demonstrated(app) for name, app in chosen.items()} if config.skills else {}

    results = staticmethod(results)

    def plan(self) -> list[Item[tuple[App, Task]]]:
        return self.tasks

    @contextlib.asynccontextmanager
    async def worker(self, client, remote: bool):
        held = AppsWorker(client, remote, None if remote else self.say)
        try:
            yield held
        finally:
            held.close()

    async def run_item(self, worker: AppsWorker, item: Item[tuple[App, Task]], trace: Path | None) -> AppsRow:
        from webagent.llm.testing import fake_client

        app, task = item.of
        instance = worker.instance(app)
        demonstrated = for_instance(self.demonstrated.get(app.name, []), instance.base_url)
        learned = for_instance(self.online.get(app.name, []), instance.base_url)
        gold = GoldModel(task) if self.ceiling else None
        client = fake_client(gold.backend()) if gold else worker.client
        skills = for_task(demonstrated, learned, task.id) or None
        return await run_task(
            instance, task, client, self.config.agent, trace, gold, self.config.stop_at_goal, worker.say, skills
        )

    def error_row(self, item: Item[tuple[App, Task]], trace: Path | None, why: str) -> AppsRow:
        app, task = item.of
        return error_row(app.name, task, None if trace is None else str(trace), why)

    def outcome(self, row: AppsRow) -> str:
        verdict = "success" if row.success else f"failed: {row.cause}"
        return f"{verdict}; {row.steps} steps, {row.time_s:.0f} s, {row.prompt_tokens} prompt tokens"


def _demonstrated(app: App) -> list:
    """The app's skills (``webagent apps learn``), at the address they were learned on; a clear
    stop when there are none."""
    from webagent.apps.learn import app_site
    from webagent.skills import store

    learned = store.load(app_site(app))
    if not learned:
        raise UserError(f"app {app.name} has no skills yet: run `webagent apps learn --app {app.name}` first")
    return learned
