"""The live action reply in a typed action space: each operation only on the controls it
fits, a select's value one of its options, a disabled control refused, BACK only when
there is an earlier page, DONE at any step; the schema's root is an object that OpenAI's
strict structured outputs accept as it is. Mind2Web's action (CLICK/TYPE/SELECT on any id)
is unchanged."""

import pytest

from webagent.llm.client import Reply
from webagent.llm.structured import extract_json
from webagent.llm.testing import fake_client
from webagent.web.action import _action_from_text, action_schema, parse_action
from webagent.web.agent_view import Control
from webagent.web.live_action import (
    MAX_ENUM_IDS,
    NEXT_QUESTION,
    Choices,
    LiveAction,
    live_action_schema,
    parse_live_action,
    predict_live_action,
)

SHIPPING = Control("4", "SELECT", "select", "Shipping", ("Standard (5 days)", "Express (1 day)"), "Standard (5 days)")
CONTROLS = {
    "12": Control("12", "CLICK", "button", "Go"),
    "7": Control("7", "TYPE", "text field", "Name"),
    "4": SHIPPING,
    "t3-57": Control("t3-57", "CLICK", "link", "In a frame"),
    "9": Control("9", "CLICK", "button", "Pay", disabled=True),
}
LATER = Choices(CONTROLS, can_back=True)
FIRST = Choices(CONTROLS)


NOTED = Choices(
    CONTROLS,
    notes=(
        "Warning: you already did SKILL [login] (user=bo) on this same page. Do something else.",
        "<secret:password>",
    ),
)


def _reply(text: str) -> Reply:
    return Reply(text=text, data=extract_json(text))


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"operation": "CLICK", "element_id": "12"}', ("CLICK", "12", "")),
        (
            '{"operation": "CLICK", "element_id": "12", "value": "Night Trains"}',
            ("CLICK", "12", ""),
        ),  # no value rides along
        ('{"operation": "type", "element_id": "id=7", "value": "tea", "press_enter": true}', ("TYPE", "7", "tea")),
        ('{"operation": "SELECT", "element_id": "4", "value": "express (1 day)"}', ("SELECT", "4", "Express (1 day)")),
        ('{"operation": "SCROLL", "element_id": "12", "value": "up"}', ("SCROLL", "", "up")),
        ('{"operation": "BACK", "element_id": "12"}', ("BACK", "", "")),
        ('{"operation": "DONE", "value": "42 books"}', ("DONE", "", "42 books")),
        ("I will CLICK on [12] now.", ("CLICK", "12", "")),
        ('{"operation": "CLICK", "element_id": "t3-57"}', ("CLICK", "t3-57", "")),
        ('{"action": {"operation": "CLICK", "element_id": "12"}}', ("CLICK", "12", "")),  # the schema's root object
        ('{"operation": "TYPE", "element_id": "7", "value": ""}', ("TYPE", "7", "")),  # clears the field
        (
            '{"operation": "TYPE", "element_id": "7", "value": "Name"}',
            ("TYPE", "7", "Name"),
        ),  # the page decides, not a rule
    ],
)
def test_usable_replies(text, expected):
    action, problem = parse_live_action(_reply(text), LATER)
    assert problem is None
    assert (action.operation, action.element_id, action.value) == expected
    if expected[0] != "BACK":  # the same at the first step (DONE included): only BACK needs an earlier page
        assert parse_live_action(_reply(text), FIRST)[1] is None


