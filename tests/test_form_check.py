"""The check before a form is sent: one short model call on the task and the form's fields;
a form it finds not ready is not sent this once and the model is told why; the same form
sent again goes through; the calls are counted and kept in the trace."""

from pathlib import Path

import pytest
import pytest_asyncio
from agent_support import trace_lines
from browser_support import requires_chromium

from webagent.agent import AgentOptions, run_agent
from webagent.browser import BrowserSession
from webagent.demo_site import serve_directory
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.trace.writer import TraceWriter
from webagent.web.agent_view import Control
from webagent.web.form_check import check_form, form_fields

PAGES = Path(__file__).parent / "fixtures" / "agent_pages"


async def test_a_form_built_of_divs_is_checked_when_its_button_comes_after_its_fields():
    # MiniWoB's enter-text and login-user: no <form>, the fields and a Submit button in one div.
    box = ("10", "2")
    controls = {
        "1": Control("1", "TYPE", "text field", "Username", ancestors=box),
        "2": Control("2", "TYPE", "password field", "Password", ancestors=box),
        "3": Control("3", "CLICK", "button", "Login", ancestors=box),
        "8": Control("8", "CLICK", "link", "Help", ancestors=("20", "2")),
    }
    assert [c.id for c in form_fields(controls, controls["3"])] == ["1", "2"]
    assert form_fields(controls, controls["8"]) == []  # a link sends no form
    # A button among the fields (click-button's "next" between two fields) is not their submit.
    amid = {
        "1": Control("1", "TYPE", "text field", "", ancestors=box),
        "3": Control("3", "CLICK", "button", "next", ancestors=box),
        "4": Control("4", "TYPE", "text field", "", ancestors=box),
    }
    assert form_fields(amid, amid["3"]) == []


async def test_the_check_sees_the_fields_of_the_form_the_button_sends():
    controls = {
        "1": Control("1", "TYPE", "text field", "Your name", value="Alan", form="f"),
        "2": Control("2", "SELECT", "select", "Shipping", ("Standard", "Pick up in store"), "Standard", form="f"),
        "3": Control("3", "CLICK", "checkbox", "Gift wrap", value="not checked", form="f"),
        "4": Control("4", "TYPE", "search field", "Search", form="other"),
        "5": Control("5", "CLICK", "submit button", "Place order", form="f"),
    }
    assert [c.id for c in form_fields(controls, controls["5"])] == ["1", "2", "3"]
    client = fake_client([{"ready": False, "fix": "Shipping should be Pick up in store"}])
    check = await check_form(
        client, "Buy it for Alan and pick it up in the store.", form_fields(controls, controls["5"])
    )
    assert (check.ready, check.fix, check.calls) == (False, "Shipping should be Pick up in store", 1)
    prompt = client.backend.requests[0]["messages"][0]["content"]
    assert (
        '- Shipping: "Standard" (options: Standard, Pick up in store)' in prompt
        and "- Gift wrap: not checked" in prompt
    )
    assert client.usage.purpose("form_check").calls == 1
    unusable = fake_client(["no idea", "still none"])
    assert (await check_form(unusable, "x", [controls["1"]])).ready  # an unusable answer holds nothing back


@pytest_asyncio.fixture
async def browser():
    async with BrowserSession() as browser:
        yield browser


@requires_chromium
@pytest.mark.browser
async def test_a_form_the_check_finds_not_ready_is_held_once_then_sent(browser, tmp_path):
    base, stop = serve_directory(PAGES)
    try:
        browser.guard = None
        assert (await browser.open(base + "signup.html")).ok

        def policy(messages, params, purpose, context):
            if purpose == "form_check":
                return {"ready": False, "fix": "Confirm password is empty"}
            if not context.history:
                return {
                    "action": {
                        "operation": "TYPE",
                        "element_id": context.control_id("text field", "Username"),
                        "value": "ada",
                        "press_enter": False,
                    }
                }
            return {
                "action": {"operation": "CLICK", "element_id": context.control_id("submit button", "Create account")}
            }

        trace = TraceWriter(tmp_path / "trace")
        result = await run_agent(
            browser,
            fake_client(FunctionBackend(policy)),
            "Sign up as ada",
            options=AgentOptions(max_steps=3, form_check=True, screenshots=False),
            trace=trace,
        )
        steps = trace_lines(trace)
        assert steps[1]["result_text"].startswith("not sent: a check of the form before sending says: Confirm password")
        assert steps[1]["form_check"] == {"ready": False, "fix": "Confirm password is empty", "calls": 1, "failures": 0}
        assert "form_check" not in steps[2] and steps[2]["result_text"].startswith("ok")  # sent the second time
        assert await browser.page.evaluate("document.body.dataset.result") == "mismatch"
        assert result.usage["by_purpose"]["form_check"]["calls"] == 1
    finally:
        stop()
