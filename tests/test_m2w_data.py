import json
import pickle
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from mind2web.data import Candidate, Task, iter_steps, load_hf_tasks, load_tasks
from mind2web.ranker import attach_ranker, load_ranker, load_ranker_scores
from webagent.errors import DataError, UserError

FIX = Path(__file__).parent / "fixtures"
TINY = FIX / "m2w_tiny"
BAD = FIX / "m2w_bad"


def _tiny_tasks() -> list[dict]:
    return json.loads((TINY / "test_task" / "test_task_0.json").read_text())


# ---------------------------------------------------------------- layouts


def test_dir_with_split_folders_loads_every_split():
    tasks = load_tasks(TINY)
    assert [(t.annotation_id, t.split) for t in tasks] == [
        ("task-d", "test_domain"),
        ("task-a", "test_task"),
        ("task-b", "test_task"),
        ("task-c", "test_website"),
    ]
    a = tasks[1]
    assert a.website == "united" and a.domain == "Travel" and a.subdomain == "Airlines"
    assert a.confirmed_task.startswith("Find one-way flights")
    assert [x.operation.op for x in a.actions] == ["CLICK", "TYPE", "SELECT"]
    assert a.actions[1].operation.value == "New York"
    assert a.actions[0].operation.value == ""
    assert a.actions[0].raw_html.startswith("<html>")
    cand = a.actions[0].pos_candidates[0]
    assert cand.backend_node_id == "101"
    assert cand.attributes == {
        "backend_node_id": "101",
        "bounding_box_rect": "10,20,30,40",
        "class": "btn",
        "text": "One-way",
    }
    assert cand.is_original_target is True
    assert a.actions[0].pos_ids == {"101"}
    assert [c.backend_node_id for c in a.actions[0].neg_candidates] == ["102", "103"]
    # unknown fields are ignored, not kept
    assert not hasattr(a, "extra_unknown_field")


def test_split_selection():
    tasks = load_tasks(TINY, split="test_website")
    assert [(t.annotation_id, t.split) for t in tasks] == [("task-c", "test_website")]
    # int backend_node_id normalised to str
    assert tasks[0].actions[0].pos_candidates[0].backend_node_id == "401"
    assert tasks[0].actions[1].operation.original_op == "ENTER"


def test_unknown_split_lists_available():
    with pytest.raises(UserError, match="no split 'train'.*test_domain, test_task, test_website"):
        load_tasks(TINY, split="train")


def test_dir_of_json_files_is_one_split_named_after_it():
    tasks = load_tasks(TINY / "test_task")
    assert [t.split for t in tasks] == ["test_task", "test_task"]


def test_files_sorted_naturally(tmp_path):
    d = tmp_path / "test_task"
    d.mkdir()
    recs = _tiny_tasks()
    for n, rec in ((10, recs[0]), (2, recs[1])):
        (d / f"test_task_{n}.json").write_text(json.dumps([rec]))
    (d / "README.txt").write_text("not data")
    assert [t.annotation_id for t in load_tasks(tmp_path)] == ["task-b", "task-a"]


def test_single_json_file(tmp_path):
    tasks = load_tasks(TINY / "test_task" / "test_task_0.json")
    assert [t.annotation_id for t in tasks] == ["task-a", "task-b"]
    assert tasks[0].split == "test_task"  # the folder name
    tasks = load_tasks(TINY / "test_task" / "test_task_0.json", split="mine")
    assert {t.split for t in tasks} == {"mine"}


def test_jsonl_file(tmp_path):
    p = tmp_path / "tasks.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in _tiny_tasks()) + "\n\n")
    tasks = load_tasks(p, split="train")
    assert [(t.annotation_id, t.split, len(t.actions)) for t in tasks] == [
        ("task-a", "train", 3),
        ("task-b", "train", 1),
    ]


def test_steps_teacher_force_previous_actions():
    task = load_tasks(TINY, split="test_task")[0]
    steps = task.steps()
    assert [s.previous_actions for s in steps] == [
        [],
        ["[button]  One-way -> CLICK"],
        ["[button]  One-way -> CLICK", "[textbox]  From -> TYPE: New York"],
    ]
    assert steps[2].action.operation.op == "SELECT"
    assert steps[1].key == ("task-a", "a2") and steps[1].split == "test_task"
    assert len(list(iter_steps(load_tasks(TINY)))) == 7