@pytest.mark.parametrize(
    "text, choices, problem, kind",
    [
        ('{"operation": "CLICK", "element_id": ""}', LATER, "needs the element_id", "unreadable"),
        ('{"operation": "CLICK", "element_id": "99"}', LATER, "element id 99 is not on this page", "not_offered"),
        ('{"operation": "CLICK", "element_id": "9"}', LATER, "[9] button 'Pay' is disabled", "disabled"),
        (
            '{"operation": "SELECT", "element_id": "7", "value": "x"}',
            LATER,
            "it takes TYPE, not SELECT",
            "wrong_operation",
        ),
        (
            '{"operation": "CLICK", "element_id": "7", "value": "Night Trains"}',
            LATER,
            "it takes TYPE, not CLICK",
            "wrong_operation",
        ),
        (
            '{"operation": "TYPE", "element_id": "12", "value": "x"}',
            LATER,
            "it takes CLICK, not TYPE",
            "wrong_operation",
        ),
        ('{"operation": "SELECT", "element_id": "4", "value": ""}', LATER, "needs a value", "bad_value"),
        (
            '{"operation": "SELECT", "element_id": "4", "value": "Overnight"}',
            LATER,
            "not an option of [4]",
            "bad_value",
        ),
        ('{"operation": "GOTO", "value": "http://x.test/"}', LATER, "not possible now", "not_offered"),
        ('{"operation": "SCROLL", "value": "left"}', LATER, 'up" or "down', "bad_value"),
        ('{"operation": "HOVER", "element_id": "7"}', LATER, "no valid operation", "unreadable"),
        ('{"operation": "BACK"}', FIRST, "no earlier page", "not_offered"),
        ("no idea", LATER, "no LiveAction found", "unreadable"),
        # an answer quoting the prompt's own words: a warning it copied, a placeholder of the task
        (
            '{"operation": "DONE", "value": "You already did SKILL [login] (user=bo)"}',
            NOTED,
            "prompt's own",
            "bad_answer",
        ),
        ('{"operation": "DONE", "value": "Log in as bo (password <secret:password>)"}', NOTED, "own", "bad_answer"),
    ],
)
def test_unusable_replies_say_why(text, choices, problem, kind):
    action, found = parse_live_action(_reply(text), choices)
    assert action is None and found is not None and problem in found.message and found.kind == kind


LOG_IN = Choices(
    {
        "2": Control("2", "TYPE", "email field", "Email address", form="f"),
        "3": Control("3", "TYPE", "password field", "Password", form="f"),
        "5": Control("5", "CLICK", "submit button", "Log In", form="f", submits=True),
    }
)


@pytest.mark.parametrize("placeholder", ["<secret:password>", "********"])
def test_a_secret_placeholder_goes_only_into_a_password_field(placeholder):
    """The 1.5B typed the task's <secret:password> into a log-in's e-mail field: the password
    would have been typed where the page shows it, and sent as the user's name. The same value
    into the password field, and a name into the e-mail field, are taken."""
    typed = f'{{"operation": "TYPE", "element_id": "2", "value": "{placeholder}"}}'
    action, problem = parse_live_action(_reply(typed), LOG_IN)
    assert action is None and problem is not None and problem.kind == "bad_value"
    assert "[2] email field 'Email address' is not a password field" in problem.message
    filled = (
        f'{{"operation": "FILL", "element_id": "5", "fields": [{{"element_id": "2", "value": "{placeholder}"}}, '
        '{"element_id": "3", "value": "<secret:password>"}]}'
    )
    action, problem = parse_live_action(_reply(filled), LOG_IN)
    assert action is None and problem is not None and "field 1 ([2])" in problem.message
    for element_id, value in (("3", placeholder), ("2", "alice@example.com")):
        typed = f'{{"operation": "TYPE", "element_id": "{element_id}", "value": "{value}"}}'
        action, problem = parse_live_action(_reply(typed), LOG_IN)
        assert problem is None and action is not None and action.value == value


def test_an_answer_from_the_page_is_not_refused_for_sharing_a_few_words_with_a_note():
    for answer in ("bo", "Login", "Ticket 33 is assigned to bo", ""):
        action, problem = parse_live_action(_reply(f'{{"operation": "DONE", "value": "{answer}"}}'), NOTED)
        assert problem is None and action is not None and action.value == answer


def test_an_answer_the_page_shows_is_not_refused_when_a_loop_message_quotes_it_too():
    """The loop breaker's message quotes the page's lines: the 1.5B's right answer, the submitter
    the message quoted from the page, was refused as the prompt's own words and cost a step."""
    page = '[8] link "8. Invoice #4471 charged twice"\nSubmitter: accounts@brightpath.example'
    said = (
        'TYPE "4471" + Enter [search field] Search: at step 3 changed nothing on this page; it is not offered '
        'here again. The page already shows: "Submitter: accounts@brightpath.example"'
    )
    reply = _reply('{"operation": "DONE", "value": "accounts@brightpath.example"}')
    assert parse_live_action(reply, Choices(CONTROLS, notes=(said,), page=page)) == (
        parse_live_action(reply, FIRST)[0],
        None,
    )
    # without the page's word for it, the same answer reads as a copy of the message
    assert parse_live_action(reply, Choices(CONTROLS, notes=(said,)))[1].kind == "bad_answer"
    copied = _reply('{"operation": "DONE", "value": "TYPE \\"4471\\" + Enter [search field] Search: at step 3"}')
    assert parse_live_action(copied, Choices(CONTROLS, notes=(said,), page=page))[1].kind == "bad_answer"


