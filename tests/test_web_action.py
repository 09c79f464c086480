import pytest

from webagent.llm.client import Reply
from webagent.llm.testing import fake_client
from webagent.web.action import parse_action, predict_action, visible_ids

IDS = {"12", "40", "7"}


@pytest.mark.parametrize(
    "text,data,expected",
    [
        (
            '{"element_id": "12", "operation": "click", "value": "x"}',
            {"element_id": "12", "operation": "click", "value": "x"},
            ("12", "CLICK", "x"),
        ),
        (
            '{"element_id": "id=40", "operation": "TYPE", "value": "New York"}',
            {"element_id": "id=40", "operation": "TYPE", "value": "New York"},
            ("40", "TYPE", "New York"),
        ),
        ("Answer: C.\nAction: SELECT\nValue: Pickup\nelement id=7", None, ("7", "SELECT", "Pickup")),
        ("I will TYPE into id=40, value: Chicago", None, ("40", "TYPE", "Chicago")),
        ('{"element_id": 12, "operation": "CLICK"}', {"element_id": 12, "operation": "CLICK"}, ("12", "CLICK", "")),
    ],
)
def test_parse_action_tolerates_real_replies(text, data, expected):
    action, problem = parse_action(Reply(text, data), IDS)
    assert problem is None
    assert (action.element_id, action.operation, action.value) == expected


def test_parse_action_rejects_ids_not_on_page_and_placeholders():
    action, problem = parse_action(
        Reply('{"element_id": "999", "operation": "CLICK", "value": ""}', {"element_id": "999", "operation": "CLICK"}),
        IDS,
    )
    assert action is None and "999 is not one you may act on" in problem
    action, problem = parse_action(
        Reply(
            '{"element_id": "<id of the element>", "operation": "CLICK"}',
            {"element_id": "<id of the element>", "operation": "CLICK"},
        ),
        IDS,
    )
    assert action is None and problem


async def test_predict_action_reasks_once_then_counts_failure():
    client = fake_client(
        [
            '{"element_id": "999", "operation": "CLICK", "value": ""}',
            '{"element_id": "40", "operation": "TYPE", "value": "Boston"}',
        ]
    )
    out = await predict_action(client, context="<input id=40 from>", task="t", previous_actions=[], allowed_ids=IDS)
    assert out.action.element_id == "40" and out.calls == 2 and out.failures == 0
    assert "999 is not one you may act on" in client.backend.requests[1]["messages"][2]["content"]
    client = fake_client(["no idea", "still no idea"])
    out = await predict_action(
        client, context="<a id=7 home>", task="t", previous_actions=["[a] x -> CLICK"], allowed_ids=IDS
    )
    assert out.action is None and out.failures == 1 and out.calls == 2
    assert "[a] x -> CLICK" in client.backend.requests[0]["messages"][0]["content"]


async def test_schema_restricts_element_id_to_ids_visible_in_the_context():
    client = fake_client(['{"element_id": "40", "operation": "TYPE", "value": "Boston"}'])
    context = "<div id=3> <input id=40 from /> <a id=7 home /> <span id=999 not on page /> </div>"
    await predict_action(
        client, context=context, task="t", previous_actions=[], allowed_ids=visible_ids(context, IDS | {"3"})
    )
    schema = client.backend.requests[0]["params"]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["element_id"]["enum"] == ["3", "40", "7"]
    from webagent.web.action import MAX_ENUM_IDS, action_schema

    assert "enum" not in action_schema([str(i) for i in range(MAX_ENUM_IDS + 1)])["properties"]["element_id"]
    assert "enum" not in action_schema([])["properties"]["element_id"]


@pytest.mark.parametrize(
    "text,data",
    [
        (
            '{"element_id": "12", "operation": "HOVER", "value": ""}',
            {"element_id": "12", "operation": "HOVER", "value": ""},
        ),
        ("element id=7", None),  # no operation at all: not read as CLICK
        (
            '{"element_id": "12", "operation": "HOVER", "value": "click here"}',
            {"element_id": "12", "operation": "HOVER", "value": "click here"},
        ),
    ],
)
def test_a_missing_or_unknown_operation_is_a_problem_not_a_click(text, data):
    action, problem = parse_action(Reply(text, data), IDS)
    assert action is None and "operation" in problem


async def test_an_operation_still_missing_after_the_reask_is_a_failed_step():
    client = fake_client(["element id=7", '{"element_id": "7", "operation": "HOVER", "value": ""}'])
    out = await predict_action(client, context="<a id=7 home>", task="t", previous_actions=[], allowed_ids=IDS)
    assert out.action is None and out.failures == 1 and out.calls == 2
    assert "operation" in client.backend.requests[1]["messages"][2]["content"]


async def test_the_enum_and_the_check_use_the_allowed_ids_only():
    # The context shows 7 and 40, but only 40 may be chosen (e.g. the looked-up snippet's id).
    client = fake_client(
        [
            '{"element_id": "7", "operation": "CLICK", "value": ""}',
            '{"element_id": "40", "operation": "TYPE", "value": "Boston"}',
        ]
    )
    out = await predict_action(
        client, context="<a id=7 home> <input id=40>", task="t", previous_actions=[], allowed_ids=["40"]
    )
    schema = client.backend.requests[0]["params"]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["element_id"]["enum"] == ["40"]
    assert out.action.element_id == "40" and out.calls == 2
