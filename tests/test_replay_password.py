"""Passwords are never stored: a run that typed one is saved without it, its replay is
refused until --param gives it, and the replay's trace never shows it."""

import pytest
from browser_support import requires_chromium
from replay_support import Forbidden, prompt_of

from webagent import Agent, replay
from webagent.demo_site import serve_directory
from webagent.errors import UserError
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.replay import store

pytestmark = [pytest.mark.browser, requires_chromium, pytest.mark.asyncio(loop_scope="module")]

LOGIN = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Sign in</title></head><body>
<h1>Members</h1>
<form onsubmit="location.href='welcome.html?user=' + encodeURIComponent(document.getElementById('u').value)
  + '&ok=' + (document.getElementById('p').value === window.expected ? 1 : 0); return false;">
<label>Username <input type="text" name="user" id="u"></label>
<label>Password <input type="password" name="pw" id="p"></label>
<button type="submit">Log in</button></form>
<script>window.expected = new URLSearchParams(location.search).get("expect") || "s3cret-1";</script>
</body></html>"""
WELCOME = """<!DOCTYPE html><html><head><title>Welcome</title></head><body><h1>Welcome</h1></body></html>"""
TASK = "Log in as grace with the password s3cret-1"


def login_policy(messages, params, purpose, context=None):
    prompt = prompt_of(messages)
    if purpose == "form_check":  # it sees the password as "(hidden, filled in)", never its value
        assert "s3cret-1" not in prompt
        return {"fix": "", "ready": True}
    history = "\n".join(context.history)
    if "welcome.html" in context.url:
        return {"operation": "DONE", "element_id": "", "value": "Welcome"}  # (the page says so)
    if '"grace"' not in history:
        return {"operation": "TYPE", "element_id": context.control_id("text field", "Username"), "value": "grace"}
    if "********" not in history:
        return {
            "operation": "TYPE",
            "element_id": context.control_id("password field", "Password"),
            "value": "s3cret-1",
        }
    return {"operation": "CLICK", "element_id": context.control_id("button", "Log in")}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("login")
    (root / "index.html").write_text(LOGIN)
    (root / "welcome.html").write_text(WELCOME)
    base, stop = serve_directory(root)
    yield base
    stop()


async def test_password_is_asked_for_and_never_written(site, tmp_path):
    run = await Agent(
        TASK,
        url=site + "index.html",
        llm=fake_client(FunctionBackend(login_policy)),
        trace_dir=tmp_path / "run",
        save_as="login",
    ).run()
    assert run.ok and "ok=1" in run.final_url, run.error
    saved = store.load("login")
    assert saved.params["password"] == {"default": None, "source": "password", "field": "pw"}
    assert saved.params["user"] == {"default": "grace", "source": "task"}

    forbidden = Forbidden()
    with pytest.raises(UserError, match="--param password="):
        await replay("login", url=site + "index.html", llm=fake_client(forbidden))
    again = await replay(
        "login",
        {"password": "other-pw-42"},
        url=site + "index.html?expect=other-pw-42",
        llm=fake_client(forbidden),
        trace_dir=tmp_path / "replay",
    )
    assert again.ok and "ok=1" in again.final_url and forbidden.requests == []
    for folder in (tmp_path / "run", tmp_path / "replay", store.folder("login")):
        for path in folder.iterdir():
            if path.suffix in (".json", ".jsonl", ".html"):
                text = path.read_text()
                assert "s3cret-1" not in text.replace(TASK, "") and "other-pw-42" not in text, path
