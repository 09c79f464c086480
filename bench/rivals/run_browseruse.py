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

import asyncio
import json
import logging
import os
import sys
import time
from importlib.metadata import version
from pathlib import Path

from bench.rivals.chromium import shared_chromium

os.environ.setdefault("ANONYMIZED_TELEMETRY", "false")
os.environ.setdefault("BROWSER_USE_CLOUD_SYNC", "false")
os.environ.setdefault("BROWSER_USE_LOGGING_LEVEL", "info")


async def evaluate(session, expression: str, target_id=None):
    cdp = (
        await session.get_or_create_cdp_session(target_id=target_id, focus=False)
        if target_id
        else await session.get_or_create_cdp_session()
    )
    out = await cdp.cdp_client.send.Runtime.evaluate(
        params={"expression": expression, "awaitPromise": True, "returnByValue": True}, session_id=cdp.session_id
    )
    if out.get("exceptionDetails"):
        raise RuntimeError(f"page script failed: {out['exceptionDetails'].get('text')}")
    return out.get("result", {}).get("value")


async def episode(spec: dict, cdp_url: str) -> dict:
    from browser_use import Agent, BrowserSession, ChatOpenAI

    row = {
        "agent": "browser-use",
        "version": version("browser-use"),
        "task": spec["task"],
        "seed": spec["seed"],
        "steps": 0,
        "raw_reward": 0.0,
        "success": False,
        "done": False,
        "error": None,
        "utterance": None,
    }
    session = BrowserSession(cdp_url=cdp_url, keep_alive=True)
    await session.start()
    try:
        await session.navigate_to(spec["task_url"])
        start = json.dumps([spec["seed"], int(spec["episode_max_s"] * 1000), 10000])
        out = await evaluate(session, f"({spec['start_js']})({start})")
        if not out or "error" in out:
            row["error"] = f"episode did not start: {out}"
            return row
        row["utterance"] = out["utterance"]
        episode_tab = session.agent_focus_target_id  # the reward is read here even if the agent opens other tabs
        llm = ChatOpenAI(
            model=spec["model"], base_url=spec["base_url"], api_key="none", timeout=spec["timeout_s"], max_retries=1
        )
        agent = Agent(
            task=out["utterance"],
            llm=llm,
            browser_session=session,
            use_vision=False,
            use_judge=False,
            calculate_cost=False,
            step_timeout=int(spec["timeout_s"]),
            llm_timeout=int(spec["timeout_s"]),
            directly_open_url=False,
            flash_mode=bool(spec.get("flash_mode", True)),
        )
        t0 = time.perf_counter()
        history = None
        try:
            history = await asyncio.wait_for(agent.run(max_steps=spec["max_steps"]), spec["timeout_s"])
        except TimeoutError:
            row["error"] = f"wall-time cap of {spec['timeout_s']:g} s reached"
        row["time_s"] = round(time.perf_counter() - t0, 1)
        hist = history if history is not None else agent.history
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
    finally:
        try:
            await asyncio.wait_for(session.stop(), 20)
        except Exception:
            pass
    return row


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    logging.basicConfig(level=logging.INFO)
    with shared_chromium() as cdp_url:
        try:
            row = asyncio.run(episode(spec, cdp_url))
        except Exception as exc:  # reported as the episode's error, never a traceback only
            row = {
                "agent": "browser-use",
                "task": spec["task"],
                "seed": spec["seed"],
                "steps": 0,
                "raw_reward": 0.0,
                "success": False,
                "error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
            }
    sys.stdout.write("\n" + json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
