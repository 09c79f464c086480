"""One MiniWoB++ episode with browser-use's ``Agent``. Runs in bench/rivals/.venv-browser-use:

    python -m bench.rivals.run_browseruse SPEC.json      # from the repository root; written by bench/rivals/run.py

SPEC: ``task_url, task, seed, start_js, status_js, base_url, model, max_steps, timeout_s``.
The episode starts exactly as webagent's does (the same ``start_js``: ``Math.seedrandom(seed)``,
``core.startEpisodeReal()``, the utterance); browser-use then gets the utterance as its task,
on the task page already open, in Debian's Chromium (launched here, attached over CDP), with
its OpenAI-compatible ``ChatOpenAI`` pointed at ``base_url``. Afterwards MiniWoB's own
``WOB_RAW_REWARD_GLOBAL`` is read. The last stdout line is one JSON object.
"""

from __future__ import annotations

import json
from functools import partial
from importlib.metadata import version

from bench.rivals.browseruse_episode import browser_session, evaluate, main, make_agent, run
from bench.rivals.episode_process import miniwob_error_row, miniwob_row


async def episode(spec: dict, cdp_url: str) -> dict:
    row = miniwob_row("browser-use", version("browser-use"), spec)
    async with browser_session(cdp_url) as session:
        await session.navigate_to(spec["task_url"])
        start = json.dumps([spec["seed"], int(spec["episode_max_s"] * 1000), 10000])
        out = await evaluate(session, f"({spec['start_js']})({start})")
        if not out or "error" in out:
            row["error"] = f"episode did not start: {out}"
            return row
        row["utterance"] = out["utterance"]
        episode_tab = session.agent_focus_target_id  # the reward is read here even if the agent opens other tabs
        hist = await run(make_agent(spec, session, out["utterance"]), spec, row)
        row["steps"] = len(hist.history)
        row["done"] = bool(hist.is_done())
        row["agent_errors"] = [e for e in hist.errors() if e][:3]
        try:
            status = await evaluate(session, spec["status_js"], episode_tab) or {}
        except Exception as exc:  # noqa: BLE001 - a page mid-navigation or gone: no reward
            status = {"left": f"status not readable: {exc}"}
        if "left" in status:  # the agent navigated away from the task page: raw reward 0
            row["left_task_page"] = status["left"][:200]
        row.update(
            raw_reward=float(status.get("raw_reward") or 0.0),
            wob_done=bool(status.get("done")),
            success=float(status.get("raw_reward") or 0.0) > 0,
        )
    return row


if __name__ == "__main__":
    main(episode, partial(miniwob_error_row, "browser-use"))
