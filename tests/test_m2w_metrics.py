import pytest

from mind2web.data import Action, Task
from mind2web.metrics import (
    StepResult,
    aggregate,
    element_correct,
    gold_op_string,
    missing_step,
    op_f1,
    score_step,
    task_success,
    token_f1,
)


def act(uid: str, op: str, value: str = "", pos=("1",), neg=("9",)) -> Action:
    c = lambda i: {"tag": "button", "backend_node_id": i, "attributes": "{}"}  # noqa: E731
    return Action.model_validate(
        {
            "action_uid": uid,
            "cleaned_html": "<html></html>",
            "operation": {"op": op, "original_op": op, "value": value},
            "pos_candidates": [c(i) for i in pos],
            "neg_candidates": [c(i) for i in neg],
        }
    )


def res(aid: str, uid: str, el: bool, f1: float, split: str = "s") -> StepResult:
    return StepResult(
        annotation_id=aid, action_uid=uid, split=split, element_correct=el, op_f1=f1, step_success=el and f1 == 1.0
    )


# ---------------------------------------------------------------- element


def test_element_correct():
    assert element_correct("101", {"101", "7"})
    assert element_correct(101, ["101"])  # ids compare as strings
    assert not element_correct("102", {"101"})
    assert not element_correct(None, {"101"})
    assert not element_correct("101", [])  # no positives: never correct


# ---------------------------------------------------------------- op F1


def test_gold_op_string_drops_click_value():
    assert gold_op_string("CLICK", "") == "CLICK"
    assert gold_op_string("CLICK", "whatever") == "CLICK"
    assert gold_op_string("TYPE", " New York ") == "TYPE New York"


def test_token_f1_edges():
    assert token_f1("", "") == 1.0
    assert token_f1("", "CLICK") == 0.0
    assert token_f1("CLICK", "") == 0.0
    assert token_f1("CLICK", "TYPE x") == 0.0
    assert token_f1("TYPE a a", "TYPE a") == 1.0  # token sets


def test_op_f1_click():
    assert op_f1("CLICK", "", "CLICK", "") == 1.0
    assert op_f1("CLICK", None, "CLICK", "") == 1.0
    # a value predicted with CLICK is kept, as upstream does: {CLICK, x} vs {CLICK} → P=1/2, R=1
    assert op_f1("CLICK", "x", "CLICK", "") == pytest.approx(2 / 3)
    assert op_f1("CLICK", "", "TYPE", "New York") == 0.0
    assert op_f1(None, "", "CLICK", "") == 0.0


def test_op_f1_select_multiword_partial():
    # {SELECT, Economy} vs {SELECT, Economy, Plus}: tp=2, P=1, R=2/3 → F1 = 2·(2/3)/(5/3) = 0.8
    assert op_f1("SELECT", "Economy", "SELECT", "Economy Plus") == pytest.approx(0.8)
    # {SELECT, Economy, Class} vs {SELECT, Premium, Economy, Plus}: tp=2, P=2/3, R=1/2 → F1 = 4/7
    assert op_f1("SELECT", "Economy Class", "SELECT", "Premium Economy Plus") == pytest.approx(4 / 7)


def test_op_f1_type_case_and_extra_token():
    # case counts (no lowercasing upstream): only TYPE overlaps → P=R=1/3 → F1=1/3
    assert op_f1("TYPE", "new york", "TYPE", "New York") == pytest.approx(1 / 3)
    # extra token: tp=3, P=3/4, R=1 → F1 = 6/7
    assert op_f1("TYPE", "New York City", "TYPE", "New York") == pytest.approx(6 / 7)
    assert op_f1("TYPE", "  New   York ", "TYPE", "New York") == 1.0


# ---------------------------------------------------------------- step


def test_score_step():
    a = act("u1", "TYPE", "New York", pos=("5",))
    r = score_step(a, "5", "TYPE", "New York", annotation_id="t", split="test_task", extra={"calls": 2})
    assert (r.element_correct, r.op_f1, r.step_success, r.split, r.extra) == (
        True,
        1.0,
        True,
        "test_task",
        {"calls": 2},
    )
    r = score_step(a, "6", "TYPE", "New York", annotation_id="t")
    assert (r.element_correct, r.op_f1, r.step_success) == (False, 1.0, False)
    r = score_step(a, "5", "TYPE", "New York City", annotation_id="t")
    assert (r.element_correct, r.step_success) == (True, False) and r.op_f1 == pytest.approx(6 / 7)


def test_score_step_empty_positives_scores_zero_everywhere():
    a = act("u1", "CLICK", pos=())
    r = score_step(a, "9", "CLICK", "", annotation_id="t")
    assert (r.element_correct, r.op_f1, r.step_success) == (False, 0.0, False)