def test_attributes_accepts_dict_and_exposes_json():
    c = Candidate(tag="a", backend_node_id=5, attributes={"class": "x"})
    assert c.backend_node_id == "5" and c.attributes_json == '{"class": "x"}'


# ---------------------------------------------------------------- datasets path


def test_datasets_json_path_same_conversion(tmp_path):
    p = tmp_path / "train.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in _tiny_tasks()) + "\n")
    tasks = load_hf_tasks("json", split="train", data_files=str(p), cache_dir=str(tmp_path / "cache"))
    assert [t.annotation_id for t in tasks] == ["task-a", "task-b"]
    assert {t.split for t in tasks} == {"train"}
    assert tasks[0].actions[0].pos_candidates[0].attributes["text"] == "One-way"
    assert tasks[0].actions[2].operation.value == "Economy Plus"
    assert tasks[0].actions[0].pos_candidates[0].backend_node_id == "101"


def test_datasets_path_validates_records(tmp_path):
    recs = _tiny_tasks()
    recs[1]["actions"][0]["operation"]["op"] = "HOVER"
    p = tmp_path / "train.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    with pytest.raises(DataError) as ei:
        load_hf_tasks("json", split="train", data_files=str(p), cache_dir=str(tmp_path / "cache"))
    msg = str(ei.value)
    assert "hf:json:train" in msg and "task 1" in msg and "action 0" in msg and "operation.op" in msg


def test_hub_offline_is_a_user_error(monkeypatch):
    import datasets

    def offline(*a, **k):
        raise ConnectionError("Couldn't reach 'osunlp/Mind2Web' on the Hub (LocalEntryNotFoundError)")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(UserError, match=r"osunlp/Mind2Web.*split 'train'.*Offline\?"):
        load_tasks("hf:osunlp/Mind2Web:train")
    seen = {}

    def record(name, split, **k):
        seen.update(name=name, split=split)
        raise OSError("no network")

    monkeypatch.setattr(datasets, "load_dataset", record)
    with pytest.raises(UserError):
        load_tasks("hf:someone/Mind2Web-copy", split="test_website")
    assert seen == {"name": "someone/Mind2Web-copy", "split": "test_website"}


def test_hub_split_is_the_one_named_never_a_silent_train(monkeypatch):
    import datasets

    asked = []
    monkeypatch.setattr(datasets, "load_dataset", lambda name, split, **k: asked.append(split) or [])
    # no split named anywhere: an error, not train
    with pytest.raises(UserError, match="name the split"):
        load_tasks("hf:osunlp/Mind2Web")
    # the hub copy of Mind2Web has only train: a test split is a clear error, not train's tasks
    with pytest.raises(UserError, match="holds only the train split.*test_website"):
        load_tasks("hf:osunlp/Mind2Web", split="test_website")
    with pytest.raises(UserError, match="names split 'train' but --split is 'test_task'"):
        load_tasks("hf:osunlp/Mind2Web:train", split="test_task")
    assert asked == []  # none of these reached the hub
    load_tasks("hf:osunlp/Mind2Web", split="train")
    load_tasks("hf:osunlp/Mind2Web:train")
    assert asked == ["train", "train"]


# ---------------------------------------------------------------- malformed input


def _err(path, **kw) -> DataError:
    with pytest.raises(DataError) as ei:
        load_tasks(path, **kw)
    return ei.value


def test_invalid_json_names_file():
    e = _err(BAD / "invalid.json")
    assert e.file.endswith("invalid.json") and "invalid JSON" in str(e)


def test_non_list_top_level():
    e = _err(BAD / "not_list.json")
    assert e.file.endswith("not_list.json") and "JSON list" in str(e) and "dict" in str(e)


def test_missing_confirmed_task():
    e = _err(BAD / "missing_confirmed_task.json")
    assert e.file.endswith("missing_confirmed_task.json")
    assert e.record == "task 1 (no-task)"
    assert e.field == "confirmed_task"
    assert "missing" in str(e)
    assert "record task 1 (no-task), field 'confirmed_task'" in str(e)


def test_bad_operation_op():
    e = _err(BAD / "bad_op.json")
    assert e.record == "task 3 (bad-op), action 1"
    assert e.field == "operation.op"
    assert "HOVER" in str(e)


