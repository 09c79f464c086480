"""One real-app task (webagent's app suite) with browser-use's ``Agent``, from its own
package. Runs in bench/rivals/.venv-browser-use:

    python -m bench.rivals.apps_browseruse SPEC.json      # from the repository root; written by bench/rivals/apps_peers.py

SPEC: ``task_id, goal, start_url, answer_task, check`` (the app's check command: ``python``,
``app_folder``, ``state``), ``base_url, model, max_steps, timeout_s, flash_mode``, and
``demos`` (optional: the app's demonstrations as text, ``demos_text.py``; appended to
browser-use's system prompt through ``Agent(extend_system_message=...)``).

The app instance is the harness's (already reset). browser-use gets the task text as its
task on the task's start page, already open in Debian's Chromium (launched here, attached
over CDP), with its OpenAI-compatible ``ChatOpenAI`` pointed at ``base_url`` (the counting
proxy). As webagent's ``apps eval`` does, the app's own database check runs after every step
of a task that is not an answer task, and the run stops once it passes (the site's word);
an answer task is judged by the harness on browser-use's final answer (its ``done`` text).
The last stdout line is one JSON object; the harness runs the check again after the run.
"""

from __future__ import annotations

import asyncio
import json
from functools import partial
from importlib.metadata import version

from bench.rivals.browseruse_episode import browser_session, main, make_agent, run
from bench.rivals.episode_process import app_check, apps_error_row


async def episode(spec: dict, cdp_url: str) -> dict:
    row = {
        "peer": "browser-use",
        "version": f"browser-use {version('browser-use')}",
        "task": spec["task_id"],
        "steps": 0,
        "done": False,
        "answer": None,
        "stopped_by_check": False,
        "error": None,
        "demos": bool(spec.get("demos")),
    }
    async with browser_session(cdp_url) as session:
        await session.navigate_to(spec["start_url"])
        demos = spec.get("demos") or None  # the app's demonstrations, as text
        agent = make_agent(spec, session, spec["goal"], extend_system_message=demos)

        async def on_step_end(agent) -> None:  # the app's word after each step, as webagent's eval has it
            if spec["answer_task"]:
                return
            try:
                ok, why = await asyncio.to_thread(app_check, spec["check"], spec["task_id"])
            except Exception as exc:  # noqa: BLE001 - the harness checks again at the end
                row["step_check_error"] = str(exc)[:200]
                return
            if ok:
                row["stopped_by_check"] = True
                agent.stop()

        hist = await run(agent, spec, row, mark_capped=True, on_step_end=on_step_end)
        row["steps"] = len([h for h in hist.history if h.model_output is not None])
        row["done"] = bool(hist.is_done())
        row["answer"] = hist.final_result() if row["done"] else None
        row["agent_errors"] = [e[:300] for e in hist.errors() if e][:3]
        # an action carries the element it acted on (a DOMInteractedElement): written as its str()
        row["actions"] = [json.dumps(a, default=str)[:200] for a in hist.model_actions()][:30]
        row["urls"] = [u for u in hist.urls() if u][-3:]
    return row


if __name__ == "__main__":
    main(episode, partial(apps_error_row, "browser-use"))
