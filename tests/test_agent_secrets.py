"""Secrets the model can use but never sees: the task's password (or a --secret) reaches the
model as <secret:NAME>, the model types the placeholder into as many fields as it needs,
and the real value is put in only when the browser acts; no prompt, trace or report holds it."""

from pathlib import Path

import pytest
import pytest_asyncio
from agent_support import trace_lines
from browser_support import requires_chromium

from webagent.agent import AgentOptions, run_agent
from webagent.agent.report import write_report
from webagent.agent.secrets import mask_task, parse_secret_options, reveal
from webagent.browser import BrowserSession
from webagent.demo_site import serve_directory
from webagent.errors import UserError
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.trace.writer import TraceWriter

PAGES = Path(__file__).parent / "fixtures" / "agent_pages"


@pytest.mark.parametrize(
    "task, masked, secrets",
    [
        (
            "Log in as alice (password alice-pass-1) and file it",
            "Log in as alice (password <secret:password>) and file it",
            {"password": "alice-pass-1"},
        ),
        (
            'Enter the password "AU" into both text fields',
            'Enter the password "<secret:password>" into both text fields',
            {"password": "AU"},
        ),
        ("Type your password into the password field", "Type your password into the password field", {}),
        (  # the sentence's stop is not the password's (every such log-in failed)
            "Log in with the email alice@example.com and the password alice-pass-1.",
            "Log in with the email alice@example.com and the password <secret:password>.",
            {"password": "alice-pass-1"},
        ),
        ('The password is "Ab.c9." exactly', 'The password is "<secret:password>" exactly', {"password": "Ab.c9."}),
    ],
)
def test_the_task_is_masked(task, masked, secrets):
    assert mask_task(task) == (masked, secrets)


def test_secrets_from_options_and_the_environment(monkeypatch):
    monkeypatch.setenv("WEBAGENT_SECRET_PIN", "4242")
    assert parse_secret_options(["bank=hunter2x"]) == {"pin": "4242", "bank": "hunter2x"}
    assert mask_task("Pay with card pin 4242", {"pin": "4242"})[0] == "Pay with card pin <secret:pin>"
    assert reveal("<secret:pin> and <secret:other>", {"pin": "4242"}) == "4242 and <secret:other>"
    with pytest.raises(UserError, match="expected NAME=VALUE"):
        parse_secret_options(["nope"])


@pytest_asyncio.fixture
async def browser():
    async with BrowserSession() as browser:
        yield browser


@pytest_asyncio.fixture
async def signup(browser):
    """The browser on the sign-up page (a user name, a password and its confirmation)."""
    base, stop = serve_directory(PAGES)
    try:
        browser.guard = None
        assert (await browser.open(base + "signup.html")).ok
        yield browser
    finally:
        stop()


async def _run(browser, policy, task: str, max_steps: int, folder: Path, **options):
    """The agent on the open page with ``policy`` as its model; the run's result and trace."""
    trace = TraceWriter(folder / "trace")
    result = await run_agent(
        browser,
        fake_client(FunctionBackend(policy)),
        task,
        options=AgentOptions(max_steps=max_steps),
        trace=trace,
        **options,
    )
    return result, trace


def _assert_in_no_file(trace: TraceWriter, value: str) -> None:
    """``value`` is in no file of the trace, its report written."""
    write_report(trace.folder)
    for path in trace.folder.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".html"):
            assert value not in path.read_text(encoding="utf-8"), path