def _branches(choices: Choices) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for branch in live_action_schema(choices)["properties"]["action"]["anyOf"]:
        out.setdefault(branch["properties"]["operation"]["enum"][0], []).append(branch)
    return out


def test_schema_ties_each_operation_to_the_controls_it_fits():
    branches = _branches(LATER)
    assert branches["CLICK"][0]["properties"] == {
        "operation": {"type": "string", "enum": ["CLICK"]},
        "element_id": {"type": "string", "enum": ["12", "t3-57"]},
    }
    assert branches["TYPE"][0]["properties"]["element_id"]["enum"] == ["7"]
    (select,) = branches["SELECT"]
    assert select["properties"]["element_id"]["enum"] == ["4"]
    assert select["properties"]["value"]["enum"] == ["Standard (5 days)", "Express (1 day)"]
    assert set(branches["SCROLL"][0]["properties"]) == {"operation", "value"}
    assert set(branches["BACK"][0]["properties"]) == {"operation"}
    assert set(branches["DONE"][0]["properties"]) == {"operation", "value"}
    assert all(b["additionalProperties"] is False for bs in branches.values() for b in bs)
    # no BACK at the start; FILL: a text field and a select to fill
    assert set(_branches(FIRST)) == {"CLICK", "TYPE", "SELECT", "FILL", "SCROLL", "DONE"}
    assert "9" not in branches["CLICK"][0]["properties"]["element_id"]["enum"]  # disabled: shown, not offered


def test_a_fill_of_a_form_takes_the_fields_it_sends_and_the_buttons_that_send_it():
    """The helpdesk's ticket list sits in a mass-update <form>: its search box and page-size
    select (a script's, no name) and its toolbar's buttons (type=button) are no part of what
    the form sends; the 1.5B filled the two and clicked "Queries", a panel's toggle. A FILL of
    a form takes its named fields (all, when it names none) and only the buttons that send it;
    a form that names no field and shows no such button is a script's controls; fields
    in no form still go with buttons in none (a page built of divs)."""
    from webagent.web.agent_view import build_view

    page = (
        '<html><body backend_node_id="1"><form backend_node_id="2" method="post">'
        '<input backend_node_id="3" type="search" aria-label="Search"><select backend_node_id="4">'
        '<option backend_node_id="20">10</option><option backend_node_id="21">25</option></select>'
        '<select backend_node_id="5" name="action"><option backend_node_id="22">Close</option></select>'
        '<button backend_node_id="6" type="button">Queries</button><button backend_node_id="7" type="submit">Go</button>'
        "</form>"
        '<form backend_node_id="8"><input backend_node_id="9" name="title" aria-label="Title">'
        '<input backend_node_id="10" name="body" aria-label="Body"><button backend_node_id="11" type="button">Preview</button>'
        '<button backend_node_id="12">Save</button></form>'
        '<form backend_node_id="13"><input backend_node_id="14" name="a" aria-label="A"><input backend_node_id="15" '
        'name="b" aria-label="B"><button backend_node_id="16" type="button">Send</button></form>'
        '<form backend_node_id="23"><input backend_node_id="24" aria-label="C"><input backend_node_id="25" '
        'aria-label="D"><button backend_node_id="26">Go on</button></form>'
        '<div><input backend_node_id="17" aria-label="Name"><button backend_node_id="18" type="button">Next</button></div>'
        "</body></html>"
    )
    controls = build_view(page).controls
    assert (controls["7"].submits, controls["6"].submits, controls["12"].submits) == (True, False, True)
    assert (controls["3"].named, controls["5"].named) == (False, True)
    groups = Choices(controls).fill_groups()
    assert "2" not in groups  # one field it sends: no FILL (a lone field is sent by Enter)
    hidden_go = page.replace('<button backend_node_id="7" type="submit">Go</button>', "").replace(' name="action"', "")
    assert "2" not in Choices(build_view(hidden_go).controls).fill_groups()  # nameless, and nothing sends it
    assert groups["8"] == (["9", "10"], ["12"])  # "Preview" sends nothing
    assert groups["13"] == (["14", "15"], [])  # no button sends it: its fields filled, the click the model's
    assert groups["23"] == (["24", "25"], ["26"])  # it names no field: a script sends them all
    assert groups[""] == (["17"], ["18"])


