"""The worker side of ``apps eval --ray``: one task in a Ray worker process, on that process's
own instance of the app (started on first use and kept for the tasks that follow, as a serial
run keeps one per app; the app is installed on first use under the node's ``$WEBAGENT_HOME``).
The row is ``episode.run_task``'s, as a serial run writes it."""

from __future__ import annotations

import asyncio
import atexit
from pathlib import Path
from typing import Any

from webagent.apps.instance import AppInstance, free_port
from webagent.apps.spec import App
from webagent.cluster import with_usage
from webagent.llm.endpoint import EndpointOptions

_instances: dict[str, AppInstance] = {}  # this worker process's instance of each app


def _instance(app: App) -> AppInstance:
    instance = _instances.get(app.name)
    if instance is None or instance.proc is None or instance.proc.poll() is not None:
        # A free port, not the app's usual one: two workers that found the usual port free at
        # once both started on it, and the second worker's tasks ran on the first one's server.
        instance = AppInstance(app, port=free_port()).start()
        _instances[app.name] = instance
        atexit.register(instance.stop)
    return instance


def episode(
    app: App,
    task_id: str,
    options,
    stop_at_goal: bool,
    ceiling: bool,
    endpoint: EndpointOptions | None,
    demonstrated: list,
    online: list,
    trace: str | None,
) -> dict:
    """Run ``task_id`` of ``app``; its row. ``endpoint``: the model every worker reaches
    (None with ``ceiling``: the gold path is the model); ``demonstrated`` / ``online``: the
    skills as the driver loaded them, moved to this instance's address here."""
    from webagent.apps.ceiling import GoldModel
    from webagent.apps.episode import run_task
    from webagent.apps.learn import for_instance
    from webagent.apps.online import for_task

    instance = _instance(app)
    task = next(t for t in app.tasks if t.id == task_id)
    skills = for_task(for_instance(demonstrated, instance.base_url), for_instance(online, instance.base_url), task.id)
    gold = GoldModel(task) if ceiling else None

    async def run() -> dict:
        from contextlib import nullcontext

        from webagent.llm.endpoint import open_client
        from webagent.llm.testing import fake_client

        if gold is not None:  # the ceiling: the gold path is the model
            model: Any = nullcontext(fake_client(gold.backend()))
        else:
            assert endpoint is not None
            model = open_client(endpoint)
        async with model as client:
            row = await run_task(
                instance,
                task,
                client,
                options,
                Path(trace) if trace else None,
                gold,
                stop_at_goal,
                None,
                skills or None,
            )
            return with_usage(row, client)

    return asyncio.run(run())