@requires_chromium
@pytest.mark.browser
async def test_a_password_typed_twice_from_its_placeholder_never_reaches_the_model_or_the_trace(signup, tmp_path):
    secret = "Hx9!kq2-zz"
    prompts: list[str] = []
    steps = [
        ("TYPE", "text field", "Username", "ada"),
        ("TYPE", "password field", "Password", "<secret:password>"),
        ("TYPE", "password field", "Confirm password", "<secret:password>"),
        ("CLICK", "submit button", "Create account", ""),
    ]

    def policy(messages, params, purpose, context):
        prompts.append("\n".join(str(m["content"]) for m in messages))
        if purpose == "form_check":  # it reads the form too: the password as "(hidden, filled in)"
            return {"fix": "", "ready": True}
        op, kind, name, value = steps[min(sum(line.count("-> ok") for line in context.history), 3)]
        action = {"operation": op, "element_id": context.control_id(kind, name), "value": value}
        return {"action": {**action, "press_enter": False}}

    async def created(step: int):
        return "created" if await signup.page.evaluate("document.body.dataset.result || ''") else None

    result, trace = await _run(
        signup, policy, f"Sign up as ada with the password {secret}", 6, tmp_path, after_step=created
    )
    assert result.status == "done" and result.steps == 4
    assert await signup.page.evaluate("document.body.dataset.result") == secret  # both fields got the real value
    assert "<secret:password>" in prompts[0] and not any(secret in p for p in prompts)
    _assert_in_no_file(trace, secret)


def _types_into(kind: str, name: str, values: list[str]):
    """A model that types ``values`` into one field, one per step (the last one again after)."""

    def policy(messages, params, purpose, context):
        if purpose == "form_check":
            return {"fix": "", "ready": True}
        value = values.pop(0) if len(values) > 1 else values[0]
        action = {"operation": "TYPE", "element_id": context.control_id(kind, name), "value": value}
        return {"action": {**action, "press_enter": False}}

    return policy


@requires_chromium
@pytest.mark.browser
async def test_a_password_typed_again_with_another_value_is_a_change(signup, tmp_path):
    """A password field shows any value as the same dots: the run tells a retyped, different
    value from the same value typed twice (a model that typed the username there first must
    be able to put the password in, not be told 'no visible change' until it is stuck)."""
    policy = _types_into("password field", "Password", ["ada", "<secret:password>", "<secret:password>"])
    _, trace = await _run(signup, policy, "Sign up as ada with the password Hx9!kq2-zz", 3, tmp_path)
    results = [s["result_text"] for s in trace_lines(trace)]
    assert [r.split(",")[0].split(";")[0] for r in results] == ["ok", "ok", "no visible change"], results
    assert await signup.page.evaluate("document.getElementById('p1').value") == "Hx9!kq2-zz"


@requires_chromium
@pytest.mark.browser
async def test_a_password_the_model_made_up_is_scrubbed_where_written_not_from_its_own_history(signup, tmp_path):
    """The task gives no password; the model types one of its own into the password field,
    then a user name holding it. Its history shows what it typed (masking its own words hid
    nothing from it and garbled its history: "status" typed as a password masked every
    "status" in its addresses); no file of the trace holds the made-up password."""
    made_up = "Qz7made"
    prompts: list[str] = []
    steps = [("password field", "Password", made_up), ("text field", "Username", made_up + "-user")]

    def policy(messages, params, purpose, context):
        prompts.append(str(messages[-1]["content"]))
        if purpose == "form_check":
            return {"fix": "", "ready": True}
        kind, name, value = steps[min(len(prompts) - 1, 1)]
        action = {"operation": "TYPE", "element_id": context.control_id(kind, name), "value": value}
        return {"action": {**action, "press_enter": False}}

    _, trace = await _run(signup, policy, "Sign up as ada", 3, tmp_path)
    assert made_up not in prompts[0] and '"********" [password field]' in prompts[1]
    assert f'"{made_up}-user" [text field]' in prompts[2]  # its own words, in its own history
    _assert_in_no_file(trace, made_up)


@requires_chromium
@pytest.mark.browser
async def test_a_placeholder_of_no_secret_the_run_knows_is_typed_as_it_stands(signup, tmp_path):
    """The task gives no password and the model types <secret:password> into the password field:
    the step runs, the text goes in as written, and the site answers. Refused instead, the 1.5B
    typed it again at every re-ask and ended stuck (roundup-answer-search-status, twice)."""
    policy = _types_into("password field", "Password", ["<secret:password>"])
    _, trace = await _run(signup, policy, "Sign up as ada", 1, tmp_path)
    (step,) = trace_lines(trace)
    assert step["ok"] and not step["problem"], step["result_text"]
    assert await signup.page.evaluate("document.getElementById('p1').value") == "<secret:password>"
