"""What both peer harnesses (``run.py`` on MiniWoB++, ``apps_peers.py`` on the real apps) need to
run one episode as a subprocess: the model the server serves, the episode's process group under
a wall-time cap, and the JSON row its runner prints last."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import urllib.request
from pathlib import Path


def server_model(server: str) -> str:
    """The id of the first model an OpenAI-compatible server lists."""
    with urllib.request.urlopen(server.rstrip("/") + "/models", timeout=10) as r:
        return json.load(r)["data"][0]["id"]


def last_json_line(text: str) -> dict | None:
    """The last line of ``text`` that is a JSON object (a runner's result row), or None."""
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


async def run_process(
    cmd: list[str], log: Path, timeout_s: float, cwd: Path, env: dict | None = None
) -> tuple[int | None, str]:
    """Run ``cmd`` in its own process group, stderr to ``log``; kill the group at ``timeout_s``.
    Returns (rc, or None if the cap killed it; stdout), stdout also appended to ``log``."""
    with log.open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            *cmd, stdout=asyncio.subprocess.PIPE, stderr=err, start_new_session=True, env=env, cwd=str(cwd)
        )
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout_s)
            rc = proc.returncode
        except BaseException as exc:  # the cap, or the harness itself stopped: the episode's processes go too
            if not isinstance(exc, asyncio.TimeoutError):
                os.killpg(proc.pid, signal.SIGKILL)
                raise
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                out, _ = await asyncio.wait_for(proc.communicate(), 15)
            except TimeoutError:
                os.killpg(proc.pid, signal.SIGKILL)
                out, _ = await proc.communicate()
            rc = None
    text = out.decode(errors="replace")
    with log.open("ab") as f:
        f.write(b"\n--- stdout ---\n" + out)
    return rc, text
