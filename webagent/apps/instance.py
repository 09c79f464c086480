"""A running instance of an app: its server on 127.0.0.1 on a free port, over a live copy
of the pristine state; ``reset()`` brings that copy back to pristine under the running
server, ``check()`` asks the app's own check (its database, never the page).

Reset restores each SQLite database with SQLite's online backup (safe while the server
has it open) and copies every other file; files the run added are removed. The app's
server opens its database per request and caches nothing (APP_FORMAT.md), so the next
request sees the pristine data."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zlib
from pathlib import Path

from webagent.apps.install import app_home, install, venv_python
from webagent.apps.spec import App
from webagent.errors import RuntimeFailure, UserError
from webagent.llm.local import die_with_parent, free_port

READY_TIMEOUT_S = 60.0
CHECK_TIMEOUT_S = 120.0
_SQLITE_MAGIC = b"SQLite format 3\x00"
_SQLITE_SIDE_FILES = ("-journal", "-wal", "-shm")


class AppError(RuntimeFailure):
    """The app's own machinery failed (a check that crashed): not the agent's fault."""


def named_port(name: str) -> int:
    """The port derived from an app's name (whether or not it is free now): the site its skills are kept for."""
    return 20000 + zlib.crc32(name.encode()) % 20000


def stable_port(name: str) -> int:
    """The same port for an app run after run (``named_port``), or a free one when that
    is taken (a parallel shard, another program). The page URL the model reads carries the
    port, so a free port per run made every run's prompts differ, and a small model's path with
    them."""
    port = named_port(name)
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the apps' servers bind
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return free_port()
    return port


def claim_port(port: int):
    """An open lock file that claims ``port`` for this process until it is closed (or the
    process ends), or None when another process holds the claim. Two runs that found an app's
    usual port free at the same moment both started a server there, and the second one's
    readiness check was answered by the first one's server: its tasks ran on the other's data."""
    import fcntl

    folder = Path(tempfile.gettempdir()) / "webagent-ports"  # ports are the machine's, not a home's
    folder.mkdir(exist_ok=True)
    lock = open(folder / f"{port}.lock", "w")  # noqa: SIM115 - held for the instance's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        return None
    return lock


def _is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(16) == _SQLITE_MAGIC
    except OSError:
        return False


def _same_file(src: Path, dst: Path) -> bool:
    """``dst`` is still the copy of ``src`` (copy2 keeps the time; a write changes it)."""
    try:
        a, b = src.stat(), dst.stat()
    except FileNotFoundError:
        return False
    return a.st_size == b.st_size and a.st_mtime_ns == b.st_mtime_ns


def restore(pristine: Path, live: Path) -> None:
    """Make ``live`` hold what ``pristine`` holds (see the module docstring)."""
    if not pristine.is_dir():  # restoring from nothing would empty the live state
        raise UserError(
            f"the pristine state {pristine} is gone: another webagent process seeded this app again "
            "(its folder changed) while this one ran; start again"
        )
    keep = set()
    for src in pristine.rglob("*"):
        rel = src.relative_to(pristine)
        keep.add(rel)
        dst = live / rel
        if src.is_dir():
            dst.mkdir(parents=True, exist_ok=True)
        elif _is_sqlite(src) and _is_sqlite(dst):
            with sqlite3.connect(src) as a, sqlite3.connect(dst, timeout=30) as b:
                a.backup(b)
            b.close()
            a.close()
        elif not src.name.endswith(_SQLITE_SIDE_FILES) and not _same_file(src, dst):
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    for path in sorted(live.rglob("*"), reverse=True):  # deepest first, so folders are empty when reached
        rel = path.relative_to(live)
        if rel in keep or path.name.endswith(_SQLITE_SIDE_FILES):
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def _owner_file(live: Path) -> Path:
    """Beside a live state (not in it: a reset removes what the app did not ship), the pid of
    the process that serves it."""
    return live.with_name(live.name + ".pid")


def sweep_orphans(folder: Path) -> None:
    """Remove the live states whose owner died without stopping them (a killed run, a Ray
    worker ended by its cluster): their servers died with them (``die_with_parent``). A state
    with no owner file is left alone."""
    for owner in folder.glob("state-*.pid"):
        try:
            pid = int(owner.read_text() or "0")
            os.kill(pid, 0)
            continue  # alive
        except ProcessLookupError:
            pass
        except (ValueError, PermissionError, OSError):
            continue
        shutil.rmtree(owner.with_suffix(""), ignore_errors=True)
        owner.unlink(missing_ok=True)


