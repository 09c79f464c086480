"""One headless Debian Chromium with a CDP port on 127.0.0.1, shared by webagent and the
rivals (each attaches to it). Standard library only: imported from every venv.

    with shared_chromium() as cdp_url:     # "http://127.0.0.1:PORT"
        ...
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    # what Playwright adds when it launches a browser itself: no throttling of background tabs
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
    "--window-size=1280,800",
    "--remote-allow-origins=*",
]


def chromium_path() -> str:
    for candidate in (
        os.environ.get("WEBAGENT_CHROMIUM"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
        shutil.which("google-chrome"),
    ):
        if candidate and os.path.exists(candidate):
            return candidate
    raise SystemExit("no Chromium found: apt-get install chromium, or set WEBAGENT_CHROMIUM")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def shared_chromium(timeout_s: float = 30.0):
    """Start Chromium with ``--remote-debugging-port``; yield its http CDP URL; stop it."""
    port = free_port()
    profile = tempfile.mkdtemp(prefix="rivals-chromium-")
    proc = subprocess.Popen(
        [
            chromium_path(),
            *FLAGS,
            f"--remote-debugging-port={port}",
            "--remote-debugging-address=127.0.0.1",
            f"--user-data-dir={profile}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with urllib.request.urlopen(url + "/json/version", timeout=2) as r:
                    json.load(r)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"Chromium did not open its CDP port {port} (exit {proc.poll()})") from None
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(profile, ignore_errors=True)