def test_missing_step_is_failure():
    r = missing_step("t", "u", "s")
    assert (r.element_correct, r.op_f1, r.step_success, r.extra) == (False, 0.0, False, {"missing": True})


# ---------------------------------------------------------------- task / aggregate


def test_task_with_one_failed_step():
    rs = [res("t", "1", True, 1.0), res("t", "2", False, 1.0), res("t", "3", True, 1.0)]
    assert task_success(rs) == {"t": False}
    agg = aggregate(rs)
    assert agg["step_sr"] == pytest.approx(200 / 3)
    assert agg["micro_step_sr"] == pytest.approx(200 / 3)
    assert agg["task_sr"] == 0.0 and agg["micro_task_sr"] == 0.0
    assert agg["element_acc"] == pytest.approx(200 / 3)
    assert agg["op_f1"] == 100.0
    assert (agg["num_tasks"], agg["num_steps"]) == (1, 3)


def test_macro_vs_micro_with_different_task_lengths():
    rs = [
        res("X", "x1", True, 1.0, split="s1"),
        res("Y", "y1", True, 0.5, split="s2"),
        res("Y", "y2", False, 0.0, split="s2"),
        res("Y", "y3", True, 1.0, split="s2"),
    ]
    # Y's y3 is a success; X's only step too
    agg = aggregate(rs)
    # element: X 1/1, Y 2/3 → macro (1 + 2/3)/2 = 5/6; micro 3/4
    assert agg["element_acc"] == pytest.approx(100 * 5 / 6)
    assert agg["micro_element_acc"] == pytest.approx(75.0)
    # op F1: X 1.0, Y (0.5+0+1)/3 = 0.5 → macro 0.75; micro 2.5/4
    assert agg["op_f1"] == pytest.approx(75.0)
    assert agg["micro_op_f1"] == pytest.approx(62.5)
    # step SR: X 1, Y 1/3 → macro 2/3; micro 2/4
    assert agg["step_sr"] == pytest.approx(100 * 2 / 3)
    assert agg["micro_step_sr"] == pytest.approx(50.0)
    # task SR: X succeeds, Y fails
    assert agg["task_sr"] == 50.0 and agg["micro_task_sr"] == 50.0
    assert (agg["num_tasks"], agg["num_steps"]) == (2, 4)
    assert "by_split" not in agg

    by = aggregate(rs, by_split=True)["by_split"]
    assert set(by) == {"s1", "s2"}
    assert by["s1"]["task_sr"] == 100.0 and by["s1"]["num_steps"] == 1
    assert by["s2"]["step_sr"] == pytest.approx(100 / 3)
    assert by["s2"]["op_f1"] == pytest.approx(50.0)
    assert by["s2"]["num_tasks"] == 1


def test_aggregate_with_tasks_counts_missing_steps_as_failures():
    task = Task.model_validate(
        {
            "annotation_id": "T",
            "website": "w",
            "domain": "d",
            "subdomain": "s",
            "confirmed_task": "do it",
            "action_reprs": ["a", "b"],
            "actions": [act("u1", "CLICK").model_dump(), act("u2", "CLICK").model_dump()],
        }
    )
    task.split = "test_task"
    agg = aggregate([res("T", "u1", True, 1.0, split="test_task")], tasks=[task], by_split=True)
    assert agg["missing_steps"] == 1
    assert agg["num_steps"] == 2
    assert agg["step_sr"] == 50.0 and agg["task_sr"] == 0.0
    assert agg["by_split"]["test_task"]["num_steps"] == 2  # the added failure carries the task's split


def test_aggregate_empty():
    agg = aggregate([])
    assert agg["num_tasks"] == 0 and agg["num_steps"] == 0 and agg["task_sr"] == 0.0


def test_aggregate_over_a_runs_planned_tasks():
    """A run folder's manifest stands in for the data: a task with one of its three steps
    finished (and right) is not a success."""
    from mind2web.rows import PlannedTask

    gold = [
        PlannedTask(annotation_id="T", split="s", website="w", action_uids=["u1", "u2", "u3"]),
        PlannedTask(annotation_id="U", split="s", website="w", action_uids=["v1"]),
    ]
    agg = aggregate([res("T", "u1", True, 1.0), res("U", "v1", True, 1.0)], tasks=gold)
    assert agg["task_sr"] == 50.0 and agg["missing_steps"] == 2 and agg["num_steps"] == 4
    assert agg["step_sr"] == pytest.approx(100 * (1 / 3 + 1) / 2)
    assert aggregate([res("T", "u1", True, 1.0)])["task_sr"] == 100.0  # without the gold: what the old report did