def test_bad_candidate_attributes():
    e = _err(BAD / "bad_attributes.json")
    assert e.record == "task 0 (bad-attrs), action 1"
    assert e.field == "pos_candidates[1].attributes"
    assert "not valid JSON" in str(e)


def test_bad_jsonl_line():
    e = _err(BAD / "bad_line.jsonl")
    assert e.record == "line 2" and "invalid JSON" in str(e)


def test_task_not_an_object(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('[{"annotation_id": 1}, 5]')
    e = _err(p)
    assert e.record == "task 0" and e.field == "annotation_id"


def test_skip_bad_continues_and_logs(tmp_path):
    d = tmp_path / "test_task"
    d.mkdir()
    for f in BAD.iterdir():
        shutil.copy(f, d / f.name)
    log: list = []
    tasks = load_tasks(tmp_path, skip_bad=True, bad_log=log)
    # good records of each bad file survive; bad ones are logged, one entry per problem
    ids = sorted(t.annotation_id for t in tasks)
    assert ids == sorted(["task-b", "task-c", "task-b", "task-c", "task-d", "task-b", "task-c", "task-b"])
    by_file = {Path(x["file"]).name: x for x in log}
    assert set(by_file) == {
        "invalid.json",
        "not_list.json",
        "missing_confirmed_task.json",
        "bad_op.json",
        "bad_attributes.json",
        "bad_line.jsonl",
    }
    assert by_file["bad_op.json"]["record"] == "task 3 (bad-op), action 1"
    assert by_file["bad_op.json"]["field"] == "operation.op"
    assert by_file["bad_attributes.json"]["field"] == "pos_candidates[1].attributes"
    assert by_file["bad_line.jsonl"]["record"] == "line 2"
    assert by_file["invalid.json"]["record"] is None
    assert all(x["message"] for x in log)


def test_missing_path_and_empty_dir(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        load_tasks(tmp_path / "nope")
    (tmp_path / "sub").mkdir()
    with pytest.raises(UserError, match="no JSON files found"):
        load_tasks(tmp_path)


# ---------------------------------------------------------------- ranker scores


def test_ranker_scores_roundtrip(tmp_path):
    p = tmp_path / "scores_all_data.pkl"
    data = {
        "scores": {"task-a_a1": {"101": 3.5, "102": -1.0, "103": 0.25}},
        "ranks": {"task-a_a1": {"101": 0, "102": 2, "103": 1}},
    }
    p.write_bytes(pickle.dumps(data))
    assert load_ranker_scores(p) == {"task-a_a1": {"101": 3.5, "102": -1.0, "103": 0.25}}
    r = load_ranker(p)
    assert r.ranks == {"task-a_a1": {"101": 0, "102": 2, "103": 1}}
    tasks = load_tasks(TINY, split="test_task")
    missing = attach_ranker(tasks, r)
    a1 = tasks[0].actions[0]
    assert (a1.pos_candidates[0].score, a1.pos_candidates[0].rank) == (3.5, 0)
    assert a1.neg_candidates[0].rank == 2
    assert missing == 9 - 3  # 9 candidates in task-a/b, 3 have entries


def test_ranker_ranks_derived_when_absent_and_int_keys(tmp_path):
    p = tmp_path / "s.pkl"
    p.write_bytes(pickle.dumps({"scores": {"x_1": {7: 0.1, 8: 0.9}}}))
    r = load_ranker(p)
    assert r.scores == {"x_1": {"7": 0.1, "8": 0.9}}
    assert r.ranks == {"x_1": {"8": 0, "7": 1}}


def test_ranker_bad_files(tmp_path):
    with pytest.raises(UserError, match="not found"):
        load_ranker(tmp_path / "none.pkl")
    junk = tmp_path / "junk.pkl"
    junk.write_bytes(b"definitely not a pickle")
    with pytest.raises(UserError, match="not a readable scores pickle"):
        load_ranker(junk)
    wrong = tmp_path / "wrong.pkl"
    wrong.write_bytes(pickle.dumps({"ranks": {}}))
    with pytest.raises(UserError, match="'scores'"):
        load_ranker(wrong)
    evil = tmp_path / "evil.pkl"
    evil.write_bytes(pickle.dumps({"scores": {}, "x": Path("/etc")}))
    with pytest.raises(UserError, match="refusing to load"):
        load_ranker(evil)


def test_task_model_requires_fields():
    with pytest.raises(ValidationError):
        Task.model_validate({"annotation_id": "x"})