def test_the_schema_is_one_openai_strict_mode_accepts():
    """OpenAI needs an object at the root, every property required and no extra ones: its own
    strict conversion leaves the schema as it is."""
    from openai.lib._pydantic import _ensure_strict_json_schema

    schema = live_action_schema(LATER)
    assert schema["type"] == "object" and schema["required"] == ["action"]
    import copy

    assert _ensure_strict_json_schema(copy.deepcopy(schema), path=(), root=copy.deepcopy(schema)) == schema
    for bs in _branches(LATER).values():
        for b in bs:
            assert set(b["required"]) == set(b["properties"]) and b["additionalProperties"] is False


def test_both_schemas_drop_the_id_enum_at_the_same_size():
    ids = [str(i) for i in range(MAX_ENUM_IDS + 1)]
    clicks = Choices({i: Control(i, "CLICK", "button", "b") for i in ids})
    assert "enum" not in _branches(clicks)["CLICK"][0]["properties"]["element_id"]
    assert "enum" not in action_schema(ids)["properties"]["element_id"]
    assert (
        "enum" in _branches(Choices({i: clicks.controls[i] for i in ids[:-1]}))["CLICK"][0]["properties"]["element_id"]
    )
    assert "enum" in action_schema(ids[:-1])["properties"]["element_id"]


def test_prose_keeps_an_apostrophe_in_a_value():
    assert _action_from_text('TYPE into id=5, value: "O\'Brien"')["value"] == "O'Brien"
    assert _action_from_text("element id 5, TYPE, value: O'Brien")["value"] == "O'Brien"


def test_mind2web_action_still_refuses_the_live_operations():
    action, problem = parse_action(_reply('{"element_id": "12", "operation": "SCROLL", "value": ""}'), ["12"])
    assert action is None and "CLICK, TYPE or SELECT" in problem


def test_describe():
    assert (
        LiveAction(operation="TYPE", element_id="7", value="tea", press_enter=True).describe()
        == 'TYPE [7] "tea" + Enter'
    )
    assert LiveAction(operation="SCROLL").describe() == "SCROLL down"


async def test_reask_once_then_failure_with_history_and_examples_in_the_prompt():
    client = fake_client(['{"operation": "CLICK", "element_id": "5"}', "still nothing"])
    outcome = await predict_live_action(
        client,
        context='[12] button "Go"',
        task="go",
        history=["1. CLICK [3] -> failed: element 3 (button) is disabled"],
        choices=Choices({"12": CONTROLS["12"]}),
    )
    assert outcome.action is None and outcome.failures == 1 and outcome.calls == 2
    messages = client.backend.requests[0]["messages"]
    assert messages[0]["role"] == "system" and "[id] kind" in messages[0]["content"]
    assert [m["role"] for m in messages[1:-1]] == ["user", "assistant"] * ((len(messages) - 2) // 2)
    step = messages[-1]["content"]
    assert step.startswith(
        "Previous actions and their results:\n1. CLICK [3] -> failed: element 3 (button) is disabled"
    )
    assert step.endswith("\nTask: go\n" + NEXT_QUESTION)  # the task last, right before the question
    schema = client.backend.requests[0]["params"]["response_format"]["json_schema"]["schema"]
    assert [b["properties"]["operation"]["enum"][0] for b in schema["properties"]["action"]["anyOf"]] == [
        "CLICK",
        "SCROLL",
        "DONE",
    ]
    reask = client.backend.requests[1]["messages"]
    assert reask[: len(messages)] == messages and "could not be used" in reask[-1]["content"]
