"""FILL: one action fills several fields of one form and optionally clicks its submit button.
Offered only where the page has two or more fields; each field checked as that TYPE or SELECT
alone would be, all of one form, and one bad part refuses it all; in a real browser it fills
and sends in one step, stops where the page changes under it, lets the form check hold the
click, and a password it types is in no file of the trace."""

import json
from pathlib import Path

import pytest
import pytest_asyncio
from agent_support import prompt_of, trace_lines
from browser_support import requires_chromium

from webagent.agent import AgentOptions, run_agent
from webagent.agent.report import write_report
from webagent.browser import REDACTED, BrowserSession
from webagent.demo_site import SITE_DIR, serve_directory
from webagent.llm.client import Reply
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.trace.record import action_text
from webagent.trace.workflow import from_trace
from webagent.trace.writer import TraceWriter
from webagent.web.agent_view import Control
from webagent.web.live_action import Choices, LiveAction, _as_reply, live_action_schema, parse_live_action

PAGES = Path(__file__).parent / "fixtures" / "agent_pages"
CONTROLS = {
    "5": Control("5", "TYPE", "text field", "Name", form="f1"),
    "6": Control("6", "TYPE", "text field", "Old name", form="f1", disabled=True),
    "7": Control("7", "TYPE", "password field", "Password", form="f1"),
    "8": Control("8", "SELECT", "select", "Shipping", ("Standard", "Express"), "Standard", form="f1"),
    "9": Control("9", "CLICK", "submit button", "Send", form="f1"),
    "10": Control("10", "CLICK", "button", "Preview", form="f1"),
    "20": Control("20", "TYPE", "search field", "Search", form="f2"),
    "21": Control("21", "CLICK", "submit button", "Go", form="f2"),
    "30": Control("30", "TYPE", "text field", "Note"),  # outside any <form>
    "31": Control("31", "TYPE", "text field", "Comment"),
}
PAGE = Choices(CONTROLS)


def _reply(action: dict) -> Reply:
    return Reply(text=json.dumps(action), data={"action": action})


def _fill(fields: list[tuple[str, str]], submit: str = "9") -> dict:
    return {"operation": "FILL", "fields": [{"element_id": i, "value": v} for i, v in fields], "element_id": submit}


def _branches(choices: Choices) -> dict[str, dict]:
    return {
        b["properties"]["operation"]["enum"][0]: b for b in live_action_schema(choices)["properties"]["action"]["anyOf"]
    }


def test_fill_is_offered_for_two_or_more_fields_or_a_field_in_no_form_and_a_button():
    one = Choices({i: CONTROLS[i] for i in ("5", "6", "9")})  # one field enabled, one disabled, its button
    assert "FILL" not in one.operations() and "FILL" not in _branches(one)  # a form's lone field: Enter sends it
    loose = Choices(
        {"30": CONTROLS["30"], "40": Control("40", "CLICK", "button", "Submit")}
    )  # no <form>: no Enter to send it, the button is clicked
    assert _branches(loose)["FILL"]["properties"]["element_id"]["enum"] == ["40", ""]
    two = Choices({i: CONTROLS[i] for i in ("5", "7", "9", "20", "21")})  # f1 has two fields; f2 one
    assert "FILL" in two.operations()
    assert _branches(two)["FILL"]["properties"]["element_id"]["enum"] == ["9", ""]  # f1's branch only
    assert "FILL" not in Choices(CONTROLS, fill=False).operations()  # replay's one-step repair
    assert "FILL" not in Choices(CONTROLS, dialog="confirm").operations()
    fills = [
        b
        for b in live_action_schema(PAGE)["properties"]["action"]["anyOf"]
        if b["properties"]["operation"]["enum"] == ["FILL"]
    ]
    # one branch per form: its own fields and its own buttons (a button of another form cannot be chosen)
    # ("Preview", a button that does not send its form, is no FILL's click)
    assert [f["properties"]["element_id"]["enum"] for f in fills] == [["9", ""], [""]]  # f2: one field
    fill = fills[0]
    assert fill["required"] == ["operation", "fields", "element_id"]
    fields = fill["properties"]["fields"]
    assert fields["minItems"] == 1 and fields["maxItems"] == 3  # one field with a button; one alone is refused after
    typed, select = fields["items"]["anyOf"]
    assert typed["properties"]["element_id"]["enum"] == ["5", "7"]  # the disabled one left out
    assert fills[1]["properties"]["fields"]["items"]["properties"]["element_id"]["enum"] == ["30", "31"]
    assert select["properties"] == {
        "element_id": {"type": "string", "enum": ["8"]},
        "value": {"type": "string", "enum": ["Standard", "Express"]},
    }
    assert all(i["additionalProperties"] is False and i["required"] == ["element_id", "value"] for i in (typed, select))


