"""No secret at rest: a password given in the task and typed into a
password field is found in no file the run leaves behind.

`webagent run` as a user runs it (a subprocess), with the reply cache on (the default) and
$WEBAGENT_HOME in tmp, against a function-driven fake model behind a real OpenAI-compatible
HTTP endpoint (webagent.llm.testing.FakeOpenAIServer), so every reply goes through the real
client and cache. The fake gists, looks up (its reason repeats the password before it is
typed), types the user name, types the password, clicks "Log in", and answers DONE repeating
the password. Then every file under the trace, the --record folder and $WEBAGENT_HOME (the
SQLite cache included, read as bytes) is searched for the password."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from browser_support import requires_chromium

from webagent.llm.testing import FakeOpenAIServer

PAGES = Path(__file__).parent / "fixtures" / "agent_pages"
PASSWORD = "Tr0ub4dor-7x9q"
TASK = f"Log in as alice with the password {PASSWORD}"


def _purpose(body: dict) -> str:
    return ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")


def _prompt(messages: list[dict]) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages)


def _id_of(prompt: str, tag: str, pattern: str) -> str:
    """The id of the first rendered element ``<tag id=N ...pattern`` (the page as simplified
    HTML), else of the first line of the page (the last '''-quoted block, after any worked
    examples) naming ``pattern`` next to an id (the page as one element per line)."""
    m = re.search(rf"<{tag} id=([A-Za-z0-9_-]+)[^>]*?{pattern}", prompt)
    if m:
        return m.group(1)
    blocks = prompt.split("'''")
    page = blocks[-2] if len(blocks) >= 3 else prompt
    for line in page.splitlines():
        if re.search(pattern, line, re.IGNORECASE):
            m = re.search(r"(?:\bid=|\[)([A-Za-z0-9_-]+)", line)
            if m:
                return m.group(1)
    raise AssertionError(f"no {tag} {pattern!r} in the prompt: {prompt[:1500]}")


class LoginModel:
    """Types the user name, then the password, clicks Log in, answers DONE."""

    def __init__(self):
        self.actions = 0

    def __call__(self, messages: list[dict], body: dict) -> str:
        prompt, purpose = _prompt(messages), _purpose(body)
        if not purpose or purpose.startswith("gist"):  # gists are asked without a schema
            return prompt.rsplit("Snippet:", 1)[-1].strip()[:2000] or "a login form"
        if purpose.startswith("lookup"):
            pages = [int(i) for i in re.findall(r'"index": (\d+)', prompt)]
            return json.dumps({"pages": pages[:3] or [0], "reason": f"to find where the password {PASSWORD} goes"})
        self.actions += 1
        if self.actions == 1:
            reply = {"operation": "TYPE", "element_id": _id_of(prompt, "input", r"user"), "value": "alice"}
        elif self.actions == 2:
            reply = {"operation": "TYPE", "element_id": _id_of(prompt, "input", r"password|\bpw\b"), "value": PASSWORD}
        elif self.actions == 3:
            reply = {"operation": "CLICK", "element_id": _id_of(prompt, "button", r"Log in"), "value": ""}
        else:
            reply = {"operation": "DONE", "element_id": "", "value": f"logged in as alice with {PASSWORD}"}
        return json.dumps(reply)


def _files(*folders: Path) -> list[Path]:
    return sorted(p for folder in folders for p in folder.rglob("*") if p.is_file())


@pytest.mark.browser
@requires_chromium
@pytest.mark.parametrize("lookup", ["always", "auto"])
def test_a_typed_password_is_in_no_file_the_run_leaves(tmp_path, lookup):
    from webagent.demo_site import serve_directory

    base, stop_site = serve_directory(PAGES)
    model = LoginModel()
    server = FakeOpenAIServer(responder=model).start_in_thread()
    home, trace, records = tmp_path / "home", tmp_path / "trace", tmp_path / "records"
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "webagent.cli",
                "run",
                TASK,
                "--url",
                base + "login.html",
                "--base-url",
                server.base_url,
                "--model",
                "fake-login",
                "--lookup",
                lookup,
                "--max-steps",
                "6",
                "--no-grounded-done",  # the answer holds the password on purpose: it is what is scrubbed
                "--trace-dir",
                str(trace),
                "--record",
                str(records),
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=180,
            env={**os.environ, "WEBAGENT_HOME": str(home)},
        )
    finally:
        server.stop_thread()
        stop_site()
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["status"] == "done" and model.actions == 4, (out, proc.stderr[-2000:])
    assert out["usage"]["calls"] >= 4

    # The run really typed the password and wrote everything a user keeps.
    assert (trace / "steps.jsonl").is_file() and (trace / "run.json").is_file() and (trace / "report.html").is_file()
    assert list((records / "live").glob("*.json")), "no --record file"
    assert (home / "cache.sqlite").is_file(), "the reply cache was not on"
    steps = [json.loads(line) for line in (trace / "steps.jsonl").read_text().splitlines()]
    typed = [s for s in steps if (s.get("action") or {}).get("operation") == "TYPE"]
    assert len(typed) == 2 and all(s["ok"] for s in typed), [(s["action_text"], s["result_text"]) for s in steps]

    secret = PASSWORD.encode()
    leaks = [str(p.relative_to(tmp_path)) for p in _files(trace, records, home) if secret in p.read_bytes()]
    assert leaks == [], f"the password is stored in plain text in: {leaks}"
    assert PASSWORD not in proc.stdout and PASSWORD not in proc.stderr  # nor in what the run printed
