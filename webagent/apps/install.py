"""Installing an app of the suite: its own virtual environment under
``$WEBAGENT_APPS/NAME/venv`` (never the product's), its pinned requirements from the
package index, then its pristine state seeded once by its ``app.py seed``.

Both steps are skipped when already done for the same inputs: the venv is keyed by the
requirements, the pristine state by the app folder's files. A seed is written to a
temporary folder and renamed into place only when it succeeded, so a failed or
interrupted seed leaves nothing half-made. A lock file keeps two processes (shards, a test
run) from installing the same app at once."""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from webagent.apps.spec import App, apps_home
from webagent.errors import UserError


def app_home(app: App) -> Path:
    return apps_home() / app.name


def venv_python(app: App) -> Path:
    return app_home(app) / "venv" / "bin" / "python"


def _requirements_key(app: App) -> str:
    return hashlib.sha256("\n".join(sorted(app.config.requirements)).encode()).hexdigest()[:12]


def _folder_key(app: App) -> str:
    """A hash of every file of the app folder (what the seed may depend on) and its requirements;
    ``demos.json`` aside (demonstrations change nothing that is seeded, and an oscar reseed is a minute)."""
    digest = hashlib.sha256(_requirements_key(app).encode())
    files = (p for p in app.folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for path in sorted(p for p in files if p.relative_to(app.folder) != Path("demos.json")):
        digest.update(str(path.relative_to(app.folder)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


@contextmanager
def _locked(app: App):
    home = app_home(app)
    home.mkdir(parents=True, exist_ok=True)
    with open(home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _run(cmd: list, what: str, app: App, log: Path, cwd: Path | None = None) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        done = subprocess.run([str(c) for c in cmd], cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise UserError(f"app {app.name}: {what} failed (exit {done.returncode}); see its log: {log}")


def ensure_venv(app: App, say: Callable[[str], None]) -> Path:
    """The app's venv with its requirements, installed once."""
    home = app_home(app)
    stamp = home / "venv" / f".installed-{_requirements_key(app)}"
    if stamp.is_file():
        return venv_python(app)
    log = home / "logs" / "install.log"
    say(f"{app.name}: installing {', '.join(app.config.requirements)} into {home / 'venv'}")
    t0 = time.perf_counter()
    shutil.rmtree(home / "venv", ignore_errors=True)
    _run(
        [sys.executable, "-m", "venv", *([] if app.config.requirements else ["--without-pip"]), home / "venv"],
        "creating its venv",
        app,
        log,
    )
    if app.config.requirements:
        _run(
            [
                venv_python(app),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                *app.config.requirements,
            ],
            "pip install",
            app,
            log,
        )
    stamp.touch()
    say(f"{app.name}: installed in {time.perf_counter() - t0:.1f} s")
    return venv_python(app)


def ensure_pristine(app: App, say: Callable[[str], None]) -> Path:
    """The app's pristine state folder, seeded once for this app folder and requirements."""
    home = app_home(app)
    target = home / f"pristine-{_folder_key(app)}"
    if target.is_dir():
        return target
    log = home / "logs" / "seed.log"
    tmp = home / f".seeding-{target.name}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    say(f"{app.name}: seeding its pristine state")
    t0 = time.perf_counter()
    try:
        _run([venv_python(app), app.folder / "app.py", "seed", tmp], "seeding", app, log, cwd=app.folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    tmp.rename(target)
    for old in home.glob("pristine-*"):  # states of earlier versions of the app folder
        if old != target:
            shutil.rmtree(old, ignore_errors=True)
    say(f"{app.name}: seeded in {time.perf_counter() - t0:.1f} s")
    return target


def install(app: App, say: Callable[[str], None] = lambda message: None) -> Path:
    """Venv and pristine state of ``app``; returns the pristine folder."""
    with _locked(app):
        ensure_venv(app, say)
        return ensure_pristine(app, say)