def test_a_valid_fill_is_kept_with_each_option_as_the_select_names_it():
    action, problem = parse_live_action(_reply(_fill([("5", "Ada"), ("8", "express"), ("7", "pw-1")])), PAGE)
    assert problem is None
    assert [(f.element_id, f.value) for f in action.fields] == [("5", "Ada"), ("8", "Express"), ("7", "pw-1")]
    assert action.element_id == "9"
    assert parse_live_action(_reply(_fill([("5", "Ada"), ("8", "Express")], submit="")), PAGE)[1] is None
    assert parse_live_action(_reply(_fill([("30", "a"), ("31", "b")], submit="")), PAGE)[1] is None  # all of no form
    # the conversation keeps the reply in the schema's order
    assert list(_as_reply(action)) == ["operation", "fields", "element_id"]


@pytest.mark.parametrize(
    "fill, problem, kind",
    [
        (_fill([("5", "Ada"), ("8", "Overnight")]), "field 2 ([8]): 'Overnight' is not an option of [8]", "bad_value"),
        (
            _fill([("5", "Ada"), ("20", "tea")]),
            "field 2 ([20]): it is not in the same form as field 1 ([5])",
            "bad_fill",
        ),
        (_fill([("5", "Ada"), ("30", "hi")]), "field 2 ([30]): it is not in the same form as field 1", "bad_fill"),
        (_fill([("6", "Ada"), ("5", "Ada")]), "field 1 ([6]): [6] text field 'Old name' is disabled", "disabled"),
        (_fill([("5", "Ada"), ("99", "x")]), "field 2 ([99]): element id 99 is not on this page", "not_offered"),
        (
            _fill([("5", "Ada"), ("9", "x")]),
            "field 2 ([9]): [9] is a submit button: it takes CLICK, not FILL",
            "wrong_operation",
        ),
        (_fill([("5", "Ada"), ("5", "Bo")]), "field 2 ([5]): [5] is already field 1", "bad_fill"),
        (_fill([("5", "Ada"), ("8", "")]), "field 2 ([8]): SELECT needs a value", "bad_value"),
        (
            _fill([("5", "Ada"), ("8", "Express")], submit="21"),
            "submit button [21]: it is not in the same form",
            "bad_fill",
        ),
        (
            _fill([("5", "Ada"), ("8", "Express")], submit="30"),
            "submit button [30]: [30] is a text field",
            "wrong_operation",
        ),
        (
            _fill([("5", "Ada"), ("8", "Express")], submit="5"),
            "submit button [5]: [5] is a text field",
            "wrong_operation",
        ),
        (_fill([("5", "Ada")], submit=""), "FILL needs 2 or more fields, or one and the button", "bad_fill"),
    ],
)
def test_one_bad_part_refuses_the_whole_fill_naming_it(fill, problem, kind):
    action, found = parse_live_action(_reply(fill), PAGE)
    assert action is None and found is not None and found.message.startswith(problem) and found.kind == kind, found


def test_the_history_line_says_what_was_filled_a_password_hidden():
    action = LiveAction(
        operation="FILL",
        element_id="9",
        fields=[{"element_id": "5", "value": "Ada"}, {"element_id": "7", "value": "pw-1"}],
    )
    text = action_text(action, "[submit button]  Send", False, {"7"})
    assert text == 'FILL [5]="Ada" [7]="********" then CLICK [9] [submit button]  Send'
    assert LiveAction(operation="CLICK", element_id="9", fields=action.fields).describe() == "CLICK [9]"


# -- in Chromium --------------------------------------------------------------------------------


@pytest_asyncio.fixture
async def browser():
    async with BrowserSession() as browser:
        browser.guard = None
        yield browser


