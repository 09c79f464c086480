"""webagent's real-app suite (Roundup, django-oscar, django-helpdesk) as BrowserGym tasks,
for ``browsergym-core``'s task interface, so that AgentLab's GenericAgent (or any BrowserGym
agent) runs them unchanged. Standard library plus BrowserGym only (and the app's check from
``episode_process.py``): imported in bench/rivals/.venv-agentlab, never in webagent's venv, and it
does not import webagent.

    from bench.rivals import apps_browsergym    # registers browsergym/webagent-apps.<task id>
    env = gym.make("browsergym/webagent-apps.oscar-login-alice",
                   task_kwargs={"instance": INSTANCE}, headless=True, ...)

Each task of each app folder (``webagent/apps/builtin/*/tasks.json``, the same records
``webagent apps`` reads) is registered as ``browsergym/webagent-apps.<task id>``. The app
itself is not served here: a running instance (``webagent.apps.instance.AppInstance``, in the
harness's process, ``apps_peers.py``) is described by INSTANCE, a dict given as the
``instance`` task kwarg or as JSON in ``$WEBAGENT_APPS_INSTANCE``:

    {"base_url": "http://127.0.0.1:PORT",     # the instance's server
     "state": ".../live/state-XXXX",          # its live state folder
     "pristine": ".../pristine-XXXX",         # its pristine state (for the reset)
     "python": ".../apps/oscar/venv/bin/python",   # the app venv's python
     "app_folder": ".../webagent/apps/builtin/oscar",
     "reset_python": "/work/main/.venv/bin/python"}  # optional: webagent's, for its restore()

* ``setup(page)`` resets the instance to pristine (webagent's own ``restore``, run with
  ``reset_python``, when given; the harness also resets before each episode), opens the task's
  start URL and returns the task text as the goal.
* ``validate(page, chat_messages)`` runs the app's own check, ``PYTHON app.py check STATE
  TASK_ID [--answer A]`` (its database, never the page). For a task that is not an answer
  task: reward 1 and done as soon as it passes (as webagent's ``apps eval`` stops once the
  app's check passes). For an answer task: when the agent has sent a message to the user
  (``send_msg_to_user``), the check gets that message as the answer, and the episode is done
  either way. A message (or ``report_infeasible``) on any task ends the episode: it is the
  agent's "done".
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import playwright.sync_api
from browsergym.core.registration import register_task
from browsergym.core.task import AbstractBrowserTask

from bench.rivals.episode_process import app_check

APPS_DIR = Path(
    os.environ.get("WEBAGENT_APPS_DIR")
    or Path(__file__).resolve().parent.parent.parent / "webagent" / "apps" / "builtin"
)
PREFIX = "webagent-apps"
RESTORE = (
    "import sys; from pathlib import Path; from webagent.apps.instance import restore; "
    "restore(Path(sys.argv[1]), Path(sys.argv[2]))"
)


def load_tasks(apps_dir: Path = APPS_DIR) -> dict[str, dict]:
    """Every task of every app folder: {task id: {app, goal, start, answer_task, ...}}."""
    tasks = {}
    for folder in sorted(p for p in apps_dir.iterdir() if (p / "tasks.json").is_file()):
        for t in json.loads((folder / "tasks.json").read_text(encoding="utf-8")):
            last = t["gold"][-1]
            tasks[t["id"]] = {
                "app": folder.name,
                "app_folder": str(folder),
                "goal": t["task"],
                "start": t.get("start", "/"),
                "kinds": t.get("kinds", []),
                "answer_task": last.get("op") == "done" and bool(last.get("value")),
            }
    return tasks


class WebagentAppTask(AbstractBrowserTask):
    """One task of webagent's app suite on a running instance (see the module docstring)."""

    def __init__(
        self,
        seed: int,
        task_id: str,
        app: str,
        app_folder: str,
        goal: str,
        start: str = "/",
        answer_task: bool = False,
        kinds: list | None = None,
        instance: dict | None = None,
    ) -> None:
        super().__init__(seed)
        self.task_id, self.app, self.goal, self.start = task_id, app, goal, start
        self.answer_task, self.kinds = answer_task, kinds or []
        if instance is None:
            raw = os.environ.get("WEBAGENT_APPS_INSTANCE")
            if not raw:
                raise ValueError(f"{task_id}: no app instance (task kwarg 'instance' or $WEBAGENT_APPS_INSTANCE)")
            instance = json.loads(raw)
        self.instance = {"app_folder": app_folder, **instance}
        self.viewport = {"width": 1280, "height": 800}
        self.timeout = 10000  # ms, Playwright's default for each action
        self.last_check: tuple[bool, str] | None = None
        self.answer: str | None = None

    @classmethod
    def get_task_id(cls):
        return PREFIX

    def reset_app(self) -> None:
        inst = self.instance
        if inst.get("reset_python") and inst.get("pristine"):
            subprocess.run(
                [inst["reset_python"], "-c", RESTORE, inst["pristine"], inst["state"]],
                check=True,
                capture_output=True,
                timeout=120,
            )

    def setup(self, page: playwright.sync_api.Page) -> tuple[str, dict]:
        self.reset_app()
        page.goto(self.instance["base_url"].rstrip("/") + self.start, wait_until="load")
        return self.goal, {"task_id": self.task_id, "app": self.app}

    def teardown(self) -> None:
        pass

    def validate(self, page: playwright.sync_api.Page, chat_messages: list) -> tuple[float, bool, str, dict]:
        # the agent's own "done": a message to the user (or report_infeasible) after the goal
        said = None
        if (
            chat_messages
            and chat_messages[-1]["role"] in ("assistant", "infeasible")
            and any(m["role"] == "user" for m in chat_messages[:-1])
        ):
            said = chat_messages[-1]["message"]
        if self.answer_task:
            if said is None:
                return 0.0, False, "", {}
            self.answer = said
            ok, why = self.last_check = app_check(self.instance, self.task_id, said)
            return float(ok), True, "", {"check": why}
        ok, why = self.last_check = app_check(self.instance, self.task_id)
        if ok:
            return 1.0, True, "", {"check": why}
        return 0.0, said is not None, "", {"check": why}


def register_all(apps_dir: Path = APPS_DIR) -> list[str]:
    """Register every task as ``browsergym/webagent-apps.<task id>``; returns the gym ids."""
    ids = []
    for task_id, t in load_tasks(apps_dir).items():
        gym_id = f"{PREFIX}.{task_id}"
        register_task(gym_id, WebagentAppTask, task_kwargs={"task_id": task_id, **t})
        ids.append(f"browsergym/{gym_id}")
    return ids


ALL_TASK_IDS = register_all()
