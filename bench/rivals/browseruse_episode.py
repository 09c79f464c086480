"""What the two browser-use runners (``run_browseruse.py`` on MiniWoB++, ``apps_browseruse.py`` on
the real apps) share: its telemetry and cloud sync off, a ``BrowserSession`` on the shared
Chromium and a script run in its page (both used by ``browseruse_obs.py`` too), its ``Agent`` as
both run it (``ChatOpenAI`` at the counting proxy, no vision, no judge, flash mode unless the spec
says otherwise), the run under the wall-time cap, and the runner's ``__main__``. Runs in
bench/rivals/.venv-browser-use; browser-use is imported inside the functions."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any

from bench.rivals.chromium import shared_chromium
from bench.rivals.episode_process import error_line, print_row

os.environ.setdefault("ANONYMIZED_TELEMETRY", "false")
os.environ.setdefault("BROWSER_USE_CLOUD_SYNC", "false")
os.environ.setdefault("BROWSER_USE_LOGGING_LEVEL", "info")


@contextlib.asynccontextmanager
async def browser_session(cdp_url: str) -> AsyncIterator[Any]:
    """browser-use's session attached to the Chromium at ``cdp_url``, stopped on the way out."""
    from browser_use import BrowserSession

    session = BrowserSession(cdp_url=cdp_url, keep_alive=True)
    await session.start()
    try:
        yield session
    finally:
        try:
            await asyncio.wait_for(session.stop(), 20)
        except Exception:
            pass


async def evaluate(session: Any, expression: str, target_id: Any = None, what: str = "page script") -> Any:
    """``expression``'s value in the page (the tab ``target_id``, else the focused one), awaited;
    a RuntimeError naming ``what`` failed when it throws."""
    cdp = (
        await session.get_or_create_cdp_session(target_id=target_id, focus=False)
        if target_id
        else await session.get_or_create_cdp_session()
    )
    out = await cdp.cdp_client.send.Runtime.evaluate(
        params={"expression": expression, "awaitPromise": True, "returnByValue": True}, session_id=cdp.session_id
    )
    if out.get("exceptionDetails"):
        raise RuntimeError(f"{what} failed: {out['exceptionDetails'].get('text')}")
    return out.get("result", {}).get("value")


def make_agent(spec: dict, session: Any, task: str, **kwargs: Any) -> Any:
    """browser-use's ``Agent`` on ``task`` in ``session``, its model the spec's at ``base_url``, each
    step and model call allowed the whole ``timeout_s``; ``kwargs`` go to ``Agent`` too."""
    from browser_use import Agent, ChatOpenAI

    llm = ChatOpenAI(
        model=spec["model"], base_url=spec["base_url"], api_key="none", timeout=spec["timeout_s"], max_retries=1
    )
    return Agent(
        task=task,
        llm=llm,
        browser_session=session,
        use_vision=False,
        use_judge=False,
        calculate_cost=False,
        step_timeout=int(spec["timeout_s"]),
        llm_timeout=int(spec["timeout_s"]),
        directly_open_url=False,
        flash_mode=bool(spec.get("flash_mode", True)),
        **kwargs,
    )


async def run(agent: Any, spec: dict, row: dict, *, mark_capped: bool = False, **kwargs: Any) -> Any:
    """``agent.run(max_steps=...)`` (``kwargs`` go to it too) cut at the spec's ``timeout_s``:
    ``row`` gets ``error`` on the cap (with ``capped`` if ``mark_capped``) and ``time_s``. Returns
    the run's history (the agent's own so far when the cap cut it)."""
    t0 = time.perf_counter()
    history = None
    try:
        history = await asyncio.wait_for(agent.run(max_steps=spec["max_steps"], **kwargs), spec["timeout_s"])
    except TimeoutError:
        if mark_capped:
            row["capped"] = True
        row["error"] = f"wall-time cap of {spec['timeout_s']:g} s reached"
    row["time_s"] = round(time.perf_counter() - t0, 1)
    return history if history is not None else agent.history


def main(episode: Callable[[dict, str], Coroutine[Any, Any, dict]], failed: Callable[[dict, str], dict]) -> None:
    """A runner's ``__main__``: ``episode`` on the spec file named by ``argv[1]`` and a fresh shared
    Chromium's CDP URL, or the row ``failed(spec, error)`` when it raises; the row is the last
    stdout line."""
    spec = json.loads(Path(sys.argv[1]).read_text())
    logging.basicConfig(level=logging.INFO)
    with shared_chromium() as cdp_url:
        try:
            row = asyncio.run(episode(spec, cdp_url))
        except Exception as exc:  # reported as the episode's error, never a traceback only
            row = failed(spec, error_line(exc))
    print_row(row)
