"""`webagent run` as a user runs it: one clear line and a non-zero exit for what the user
can fix; --json; the demo shop served by --demo."""

import json
import subprocess
import sys

import pytest
from browser_support import requires_chromium


def _run(*args, env=None, timeout=120, cwd=None):
    import os

    return subprocess.run(
        [sys.executable, "-m", "webagent.cli", "run", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def _one_error_line(proc):
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[-1]


def test_needs_a_url(tmp_path):
    proc = _run("do something", "--model", "fake:heuristic", cwd=tmp_path)
    assert proc.returncode == 2 and "--url" in _one_error_line(proc)
    assert list(tmp_path.iterdir()) == []


def test_rejects_a_url_that_is_not_http_or_file(tmp_path):
    proc = _run("--url", "ftp://example.test/", "x", "--model", "fake:heuristic", cwd=tmp_path)
    assert proc.returncode == 2 and "not an http(s) or file URL" in _one_error_line(proc)
    assert list(tmp_path.iterdir()) == []  # a run refused before it starts leaves no runs/agent/<time>-x/ behind


def test_missing_browser_is_one_line(tmp_path):
    proc = _run(
        "--url",
        "http://127.0.0.1:9/",
        "x",
        "--model",
        "fake:heuristic",
        "--trace-dir",
        str(tmp_path / "t"),
        env={"WEBAGENT_CHROMIUM": str(tmp_path / "no-chrome")},
    )
    assert proc.returncode == 2 and "WEBAGENT_CHROMIUM" in _one_error_line(proc)


@pytest.mark.browser
@requires_chromium
def test_unreachable_url_is_one_line(tmp_path):
    proc = _run("--url", "http://127.0.0.1:9/", "x", "--model", "fake:heuristic", "--trace-dir", str(tmp_path / "t"))
    line = _one_error_line(proc)
    assert proc.returncode == 2 and line.startswith("error: cannot open http://127.0.0.1:9/") and "ERR_" in line
    run = json.loads((tmp_path / "t" / "run.json").read_text())  # the trace says how it ended, too
    assert run["status"] == "error" and run["error"].startswith("cannot open http://127.0.0.1:9/") and run["steps"] == 0


@pytest.mark.browser
@requires_chromium
def test_demo_json(tmp_path):
    proc = _run(
        "--demo",
        "--model",
        "fake:heuristic",
        "--max-steps",
        "2",
        "--json",
        "--trace-dir",
        str(tmp_path / "t"),
        "--record",
        str(tmp_path / "rec"),
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) >= {"status", "answer", "steps", "trace_dir", "usage"}
    assert out["status"] in ("max_steps", "stuck") and out["steps"] == 2 and out["usage"]["calls"] >= 2
    assert out["demo_order_placed"] is False  # the shop's own record, next to the model's status
    assert "step 1: http://127.0.0.1" in proc.stderr and "step 2:" in proc.stderr
    assert (tmp_path / "t" / "report.html").is_file() and (tmp_path / "t" / "step_02.png").is_file()


@pytest.mark.browser
@requires_chromium
def test_a_browser_that_will_not_start_is_one_line(tmp_path):
    proc = _run(
        "--url",
        "http://127.0.0.1:9/",
        "x",
        "--model",
        "fake:heuristic",
        "--trace-dir",
        str(tmp_path / "t"),
        env={"WEBAGENT_CHROMIUM": "/bin/false"},
    )
    assert proc.returncode == 2 and "cannot start Chromium" in _one_error_line(proc)


@pytest.mark.browser
@requires_chromium
def test_ctrl_c_closes_the_browser_and_keeps_the_trace(tmp_path):
    import os
    import signal
    import time
    from pathlib import Path

    from webagent.demo_site import serve_directory

    trace = tmp_path / "t"
    # A page where the crude fake model's click (its first id, "Add one") always changes
    # something: the run goes on for all its steps, so the Ctrl-C lands mid-run (on the demo
    # it was refused three times and stuck within a second, sometimes before the signal).
    base, stop = serve_directory(Path(__file__).parent / "fixtures" / "agent_pages")
    # A Ctrl-C reaches a program only if SIGINT is not ignored when it starts. Under a shell
    # that runs the suite in the background (`make test &`), it is ignored, and a child would
    # inherit that; a handler (unlike SIG_IGN) is reset to the default by exec.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "webagent.cli",
                "run",
                "--url",
                base + "counter.html",
                "add one",
                "--model",
                "fake:heuristic",
                "--max-steps",
                "200",
                "--trace-dir",
                str(trace),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ),
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    deadline = time.monotonic() + 60
    steps_file = trace / "steps.jsonl"

    def a_step_was_written() -> bool:
        return steps_file.is_file() and bool(steps_file.read_text().strip())

    while time.monotonic() < deadline and not a_step_was_written():  # the deadline guards the whole wait
        time.sleep(0.1)
    assert a_step_was_written(), "no step was written within 60 s"
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        stop()
    assert proc.returncode == 130, err
    assert "interrupted" in err.splitlines()[-1] and "Traceback" not in err
    assert (trace / "steps.jsonl").read_text().strip() and (trace / "report.html").is_file()
    assert json.loads((trace / "run.json").read_text())["status"] == "interrupted"
