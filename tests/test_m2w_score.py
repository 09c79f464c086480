import json
from pathlib import Path

import pytest

from mind2web.data import load_tasks
from mind2web.score import read_predictions, score_predictions, score_steps
from webagent.errors import DataError, UserError

TINY = Path(__file__).parent / "fixtures" / "m2w_tiny"

# Gold (tests/fixtures/m2w_tiny):
#   test_task:    task-a  a1 CLICK @101 | a2 TYPE "New York" @201 | a3 SELECT "Economy Plus" @301
#                 task-b  b1 CLICK @111
#   test_website: task-c  c1 TYPE "white desk" @401 | c2 CLICK @501 or @502
#   test_domain:  task-d  d1 CLICK, no positive candidate
PREDS = [
    {
        "annotation_id": "task-a",
        "action_uid": "a1",
        "element_id": "101",
        "op": "CLICK",
        "value": "",
        "cost": {"calls": 3},
    },
    {"annotation_id": "task-a", "action_uid": "a2", "element_id": "201", "op": "TYPE", "value": "New York"},
    {"annotation_id": "task-a", "action_uid": "a3", "element_id": "301", "op": "SELECT", "value": "Economy"},
    # task-b/b1: no prediction
    {"annotation_id": "task-c", "action_uid": "c1", "element_id": 401, "op": "type", "value": "white desk"},
    {"annotation_id": "task-c", "action_uid": "c2", "element_id": "502", "op": "CLICK"},
    {"annotation_id": "task-d", "action_uid": "d1", "element_id": "601", "op": "CLICK", "value": ""},
    {"annotation_id": "task-z", "action_uid": "z1", "element_id": "1", "op": "CLICK", "value": ""},
    {"annotation_id": "task-a", "action_uid": "a9", "element_id": None, "op": None, "value": None},
]


def write(tmp_path, lines) -> Path:
    p = tmp_path / "preds.jsonl"
    p.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return p


def test_score_predictions_with_missing_and_unknown(tmp_path):
    tasks = load_tasks(TINY)
    out = score_predictions(tasks, write(tmp_path, PREDS), by_split=True)
    assert out["num_tasks"] == 4 and out["num_steps"] == 7
    assert out["missing_predictions"] == 1
    assert out["unknown_predictions"] == 2
    assert out["unknown_examples"] == [
        {"line": 7, "annotation_id": "task-z", "action_uid": "z1"},
        {"line": 8, "annotation_id": "task-a", "action_uid": "a9"},
    ]
    # a3: {SELECT, Economy} vs {SELECT, Economy, Plus} → F1 0.8
    # per task (element, op F1, step SR, task):
    #   A (1, 2.8/3, 2/3, 0)  B missing (0, 0, 0, 0)  C (1, 1, 1, 1)  D no positives (0, 0, 0, 0)
    assert out["element_acc"] == pytest.approx(50.0)
    assert out["op_f1"] == pytest.approx(100 * (2.8 / 3 + 1) / 4)
    assert out["step_sr"] == pytest.approx(100 * (2 / 3 + 1) / 4)
    assert out["task_sr"] == pytest.approx(25.0)
    # over the 7 steps
    assert out["micro_element_acc"] == pytest.approx(100 * 5 / 7)
    assert out["micro_op_f1"] == pytest.approx(100 * 4.8 / 7)
    assert out["micro_step_sr"] == pytest.approx(100 * 4 / 7)
    assert out["micro_task_sr"] == pytest.approx(25.0)
    by = out["by_split"]
    assert by["test_task"]["step_sr"] == pytest.approx(100 / 3)
    assert by["test_website"]["task_sr"] == 100.0
    assert by["test_domain"]["element_acc"] == 0.0
    json.dumps(out)  # JSON-serialisable for --json


def test_score_steps_keeps_extra_and_marks_missing(tmp_path):
    tasks = load_tasks(TINY, split="test_task")
    results, missing, unknown = score_steps(tasks, read_predictions(write(tmp_path, PREDS)))
    assert missing == 1
    # everything outside test_task is "unknown" against this subset
    assert {(p.annotation_id, p.action_uid) for p in unknown} == {
        ("task-c", "c1"),
        ("task-c", "c2"),
        ("task-d", "d1"),
        ("task-z", "z1"),
        ("task-a", "a9"),
    }
    by_uid = {r.action_uid: r for r in results}
    assert by_uid["a1"].extra == {"cost": {"calls": 3}}
    assert by_uid["b1"].extra == {"missing": True} and not by_uid["b1"].step_success
    assert by_uid["a3"].op_f1 == pytest.approx(0.8)


def test_no_predictions_at_all(tmp_path):
    out = score_predictions(load_tasks(TINY), write(tmp_path, [""]))
    assert out["missing_predictions"] == 7 and out["unknown_predictions"] == 0
    assert out["step_sr"] == 0.0 and out["task_sr"] == 0.0


@pytest.mark.parametrize(
    "bad, field, text",
    [
        ('{"annotation_id": "task-a", ', None, "invalid JSON"),
        ('["task-a", "a1"]', None, "JSON object"),
        ({"annotation_id": "task-a", "action_uid": "a1", "op": "CLICK"}, "element_id", "missing"),
        ({"action_uid": "a1", "element_id": "1", "op": "CLICK"}, "annotation_id", "missing"),
        ({"annotation_id": 5, "action_uid": "a1", "element_id": "1", "op": "CLICK"}, "annotation_id", "string"),
        ({"annotation_id": "task-a", "action_uid": "a1", "element_id": ["1"], "op": "CLICK"}, "element_id", "string"),
        ({"annotation_id": "task-a", "action_uid": "a1", "element_id": "1", "op": "HOVER"}, "op", "HOVER"),
        (
            {"annotation_id": "task-a", "action_uid": "a1", "element_id": "1", "op": "TYPE", "value": {"x": 1}},
            "value",
            "string",
        ),
        (PREDS[0], "action_uid", "second prediction"),
    ],
)
def test_malformed_line_names_file_line_field(tmp_path, bad, field, text):
    p = write(tmp_path, [PREDS[0], PREDS[1], bad])
    with pytest.raises(DataError) as ei:
        score_predictions(load_tasks(TINY), p)
    e = ei.value
    assert e.file == str(p)
    assert e.record == "line 3"
    assert e.field == field
    assert text in str(e)


def test_missing_predictions_file(tmp_path):
    with pytest.raises(UserError, match="predictions file not found"):
        score_predictions([], tmp_path / "nope.jsonl")
