"""One episode as a subprocess, both sides of it. For the peer harnesses (``run.py`` on
MiniWoB++, ``apps_peers.py`` on the real apps): the options naming the model server and the
model it serves; the peer's runner in its own venv, or webagent's own command, in a process
group of its own under a wall-time cap; what each leaves (the runner's last JSON line, webagent's
episodes.jsonl and trace). For the runners in the peers' venvs (through ``agentlab_episode.py``
and ``browseruse_episode.py``): an error as one line, the row of an episode that raised one, the
app's own check of a real-app task, and the row printed last. Standard library
and ``bench.lib`` only: imported in every venv."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from bench.lib import ROOT
from bench.lib.results_io import read_result

HERE = ROOT / "bench" / "rivals"
VENV = {"browser-use": HERE / ".venv-browser-use", "agentlab": HERE / ".venv-agentlab"}  # bench/rivals/setup.sh
CHECK_TIMEOUT_S = 120


def server_options(parser: argparse.ArgumentParser) -> None:
    """``--server`` and ``--model``, as both harnesses take them."""
    parser.add_argument(
        "--server", default="http://127.0.0.1:8765/v1", help="the shared OpenAI-compatible model server"
    )
    parser.add_argument("--model", help="model name at the server (default: the server's first model)")


def flash_option(parser: argparse.ArgumentParser) -> None:
    """``--browser-use-flash``, the spec's ``flash_mode``."""
    parser.add_argument(
        "--browser-use-flash",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="browser-use's flash_mode (its short prompt for fast models; default on)",
    )


def server_model(server: str) -> str:
    """The id of the first model an OpenAI-compatible server lists."""
    with urllib.request.urlopen(server.rstrip("/") + "/models", timeout=10) as r:
        return json.load(r)["data"][0]["id"]


def server_model_or_exit(server: str, start: str) -> str:
    """``server_model``, or exit saying how to ``start`` a server."""
    try:
        return server_model(server)
    except OSError as exc:
        sys.exit(f"no model server at {server} ({exc}); start one: {start}")


def read_jsonl(path: Path) -> list[dict]:
    """The rows of a JSON-lines file, one a non-blank line ([] when there is no file)."""
    return read_result(path)[0] if path.exists() else []


def error_line(exc: BaseException, limit: int | None = None) -> str:
    """An exception as a runner's ``error``: its type and its first line (cut at ``limit``)."""
    return f"{type(exc).__name__}: {str(exc).splitlines()[0][:limit] if str(exc) else ''}"


def miniwob_row(agent: str, version: str, spec: dict) -> dict:
    """A MiniWoB++ runner's (``run_*``) row before its episode: no steps, no reward, no utterance."""
    return {
        "agent": agent,
        "version": version,
        "task": spec["task"],
        "seed": spec["seed"],
        "steps": 0,
        "raw_reward": 0.0,
        "success": False,
        "done": False,
        "error": None,
        "utterance": None,
    }


def miniwob_error_row(agent: str, spec: dict, error: str) -> dict:
    """The row of a MiniWoB++ runner (``run_*``) whose episode raised ``error``."""
    return {
        "agent": agent,
        "task": spec["task"],
        "seed": spec["seed"],
        "steps": 0,
        "raw_reward": 0.0,
        "success": False,
        "error": error,
    }


def apps_error_row(peer: str, spec: dict, error: str) -> dict:
    """The row of a real-app runner (``apps_*``) whose episode raised ``error``."""
    return {"peer": peer, "task": spec["task_id"], "steps": 0, "error": error}


def app_check(check: dict, task_id: str, answer: str | None = None) -> tuple[bool, str]:
    """The app's own check on the live state (``check``: ``python``, ``app_folder``, ``state``), as
    ``AppInstance.check`` runs it."""
    cmd = [check["python"], "app.py", "check", check["state"], task_id]
    if answer is not None:
        cmd += ["--answer", answer]
    done = subprocess.run(cmd, cwd=check["app_folder"], capture_output=True, text=True, timeout=CHECK_TIMEOUT_S)
    lines = [x for x in done.stdout.splitlines() if x.strip()]
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the check of {task_id} failed (exit {done.returncode}): {tail}")
    verdict = json.loads(lines[-1])
    return bool(verdict["ok"]), str(verdict.get("why", ""))


def print_row(row: dict) -> None:
    """A runner's result row, the last line of its stdout (read back by ``last_json_line``)."""
    sys.stdout.write("\n" + json.dumps(row) + "\n")


def fmt(x, spec=".0f"):
    """A figure of a harness's report table: ``format(x, spec)``, or "–" for None."""
    return "–" if x is None else format(x, spec)


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


def runner_cmd(peer: str, module: str, spec: dict, log: Path, indent: int | None = None) -> list[str] | None:
    """The command that runs the peer's runner ``module`` in the peer's venv on ``spec``, written
    beside ``log`` (``<tag>.log``: ``<tag>.spec.json``); None when the peer's venv is not installed."""
    spec_path = log.with_suffix(".spec.json")
    spec_path.write_text(json.dumps(spec, indent=indent))
    python = VENV[peer] / "bin" / "python"
    return [str(python), "-m", module, str(spec_path)] if python.exists() else None


def no_row(rc: int | None, hard_cap: float, shown_log: object) -> str:
    """Why a runner gave no row: the hard cap killed it (``rc`` None), or it exited ``rc``."""
    if rc is None:
        return f"killed at the hard cap of {hard_cap:g} s"
    return f"runner exited {rc} without a result (see {shown_log})"


async def run_webagent(
    command: list[str], options: list[str], base_url: str, model: str, folder: Path, log: Path, timeout_s: float
) -> tuple[int | None, dict | None]:
    """``.venv/bin/webagent COMMAND --base-url URL --model MODEL --api-key none OPTIONS``, its
    episodes written into ``folder`` (OPTIONS name it), its process group killed at ``timeout_s``:
    (its exit status, None if the cap killed it; the last row of its episodes.jsonl, or None)."""
    cmd = [str(ROOT / ".venv" / "bin" / "webagent"), *command]
    cmd += ["--base-url", base_url, "--model", model, "--api-key", "none", *options]
    rc, _ = await run_process(cmd, log, timeout_s, ROOT, env={**os.environ, "OPENAI_API_KEY": "none"})
    rows = read_jsonl(folder / "episodes.jsonl")
    return rc, rows[-1] if rows else None


def trace_steps(folder: Path, task: str = "*") -> int | None:
    """The steps in webagent's trace of ``task`` under ``folder`` (the first that matches), or
    None without one: what a run stopped by the cap had done."""
    steps = list(folder.glob(f"traces/{task}/steps.jsonl"))
    return sum(1 for x in steps[0].read_text().splitlines() if x.strip()) if steps else None