def _schema_ops(backend, k: int) -> list[str]:
    actions = [r for r in backend.requests if r["purpose"] == "action"]
    schema = actions[k]["params"]["response_format"]["json_schema"]["schema"]
    return [b["properties"]["operation"]["enum"][0] for b in schema["properties"]["action"]["anyOf"]]


@requires_chromium
@pytest.mark.browser
async def test_fill_fills_a_text_field_and_a_select_and_sends_the_form_in_one_step(browser, tmp_path):
    base, stop = serve_directory(SITE_DIR)
    try:
        assert (await browser.open(base + "order.html?item=b6")).ok

        def policy(messages, params, purpose, context):
            if "Thank you!" in context.page:
                return {"action": {"operation": "DONE", "value": ""}}
            name, ship = context.control_id("text field", "Your name"), context.control_id("select", "Shipping")
            submit = context.control_id("submit button", "Place order")
            return {"action": _fill([(name, "Ada Lovelace"), (ship, "Express (1 day)")], submit)}

        backend = FunctionBackend(policy)
        trace = TraceWriter(tmp_path / "trace")
        result = await run_agent(
            browser,
            fake_client(backend),
            "order it",
            options=AgentOptions(
                max_steps=3, form_check=False, grounded_done=False
            ),  # the check's own test is below; a GET form
            trace=trace,
        )
        assert result.status == "done" and result.steps == 2
        assert "FILL" in _schema_ops(backend, 0)
        assert browser.page.url.startswith(base + "confirm.html")
        assert await browser.page.inner_text("#c-name") == "Ada Lovelace"
        assert await browser.page.inner_text("#c-shipping") == "express"
        first = trace_lines(trace)[0]
        assert [s["op"] for s in first["fill_steps"]] == ["TYPE", "SELECT", "CLICK"]
        assert all(s["ok"] for s in first["fill_steps"])
        assert first["action_text"].startswith("FILL [") and '="Express (1 day)" then CLICK [' in first["action_text"]
        assert first["result_text"].startswith("ok, now on " + base + "confirm.html")
        assert "filled 2 fields" in first["result_text"]
        # a saved run replays (and skills learn) the parts as steps of their own
        steps = from_trace(trace.folder).steps
        assert [(s.op, s.value) for s in steps] == [
            ("TYPE", "Ada Lovelace"),
            ("SELECT", "Express (1 day)"),
            ("CLICK", ""),
            ("DONE", ""),
        ]
        assert [s.target.name for s in steps[:3] if s.target] == ["Your name", "Shipping", "Place order"]
    finally:
        stop()


@requires_chromium
@pytest.mark.browser
async def test_a_password_typed_by_fill_is_in_no_file_of_the_trace(browser, tmp_path):
    secret = "Qv7!mm3-xw"  # the model types it as itself, not as a placeholder
    base, stop = serve_directory(PAGES)
    try:
        assert (await browser.open(base + "signup.html")).ok
        prompts: list[str] = []

        def policy(messages, params, purpose, context):
            prompts.append(prompt_of(messages))
            if any("FILL" in line for line in context.history):
                return {"action": {"operation": "DONE", "value": ""}}
            fields = [
                (context.control_id("text field", "Username"), "ada"),
                (context.control_id("password field", "Password"), secret),
                (context.control_id("password field", "Confirm password"), secret),
            ]
            return {"action": _fill(fields, context.control_id("submit button", "Create account"))}

        trace = TraceWriter(tmp_path / "trace")
        lines: list[str] = []
        result = await run_agent(
            browser,
            fake_client(FunctionBackend(policy)),
            "Sign up as ada",
            options=AgentOptions(max_steps=3, form_check=False, grounded_done=False),  # (a GET form: no site change)
            trace=trace,
            progress=lines.append,
        )
        assert result.status == "done" and result.steps == 2
        assert await browser.page.evaluate("document.body.dataset.result") == secret  # typed for real, sent
        assert "Account created for ada" in await browser.page.inner_text("#out")
        write_report(trace.folder)
        files = [p for p in trace.folder.rglob("*") if p.is_file()]
        assert {p.name for p in files} >= {"steps.jsonl", "run.json", "report.html"}
        for path in files:
            assert secret.encode() not in path.read_bytes(), path
        assert secret not in "\n".join(lines) and secret not in prompts[-1]  # the model's history too
        first = trace_lines(trace)[0]
        assert [s["value"] for s in first["fill_steps"]] == ["ada", REDACTED, REDACTED, ""]
        assert [f["value"] for f in first["action"]["fields"]] == ["ada", REDACTED, REDACTED]
        assert first["action_text"].count('="********"') == 2
    finally:
        stop()


