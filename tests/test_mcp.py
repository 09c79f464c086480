"""`webagent mcp` as an assistant reaches it: the SDK's own client (``stdio_client`` +
``ClientSession``) spawning ``python -m webagent.cli mcp ...``. The model is a fake behind a
real OpenAI-compatible endpoint (``FakeOpenAIServer``) reading each step's prompt as the
real model does, or the embedded model (marked ``real_llm``).

Shown: the tools and their schemas; the demo shop's order placed through ``run_task`` with a
progress notification per step; a call refused when it leaves the allowed sites (or widens
them, names a secret the server does not hold, gives a password in plain text); a secret
typed by a run found in no tool reply, no progress message and not in the server's log;
bad start-up input as one line on stderr and a non-zero exit."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from browser_support import requires_chromium

from webagent.demo_site import DEMO_TASK, DemoShop, serve_directory
from webagent.llm.testing import FakeOpenAIServer
from webagent.replay import store
from webagent.skills import store as skill_store
from webagent.skills.learn import from_recording
from webagent.trace import workflow

ROOT = Path(__file__).parent.parent
TOOLS = {
    "run_task",
    "replay_workflow",
    "list_workflows",
    "view_page",
    "list_skills",
    "show_skill",
    "ask_document",
    "list_runs",
    "show_run",
}
PASSWORD = "Tr0ub4dor-mcp-93"  # held by the server: never in a reply, a message or the log
TOKEN = "tok-5531-never-shown"


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **more}  # WEBAGENT_HOME: the test's own (conftest)


@asynccontextmanager
async def mcp_session(tmp_path: Path, *args: str, env: dict[str, str] | None = None):
    """A client session with ``webagent mcp ARGS`` (its stderr in tmp_path/server.log)."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "webagent.cli", "mcp", *args],
        env=env or _env(tmp_path),
        cwd=str(tmp_path),
    )
    with (tmp_path / "server.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def _text(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


# -- a fake model behind a real endpoint, reading the step's prompt as a model does -----------


def _purpose(body: dict) -> str:
    return ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")


def _page(messages: list[dict]) -> tuple[str, list[str]]:
    """(the URL, the lines) of the page the step is on: the last one shown (worked examples,
    which come first, show none with a URL)."""
    prompt = "\n".join(str(m.get("content", "")) for m in messages)
    page = prompt.rpartition("(URL: ")[2]
    return page.split(",", 1)[0], page.split("'''")[1].splitlines() if page.count("'''") >= 2 else []


def _id(lines: list[str], pattern: str) -> str:
    for line in lines:
        if re.search(pattern, line):
            return re.match(r"\[([A-Za-z0-9_-]+)\]", line).group(1)  # type: ignore[union-attr]
    raise AssertionError(f"no line {pattern!r} on the page: {lines}")


def _ids(lines: list[str], pattern: str) -> list[str]:
    return [m.group(1) for line in lines if re.search(pattern, line) and (m := re.match(r"\[([A-Za-z0-9_-]+)\]", line))]


def _other_purpose(messages: list[dict], purpose: str) -> str | None:
    """The reply to a call that is not the step's action (gists, look-ups, the form check)."""
    prompt = "\n".join(str(m.get("content", "")) for m in messages)
    if purpose == "form_check":
        return json.dumps({"fix": "", "ready": True})
    if not purpose or purpose.startswith("gist"):
        return prompt.rsplit("Snippet:", 1)[-1].strip()[:2000] or "a page"
    if purpose.startswith("lookup"):
        return json.dumps({"pages": [int(i) for i in re.findall(r'"index": (\d+)', prompt)][:2], "reason": "to act"})
    return None


def demo_order_model(messages: list[dict], body: dict) -> str:
    """Search, pick the book, name, shipping, place the order, DONE: the page by its URL."""
    if (other := _other_purpose(messages, _purpose(body))) is not None:
        return other
    url, lines = _page(messages)
    reply: dict[str, str | bool]
    if "index.html" in url:
        reply = {
            "operation": "TYPE",
            "element_id": _id(lines, "search field"),
            "value": "Night Trains",
            "press_enter": True,
        }
    elif "results.html" in url:
        reply = {"operation": "CLICK", "element_id": _id(lines, 'link "Night Trains"')}
    elif "order.html" in url and _id(lines, 'text field "Your name"') in _ids(lines, " empty"):
        reply = {"operation": "TYPE", "element_id": _id(lines, 'text field "Your name"'), "value": "Ada Lovelace"}
    elif "order.html" in url and _id(lines, 'select "Shipping') in _ids(lines, 'selected="Standard'):
        reply = {"operation": "SELECT", "element_id": _id(lines, 'select "Shipping'), "value": "Express (1 day)"}
    elif "order.html" in url:
        reply = {"operation": "CLICK", "element_id": _id(lines, 'button "Place order"')}
    else:
        reply = {"operation": "DONE", "element_id": "", "value": "Your order was placed"}
    return json.dumps(reply)


LOGIN = f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Sign in</title></head><body>
<h1>Members</h1>
<form onsubmit="location.href='welcome.html?user=' + encodeURIComponent(document.getElementById('u').value)
  + '&ok=' + (document.getElementById('p').value === '{PASSWORD}' ? 1 : 0); return false;">
<label>Username <input type="text" name="user" id="u"></label>
<label>Password <input type="password" name="pw" id="p"></label>
<button type="submit">Log in</button></form></body></html>"""
# A careless page that shows the password it was given: the view and every reply must mask it.
WELCOME = f"""<!DOCTYPE html><html><head><title>Welcome</title></head><body><h1>Welcome</h1>
<p>You signed in with {PASSWORD}.</p></body></html>"""


def login_model(messages: list[dict], body: dict) -> str:
    """User name, the password as its placeholder (the model never sees the value), log in, DONE."""
    if (other := _other_purpose(messages, _purpose(body))) is not None:
        return other
    url, lines = _page(messages)
    empty = _ids(lines, " empty")
    if "welcome.html" in url:
        return json.dumps({"operation": "DONE", "element_id": "", "value": "Welcome"})
    if _id(lines, "text field") in empty:
        return json.dumps({"operation": "TYPE", "element_id": _id(lines, "text field"), "value": "grace"})
    if _id(lines, "password field") in empty:
        reply = {"operation": "TYPE", "element_id": _id(lines, "password field"), "value": "<secret:password>"}
        return json.dumps(reply)
    return json.dumps({"operation": "CLICK", "element_id": _id(lines, 'button "Log in"')})


@pytest.fixture
def demo_shop():
    shop = DemoShop.start()
    yield shop
    shop.stop()


def _site(base: str) -> str:
    return base.split("//", 1)[1].split("/", 1)[0]  # host:port


# -- the tests ---------------------------------------------------------------------------------


def _check_tools(listed: dict, site: str) -> None:
    """The tool list and its schemas, as an assistant reads them."""
    assert set(listed) == TOOLS
    run = listed["run_task"]
    schema = run.input_schema
    assert set(schema["required"]) == {"url", "task"}
    assert set(schema["properties"]) == {"url", "task", "allowed_sites", "secrets", "max_steps"}
    assert "Never a value" in schema["properties"]["secrets"]["description"]
    assert set(run.output_schema["properties"]) >= {"status", "answer", "steps", "trace_dir", "report"}
    assert site in (run.description or "")  # the assistant reads where it may go
    assert set(listed["replay_workflow"].input_schema["properties"]) == {
        "name",
        "params",
        "url",
        "allowed_sites",
        "secrets",
    }
    assert listed["ask_document"].input_schema["required"] == ["path", "question"]
    assert listed["show_run"].input_schema["required"] == ["run"]
    assert listed["list_runs"].annotations.read_only_hint and not listed["run_task"].annotations


async def test_the_tools_and_their_schemas_and_calls_outside_the_rules_refused_with_the_reason(tmp_path):
    """One server (each start costs seconds of the suite): its tool list and schemas, then every
    kind of call outside its rules, each refused with the reason."""
    runs, docs = tmp_path / "runs", tmp_path / "docs"
    docs.mkdir()
    (docs / "spec.md").write_text(
        "# Retries\n\nA client retries a failed request three times, waiting two seconds between tries.\n"
    )
    (tmp_path / "private.txt").write_text("not for the assistant")
    env = _env(tmp_path, WEBAGENT_SECRET_API_TOKEN=TOKEN)
    args = ("--allow-site", "127.0.0.1:8123", "--model", "fake:heuristic", "--runs-dir", str(runs))
    async with mcp_session(tmp_path, *args, "--docs-dir", str(docs), env=env) as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        asked = await session.call_tool(
            "ask_document", {"path": str(docs / "spec.md"), "question": "How many retries?"}
        )
        calls = {
            "outside": ("run_task", {"url": "http://example.com/", "task": "look around"}),
            "widen": (
                "run_task",
                {"url": "http://127.0.0.1:8123/", "task": "look", "allowed_sites": ["127.0.0.1"]},
            ),
            "secret": ("run_task", {"url": "http://127.0.0.1:8123/", "task": "log in", "secrets": ["nope"]}),
            "plain": ("run_task", {"url": "http://127.0.0.1:8123/", "task": "log in with the password hunter-22"}),
            "held": ("run_task", {"url": "http://127.0.0.1:8123/", "task": f"use the token {TOKEN}"}),
            "scheme": ("run_task", {"url": "ftp://127.0.0.1:8123/", "task": "look"}),
            "steps": ("run_task", {"url": "http://127.0.0.1:8123/", "task": "look", "max_steps": 16}),
            "view": ("view_page", {"url": "http://localhost:8123/"}),
            "docs": ("ask_document", {"path": str(docs / ".." / "private.txt"), "question": "what?"}),
            "run": ("show_run", {"run": "../home"}),
            "skill": ("show_skill", {"site": "127.0.0.1:8123", "skill_id": "s1"}),
        }
        results = {key: await session.call_tool(name, arguments) for key, (name, arguments) in calls.items()}
    _check_tools(listed, "127.0.0.1:8123")
    reasons = {key: _text(result) for key, result in results.items()}
    assert all(result.is_error for result in results.values()), reasons
    assert "outside the allowed sites (127.0.0.1:8123)" in reasons["outside"]
    assert "never widen" in reasons["widen"]
    assert "holds no secret 'nope' (it holds: api_token)" in reasons["secret"]
    assert "password in plain text" in reasons["plain"] and "hunter-22" not in reasons["plain"]
    assert "value of a secret" in reasons["held"]
    assert "not an http(s) or file URL" in reasons["scheme"]
    assert "at most 15 steps" in reasons["steps"]  # webagent run's default, the server's limit
    assert "outside the allowed sites" in reasons["view"]
    assert "not under the document folders" in reasons["docs"] and "not for" not in reasons["docs"]
    assert "not a run of" in reasons["run"]
    assert "no skill 's1'" in reasons["skill"]
    assert not runs.exists()  # nothing ran: no trace folder
    answer = asked.structured_content or {}
    assert not asked.is_error and answer["num_pages"] >= 1 and answer["method"] == "readagent-p", _text(asked)
    log = (tmp_path / "server.log").read_text()
    assert TOKEN not in log and "Traceback" not in log


def test_bad_start_up_input_is_one_line_on_stderr(tmp_path):
    from click.testing import CliRunner

    from webagent.cli import main

    bad_config = tmp_path / "bad.toml"
    bad_config.write_text('allowed_sites = ["127.0.0.1"]\nmax_step = 3\n')
    bad_secrets = tmp_path / "secrets.toml"
    bad_secrets.write_text("password = 3\n")
    cases = {
        (): "no allowed site",
        ("--allow-site", "example.com/path"): "is not a site",
        ("--config", str(bad_config)): "bad.toml, field 'max_step'",
        ("--config", str(tmp_path / "none.toml")): "none.toml: no such file",
        ("--allow-site", "x.test", "--secrets-file", str(bad_secrets)): "secrets.toml, record password",
        ("--allow-site", "x.test", "--docs-dir", str(tmp_path / "none")): "no such folder",
        ("--allow-site", "x.test", "--model", "fake:nope"): "unknown fake model",
    }
    for args, expected in cases.items():
        out = CliRunner().invoke(main, ["mcp", "--model", "fake:heuristic", *args])
        lines = out.stderr.strip().splitlines()
        assert out.exit_code == 2 and out.stdout == "", (args, out.stdout)
        assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], (args, out.stderr)
    # As a client starts it: stdout (the protocol's) stays empty, the line is on stderr.
    proc = subprocess.run(
        [sys.executable, "-m", "webagent.cli", "mcp", "--allow-site", "x.test", "--model", "fake:nope"],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(tmp_path),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.strip().splitlines() == [
        "error: unknown fake model 'fake:nope'; the shipped one is 'fake:heuristic'"
    ]


@pytest.mark.browser
@requires_chromium
async def test_the_demo_order_through_run_task_with_a_progress_notification_per_step(tmp_path, demo_shop):
    model = FakeOpenAIServer(responder=demo_order_model).start_in_thread()
    runs = tmp_path / "runs"
    args = ("--allow-site", _site(demo_shop.base), "--base-url", model.base_url, "--model", "fake-demo")
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    try:
        async with mcp_session(tmp_path, *args, "--runs-dir", str(runs)) as session:
            with anyio.fail_after(300):
                result = await session.call_tool(
                    "run_task",
                    {"url": demo_shop.base + "index.html", "task": DEMO_TASK, "max_steps": 10},
                    progress_callback=on_progress,
                )
                reply = result.structured_content or {}
                listed = await session.call_tool("list_runs", {})
                shown = await session.call_tool("show_run", {"run": listed.structured_content["runs"][0]["run"]})
                # The run kept as a workflow and learned as skills (as `webagent run --save-as` and
                # `webagent skills learn` would), then replayed and shown through the server.
                store.save("night-trains", workflow.from_trace(reply["trace_dir"]))
                skill_store.add(from_recording(reply["trace_dir"]))
                workflows = await session.call_tool("list_workflows", {})
                replayed = await session.call_tool("replay_workflow", {"name": "night-trains"})
                outside = await session.call_tool(
                    "replay_workflow", {"name": "night-trains", "url": "http://example.com/index.html"}
                )
                skills = await session.call_tool("list_skills", {"site": _site(demo_shop.base)})
                first = skills.structured_content["skills"][0]
                skill = await session.call_tool("show_skill", {"site": first["site"], "skill_id": first["id"]})
                no_docs = await session.call_tool(
                    "ask_document", {"path": str(tmp_path / "x.txt"), "question": "what?"}
                )
    finally:
        model.stop_thread()
    assert not result.is_error, _text(result)
    assert reply["status"] == "done" and reply["answer"] == "Your order was placed", reply
    assert demo_shop.confirms(DEMO_TASK)  # the shop's own record: the order was placed
    steps = reply["step_count"]
    assert steps == 6 and len(reply["steps"].splitlines()) == steps
    assert "TYPE" in reply["steps"].splitlines()[0] and "Night Trains" in reply["steps"]
    # one progress notification per step, in order, each the step's line
    assert [int(p[0]) for p in progress] == list(range(1, steps + 1)), progress
    assert all(p[1] == 10 and (p[2] or "").startswith(f"step {int(p[0])}: ") for p in progress)
    trace = Path(reply["trace_dir"])
    assert trace.is_relative_to(runs) and (trace / "report.html").is_file() and reply["report"]
    assert json.loads((trace / "run.json").read_text())["status"] == "done"
    detail = shown.structured_content
    assert detail["status"] == "done" and detail["task"] == DEMO_TASK and detail["trace_dir"] == str(trace)
    assert detail["steps_text"] == reply["steps"]
    assert [w["name"] for w in workflows.structured_content["workflows"]] == ["night-trains"]
    again = replayed.structured_content or {}
    assert not replayed.is_error and again["status"] == "done", _text(replayed)
    assert again["replayed"] == steps and again["model_calls"] == 0 and len(demo_shop.orders) == 2
    assert outside.is_error and "outside the allowed sites" in _text(outside)
    assert not skills.is_error and first["site"] == _site(demo_shop.base)
    assert skill.structured_content["id"] == first["id"] and skill.structured_content["steps"]
    assert no_docs.is_error and "reads no documents" in _text(no_docs)  # (started with no --docs-dir)


@pytest.mark.browser
@requires_chromium
async def test_a_secret_is_in_no_reply_no_message_and_not_in_the_log(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "login.html").write_text(LOGIN)
    (site / "welcome.html").write_text(WELCOME)
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(f'password = "{PASSWORD}"\n')
    base, stop_site = serve_directory(site)
    model = FakeOpenAIServer(responder=login_model).start_in_thread()
    env = _env(tmp_path, WEBAGENT_SECRET_API_TOKEN=TOKEN)
    args = ("--allow-site", _site(base), "--base-url", model.base_url, "--model", "fake-login")
    args += ("--secrets-file", str(secrets), "--runs-dir", str(tmp_path / "runs"))
    seen: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    try:
        async with mcp_session(tmp_path, *args, env=env) as session:
            with anyio.fail_after(240):
                task = "Log in as grace with the password <secret:password>"
                run = await session.call_tool(
                    "run_task",
                    {"url": base + "login.html", "task": task, "secrets": ["password"], "max_steps": 6},
                    progress_callback=on_progress,
                )
                view = await session.call_tool("view_page", {"url": base + "welcome.html"})
                runs = await session.call_tool("list_runs", {})
                shown = await session.call_tool("show_run", {"run": runs.structured_content["runs"][0]["run"]})
                tools = await session.list_tools()
    finally:
        model.stop_thread()
        stop_site()
    reply = run.structured_content or {}
    assert not run.is_error and reply["status"] == "done", _text(run)
    assert "ok=1" in reply["final_url"]  # the password was typed: the page took it
    assert "<secret:password>" in _text(view) and "You signed in with" in _text(view)
    everything = [_text(r) + json.dumps(r.structured_content) for r in (run, view, runs, shown)]
    everything += seen + [tools.model_dump_json()]
    log = (tmp_path / "server.log").read_text()
    assert "step 1: " in log  # the log has the run's steps, masked
    for secret in (PASSWORD, TOKEN):
        assert not [text for text in everything if secret in text], secret
        assert secret not in log


@pytest.mark.real_llm
@pytest.mark.browser
@requires_chromium
async def test_the_demo_order_through_run_task_with_the_embedded_model(tmp_path, demo_shop):
    """The server's default model: no --base-url or --model, so `webagent mcp` starts the embedded
    model on the first call (the suite's test model, SmolLM2-135M). A path that runs, not a score
    (as every real-model test): a progress notification per step, a trace and a report; whether
    the order was placed is the shop's own record, not asserted for a model this small."""
    progress: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    env = {k: v for k, v in _env(tmp_path).items() if k not in ("OPENAI_BASE_URL", "WEBAGENT_MODEL")}
    async with mcp_session(tmp_path, "--allow-site", _site(demo_shop.base), env=env) as session:
        with anyio.fail_after(900):
            result = await session.call_tool(
                "run_task",
                {"url": demo_shop.base + "index.html", "task": DEMO_TASK, "max_steps": 2},
                progress_callback=on_progress,
            )
    reply = result.structured_content or {}
    assert not result.is_error, _text(result)
    assert reply["status"] in ("done", "max_steps", "stuck") and reply["model_calls"] >= 1, reply
    assert progress == list(range(1, reply["step_count"] + 1))
    assert Path(reply["trace_dir"], "report.html").is_file()
    assert isinstance(demo_shop.confirms(DEMO_TASK), bool)  # the shop's word, reported beside the model's