class AppInstance:
    """``with AppInstance(app) as inst:`` installs if needed, serves, and stops at exit."""

    def __init__(self, app: App, say=lambda message: None, port: int | None = None):
        self.app, self.say, self.port = app, say, port
        self.proc: subprocess.Popen | None = None
        self.live: Path | None = None
        self.pristine: Path | None = None
        self.log: Path | None = None
        self.last_reset_s: float | None = None
        self._claim = None  # the lock file claiming the port (``claim_port``)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.base_url + (path if path.startswith("/") else "/" + path)

    def start(self) -> AppInstance:
        self.pristine = install(self.app, self.say)
        home = app_home(self.app)
        (home / "live").mkdir(parents=True, exist_ok=True)
        sweep_orphans(home / "live")
        self.live = Path(tempfile.mkdtemp(prefix="state-", dir=home / "live"))
        _owner_file(self.live).write_text(str(os.getpid()))
        shutil.copytree(self.pristine, self.live, dirs_exist_ok=True)
        self.port = self.port or free_port()
        self._claim = claim_port(self.port)
        while self._claim is None:  # another run is starting a server there right now
            self.port = free_port()
            self._claim = claim_port(self.port)
        self.log = home / "logs" / f"serve-{self.port}.log"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                [str(venv_python(self.app)), "app.py", "serve", str(self.live), str(self.port)],
                cwd=self.app.folder,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                # A killed `apps eval` (SIGTERM, not Ctrl-C) must not leave the app serving.
                preexec_fn=die_with_parent if sys.platform.startswith("linux") else None,
            )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        url = self.url(self.app.config.ready_path)
        proc = self.proc
        assert proc is not None, "start() starts the server first"
        while True:
            if proc.poll() is not None:
                raise UserError(
                    f"app {self.app.name} did not come up on 127.0.0.1:{self.port}: its server exited "
                    f"(code {proc.returncode}); see its log: {self.log}"
                )
            try:
                with urllib.request.urlopen(url, timeout=5) as reply:
                    if reply.status < 500:
                        return
            except urllib.error.HTTPError as exc:
                if exc.code < 500:
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            if time.monotonic() > deadline:
                raise UserError(
                    f"app {self.app.name} did not come up on 127.0.0.1:{self.port} within "
                    f"{READY_TIMEOUT_S:.0f} s; see its log: {self.log}"
                )
            time.sleep(0.1)

    def reset(self) -> float:
        """Back to the pristine state; returns the seconds it took."""
        t0 = time.perf_counter()
        if self.pristine is None or self.live is None:
            raise RuntimeError(f"app {self.app.name}: reset() before start()")
        restore(self.pristine, self.live)
        self.last_reset_s = time.perf_counter() - t0
        return self.last_reset_s

    def check(self, task_id: str, answer: str | None = None) -> tuple[bool, str]:
        """The app's check of ``task_id`` on the live state: (ok, why)."""
        cmd = [str(venv_python(self.app)), "app.py", "check", str(self.live), task_id]
        if answer is not None:
            cmd += ["--answer", answer]
        done = subprocess.run(cmd, cwd=self.app.folder, capture_output=True, text=True, timeout=CHECK_TIMEOUT_S)
        lines = [line for line in done.stdout.splitlines() if line.strip()]
        if done.returncode != 0 or not lines:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise AppError(f"app {self.app.name}: the check of {task_id} failed (exit {done.returncode}): {tail}")
        try:
            verdict = json.loads(lines[-1])
            return bool(verdict["ok"]), str(verdict.get("why", ""))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise AppError(
                f"app {self.app.name}: the check of {task_id} printed no verdict: {lines[-1][:200]}"
            ) from exc

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait()
        self.proc = None
        if self._claim is not None:
            self._claim.close()
            self._claim = None
        if self.live is not None:
            shutil.rmtree(self.live, ignore_errors=True)
            _owner_file(self.live).unlink(missing_ok=True)
            self.live = None

    def __enter__(self) -> AppInstance:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