@requires_chromium
@pytest.mark.browser
async def test_the_form_check_holds_the_click_not_the_fields(browser, tmp_path):
    base, stop = serve_directory(SITE_DIR)
    try:
        assert (await browser.open(base + "order.html?item=b6")).ok
        checks: list[str] = []

        def policy(messages, params, purpose, context):
            if purpose == "form_check":
                checks.append(str(messages[-1]["content"]))
                return {"fix": "Gift wrap should be checked", "ready": False}
            if "Thank you!" in context.page:
                return {"action": {"operation": "DONE", "value": ""}}
            submit = context.control_id("submit button", "Place order")
            if any("FILL" in line for line in context.history):  # asked again: sent, without a second check
                return {"action": {"operation": "CLICK", "element_id": submit}}
            name, ship = context.control_id("text field", "Your name"), context.control_id("select", "Shipping")
            return {"action": _fill([(name, "Ada Lovelace"), (ship, "Express (1 day)")], submit)}

        trace = TraceWriter(tmp_path / "trace")
        result = await run_agent(
            browser,
            fake_client(FunctionBackend(policy)),
            "order it",
            options=AgentOptions(max_steps=4, form_check=True, grounded_done=False),  # (a GET form: no site change)
            trace=trace,
        )
        steps = trace_lines(trace)
        assert result.status == "done" and result.steps == 3
        assert (
            len(checks) == 1 and '"Ada Lovelace"' in checks[0] and '"Express (1 day)"' in checks[0]
        )  # as FILL leaves it
        assert [s["op"] for s in steps[0]["fill_steps"]] == ["TYPE", "SELECT"]  # filled, not clicked
        assert (
            "not sent: a check of the form before sending says: Gift wrap should be checked" in steps[0]["result_text"]
        )
        assert steps[0]["form_check"]["ready"] is False and "form_check" not in steps[1]
        assert steps[1]["result_text"].startswith("ok, now on " + base + "confirm.html")
    finally:
        stop()


MOVES = """<!doctype html><html><head><title>Moves</title></head><body>
<form action="sent.html">
  <label>Where <select id="where" onchange="location.href='moved.html'"><option>Here</option><option>There</option></select></label>
  <label>Note <input id="note"></label>
  <button type="submit">Send</button>
</form></body></html>"""


@requires_chromium
@pytest.mark.browser
async def test_fill_stops_where_the_page_changes_under_it(browser, tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "moves.html").write_text(MOVES)
    (tmp_path / "site" / "moved.html").write_text("<!doctype html><title>Moved</title><p>You moved.</p>")
    base, stop = serve_directory(tmp_path / "site")
    try:
        assert (await browser.open(base + "moves.html")).ok

        def policy(messages, params, purpose, context):
            if "You moved" in context.page:  # (the page's words: taken; the SELECT sent no form)
                return {"action": {"operation": "DONE", "value": "You moved."}}
            fields = [
                (context.control_id("select", "Where"), "There"),
                (context.control_id("text field", "Note"), "hi"),
            ]
            return {"action": _fill(fields, context.control_id("submit button", "Send"))}

        trace = TraceWriter(tmp_path / "trace")
        result = await run_agent(
            browser,
            fake_client(FunctionBackend(policy)),
            "move",
            options=AgentOptions(max_steps=3, form_check=False),
            trace=trace,
        )
        first = trace_lines(trace)[0]
        assert result.status == "done"
        assert [s["op"] for s in first["fill_steps"]] == ["SELECT"]  # the note and the click were for the page left
        assert f"filled 1 of 2 fields, then stopped: the page moved to {base}moved.html" in first["result_text"]
        assert browser.page.url == base + "moved.html"
    finally:
        stop()
