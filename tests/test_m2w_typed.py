"""Mind2Web's typed action space (`mind2web eval --typed-actions`): the schema, the check,
and the eval with the flag on and off."""

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from mind2web.cli import main as m2w_main
from mind2web.data import load_tasks
from mind2web.methods import Variant
from mind2web.metrics import op_f1
from mind2web.rows import read_rows
from mind2web.runner import PROMPTS_USED, EvalConfig, run_eval
from webagent.errors import UserError
from webagent.html import split_snippets
from webagent.llm.client import Reply
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.prompts import prompt_hash
from webagent.web.action import action_schema, parse_action, predict_action
from webagent.web.typed_action import MAX_SELECT_BRANCHES, TypedSpace, page_controls

FIXTURES = Path(__file__).parent / "fixtures" / "mind2web"

# Mind2Web-style cleaned HTML: a text field, a select, a submit button, a link, and a <div>
# the view does not classify (no is_clickable, as on many Mind2Web pages).
PAGE = (
    '<html backend_node_id="1"><body backend_node_id="2"><form backend_node_id="3">'
    '<label backend_node_id="4">From <input type="text" backend_node_id="5"/></label>'
    '<select backend_node_id="6"><option backend_node_id="7">Economy</option>'
    '<option backend_node_id="8">Business / First</option></select>'
    '<button type="submit" backend_node_id="9">Search</button></form>'
    '<a backend_node_id="10">Deals</a><div backend_node_id="11">Flight status</div></body></html>'
)
ALLOWED = ["5", "6", "9", "10", "11"]


def reply(**fields) -> Reply:
    return Reply(json.dumps(fields), fields)


@pytest.fixture
def space():
    return TypedSpace.of(ALLOWED, page_controls(PAGE))


def test_each_allowed_id_takes_the_operation_of_its_kind_and_unclassified_ids_stay_clickable(space):
    assert space.op_of == {"5": "TYPE", "6": "SELECT", "9": "CLICK", "10": "CLICK", "11": "CLICK"}
    assert space.options == {"6": ("Economy", "Business / First")}
    branches = {
        (b["properties"]["operation"]["enum"][0], tuple(b["properties"]["element_id"]["enum"])): b
        for b in action_schema(ALLOWED, space)["anyOf"]
    }
    assert set(branches) == {("CLICK", ("9", "10", "11")), ("TYPE", ("5",)), ("SELECT", ("6",))}
    assert branches["SELECT", ("6",)]["properties"]["value"]["enum"] == ["Economy", "Business / First"]
    assert branches["TYPE", ("5",)]["properties"]["value"]["minLength"] == 1
    # the plain reply's fields and order: the id first, its kind then fixes the operation
    assert all(list(b["properties"]) == ["element_id", "operation", "value"] for b in branches.values())


def test_an_operation_that_does_not_fit_the_element_is_refused(space):
    action, problem = parse_action(reply(element_id="9", operation="TYPE", value="Boston"), ALLOWED, space)
    assert action is None and "element 9" in problem and "takes CLICK, not TYPE" in problem
    action, problem = parse_action(reply(element_id="5", operation="CLICK", value=""), ALLOWED, space)
    assert action is None and "a text field" in problem and "TYPE" in problem
    action, problem = parse_action(reply(element_id="11", operation="SELECT", value="Economy"), ALLOWED, space)
    assert action is None and "takes CLICK" in problem
    action, problem = parse_action(reply(element_id="5", operation="TYPE", value=""), ALLOWED, space)
    assert action is None and "TYPE needs a value" in problem
    # the plain space (no typed space given) is unchanged: any allowed id, any operation
    action, problem = parse_action(reply(element_id="9", operation="TYPE", value="Boston"), ALLOWED)
    assert problem is None and (action.element_id, action.operation) == ("9", "TYPE")


def test_a_select_value_must_be_one_of_its_options(space):
    action, problem = parse_action(reply(element_id="6", operation="SELECT", value="Premium"), ALLOWED, space)
    assert action is None and "'Premium' is not an option of element 6" in problem and "Business / First" in problem
    action, problem = parse_action(reply(element_id="6", operation="SELECT", value="business /  first"), ALLOWED, space)
    assert problem is None and action.value == "Business / First"  # the option's exact text, as the gold value


def test_a_value_given_with_click_is_kept_for_op_f1_to_judge(space):
    """Decision: the typed space ties operations to elements; what a click carries stays the
    model's, as in the plain space and upstream, and Mind2Web's op F1 judges it."""
    action, problem = parse_action(reply(element_id="11", operation="CLICK", value="status"), ALLOWED, space)
    assert problem is None and (action.operation, action.value) == ("CLICK", "status")
    click = next(b for b in action_schema(ALLOWED, space)["anyOf"] if b["properties"]["operation"]["enum"] == ["CLICK"])
    assert click["properties"]["value"] == {"type": "string"}
    assert op_f1("CLICK", "status", "CLICK", "") < 1 == op_f1("CLICK", "", "CLICK", "")


def test_ids_outside_the_allowed_ones_are_refused_and_many_selects_share_one_checked_branch():
    controls = page_controls(PAGE)
    space = TypedSpace.of(["9"], controls)
    action, problem = parse_action(reply(element_id="6", operation="SELECT", value="Economy"), ["9"], space)
    assert action is None and "6 is not one you may act on" in problem
    many = "".join(
        f'<select backend_node_id="{100 + i}"><option>a{i}</option></select>' for i in range(MAX_SELECT_BRANCHES + 1)
    )
    space = TypedSpace.of(
        [str(100 + i) for i in range(MAX_SELECT_BRANCHES + 1)],
        page_controls(f'<html backend_node_id="1"><body backend_node_id="2">{many}</body></html>'),
    )
    (branch,) = space.schema(500)["anyOf"]
    assert len(branch["properties"]["element_id"]["enum"]) == MAX_SELECT_BRANCHES + 1
    assert space.check("100", "SELECT", "a1")[1] is not None and space.check("100", "SELECT", "A0") == ("a0", None)


async def test_predict_action_with_controls_sends_the_typed_schema_and_reasks_once():
    client = fake_client(
        [
            reply(element_id="9", operation="TYPE", value="Boston").text,
            reply(element_id="5", operation="TYPE", value="Boston").text,
        ]
    )
    out = await predict_action(
        client, context="...", task="t", previous_actions=[], allowed_ids=ALLOWED, controls=page_controls(PAGE)
    )
    assert (out.action.element_id, out.action.operation, out.calls, out.failures) == ("5", "TYPE", 2, 0)
    sent = client.backend.requests[0]["params"]["response_format"]["json_schema"]["schema"]
    assert "anyOf" in sent
    assert "takes CLICK, not TYPE" in client.backend.requests[1]["messages"][2]["content"]
    plain = fake_client([reply(element_id="9", operation="TYPE", value="Boston").text])
    out = await predict_action(plain, context="...", task="t", previous_actions=[], allowed_ids=ALLOWED)
    assert out.action.operation == "TYPE" and out.calls == 1  # without controls: as before
    assert plain.backend.requests[0]["params"]["response_format"]["json_schema"]["schema"] == action_schema(ALLOWED)


def test_every_gold_action_of_the_fixtures_stays_reachable():
    for split in ("test_website", "test_task", "test_domain"):
        for task in load_tasks(FIXTURES, split=split):
            for action in task.actions:
                ids = [i for s in split_snippets(action.cleaned_html) for i in s.ids]
                space = TypedSpace.of(ids, page_controls(action.cleaned_html))
                gold = action.pos_candidates[0].backend_node_id
                value, problem = space.check(gold, action.operation.op, action.operation.value)
                assert problem is None and value == action.operation.value, (split, action.action_uid, problem)


# ---------------------------------------------------------------- the eval with the flag


def gold_model(tasks):
    """Answers each step with its gold action when the gold id is in the prompt."""
    steps = {a.action_uid: (t, a) for t in tasks for a in t.actions}

    def fn(messages, params, purpose):
        text = messages[0]["content"]
        if purpose == "gist":
            return "a gist"
        if purpose == "lookup":
            return {"pages": [0]}
        for task, action in steps.values():
            if f"Task: {task.confirmed_task}" in text:
                done = sum(1 for r in task.action_reprs if r in text.split("Previous actions:")[1])
                if task.actions[done] is action:
                    gold = action.pos_candidates[0].backend_node_id
                    if f"id={gold}" in text:
                        return {"element_id": gold, "operation": action.operation.op, "value": action.operation.value}
        return {"element_id": re.findall(r"id=(\d+)", text)[0], "operation": "CLICK", "value": ""}

    return fn


def config(**kw):
    base = dict(
        data=str(FIXTURES),
        split="test_website",
        depth="auto",
        budget_words=300,
        context_tokens=8192,
        model="fake:function",
        endpoint="fake:function",
        structured=True,
        prompts={name: prompt_hash(name) for name in PROMPTS_USED},
        previous_k=5,
        act_on="looked-up",
    )
    return EvalConfig(**{**base, **kw})


def action_schemas(client) -> list[dict]:
    return [
        r["params"]["response_format"]["json_schema"]["schema"]
        for r in client.backend.requests
        if r["purpose"] == "action"
    ]


async def test_the_flag_changes_the_schema_sent_and_is_recorded_in_the_config(tmp_path):
    tasks = load_tasks(FIXTURES, split="test_website")
    variants = [Variant("bm25", 5), Variant("readagent-p", 1)]
    runs = {}
    for typed in (False, True):
        client = fake_client(FunctionBackend(gold_model(tasks)))
        await run_eval(client, tasks, variants, tmp_path / str(typed), config(typed_actions=typed))
        runs[typed] = client
        assert json.loads((tmp_path / str(typed) / "config.json").read_text())["typed_actions"] is typed
        rows = read_rows(tmp_path / str(typed) / "steps.jsonl")
        assert len(rows) == 2 * sum(len(t.actions) for t in tasks) and all(r.failures == 0 for r in rows)
    plain, typed = action_schemas(runs[False]), action_schemas(runs[True])
    assert plain and all("anyOf" not in s and "enum" in s["properties"]["element_id"] for s in plain)
    assert typed and all("anyOf" in s for s in typed)
    # the prompts are the same: only the action space differs
    prompts = [
        [r["messages"] for r in runs[flag].backend.requests if r["purpose"] == "action"] for flag in (False, True)
    ]
    assert sorted(map(str, prompts[0])) == sorted(map(str, prompts[1]))
    # a changed flag refuses to resume into the folder
    with pytest.raises(UserError, match=r"typed_actions \(true → false\)"):
        await run_eval(runs[True], tasks, variants, tmp_path / "True", config())


async def test_a_folder_written_before_the_flag_existed_resumes_as_plain(tmp_path):
    tasks = load_tasks(FIXTURES, split="test_website")
    client = fake_client(FunctionBackend(gold_model(tasks)))
    await run_eval(client, tasks, [Variant("bm25", 1)], tmp_path, config(), limit=1)
    stored = json.loads((tmp_path / "config.json").read_text())
    del stored["typed_actions"]
    (tmp_path / "config.json").write_text(json.dumps(stored))
    info = await run_eval(client, tasks, [Variant("bm25", 1)], tmp_path, config())
    assert info["resumed"] == len(tasks[0].actions)
    with pytest.raises(UserError, match="typed_actions"):
        await run_eval(client, tasks, [Variant("bm25", 1)], tmp_path, config(typed_actions=True))


def test_cli_typed_actions_reaches_config_and_report(tmp_path):
    args = [
        "eval",
        "--data",
        str(FIXTURES),
        "--split",
        "test_website",
        "--method",
        "bm25",
        "--top-k",
        "1",
        "--model",
        "fake:heuristic",
    ]
    for flag, out in (([], tmp_path / "plain"), (["--typed-actions"], tmp_path / "typed")):
        result = CliRunner().invoke(m2w_main, [*args, *flag, "--out", str(out)])
        assert result.exit_code == 0, result.output
        assert json.loads((out / "config.json").read_text())["typed_actions"] is bool(flag)
        md = (out / "report.md").read_text()
        assert ("Action space: typed (--typed-actions" in md) is bool(flag)
        assert ("Action space: plain" in md) is not bool(flag)
    again = CliRunner().invoke(m2w_main, [*args, "--out", str(tmp_path / "typed")])
    assert again.exit_code != 0 and "typed_actions (true → false)" in again.output
