"""One results folder for every evaluator (issue 35, item 1; webagent.results_folder): the
configuration is pinned and another refused naming what differs; rows are appended as items
finish, an error row runs again, a torn last line (a run killed mid-write) is dropped and a
damaged line before it is one error; shards of one configuration merge, of two do not. The
MiniWoB++ evaluator shards and merges like apps eval: two shards merged are the whole run."""

from __future__ import annotations

import json

import pytest
from browser_support import requires_chromium
from click.testing import CliRunner
from pydantic import BaseModel

from webagent.cli import main
from webagent.errors import UserError
from webagent.results_folder import ResultsFolder, Row, merge, shard


class Config(BaseModel):
    model: str
    steps: int = 15


class _Row(Row):
    task: str
    status: str


def _folder(path) -> ResultsFolder[Config]:
    return ResultsFolder(path, Config, _Row, key=lambda row: row.task, what="a test run")


def test_the_configuration_is_pinned_and_another_refused(tmp_path):
    folder = _folder(tmp_path / "out")
    folder.pin(Config(model="m"))
    folder.pin(Config(model="m"))  # the same: resumed
    with pytest.raises(UserError, match=r"holds a test run with another configuration \(steps \(15 → 3\)\)"):
        folder.pin(Config(model="m", steps=3))
    (tmp_path / "out" / "config.json").write_text('{"model": "m"}')  # written before `steps` existed
    folder.pin(Config(model="m"))


def test_rows_resume_an_error_runs_again_and_a_torn_tail_is_dropped(tmp_path):
    folder = _folder(tmp_path)
    folder.append(_Row(task="a", status="done"))
    folder.append(_Row(task="b", status="error"))
    assert folder.done() == {"a"}
    folder.append(_Row(task="b", status="done"))  # run again: the last row counts
    assert folder.done() == {"a", "b"}
    with open(folder.rows_path, "a") as f:
        f.write('{"task": "c", "sta')  # killed mid-write
    assert set(folder.rows()) == {"a", "b"}
    folder.append(_Row(task="c", status="done"))  # the torn line is cut before the next row
    assert [json.loads(line)["task"] for line in folder.rows_path.read_text().splitlines()] == ["a", "b", "b", "c"]
    folder.rows_path.write_text('not json\n{"task": "a", "status": "done"}\n')
    with pytest.raises(UserError, match=r"episodes.jsonl, line 1: not a row of a test run"):
        folder.rows()
    folder.rows_path.write_text('{"task": "a", "status": "done", "stauts": "done"}\n')  # typed: a field it lacks
    with pytest.raises(UserError, match=r"line 1: not a row of a test run \(stauts: Extra inputs are not permitted\)"):
        folder.rows()


def test_shards_of_one_configuration_merge_and_of_two_do_not(tmp_path):
    items = [f"t{i}" for i in range(7)]
    assert sorted(shard(items, 0, 3) + shard(items, 1, 3) + shard(items, 2, 3)) == sorted(items)
    parts = []
    for i in range(2):
        part = _folder(tmp_path / f"s{i}")
        part.pin(Config(model="m"))
        for task in shard(items, i, 2):
            part.append(_Row(task=task, status="done"))
        parts.append(part.out)
    assert merge(parts, tmp_path / "all", _folder(tmp_path / "all")) == 7
    assert set(_folder(tmp_path / "all").rows()) == set(items)
    _folder(tmp_path / "s1").out.joinpath("config.json").write_text('{"model": "other"}')
    with pytest.raises(UserError, match="another configuration"):
        merge(parts, tmp_path / "mixed", _folder(tmp_path / "mixed"))
    assert not (tmp_path / "mixed").exists()  # nothing written


@pytest.mark.browser
@requires_chromium
def test_miniwob_shards_and_merges_like_apps_eval(tmp_path):
    args = ["miniwob", "--model", "fake:scripted", "--tasks", "click-button,enter-text", "--episodes", "2"]
    args += ["--no-traces", "--max-steps", "4"]
    for i in range(2):
        result = CliRunner().invoke(main, [*args, "--shard", f"{i}/2", "--out", str(tmp_path / f"s{i}")])
        assert result.exit_code == 0, result.output
    keys = [
        {(r["task"], r["seed"]) for r in map(json.loads, (tmp_path / f"s{i}" / "episodes.jsonl").open())}
        for i in range(2)
    ]
    assert not keys[0] & keys[1] and len(keys[0]) == len(keys[1]) == 2
    merged = CliRunner().invoke(
        main, ["miniwob", "merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out", str(tmp_path / "all")]
    )
    assert merged.exit_code == 0 and "4 episodes" in merged.output, merged.output
    rows = [json.loads(line) for line in (tmp_path / "all" / "episodes.jsonl").open()]
    assert {(r["task"], r["seed"]) for r in rows} == keys[0] | keys[1] and all(r["success"] for r in rows)
    assert "| click-button | 2 | 100% |" in (tmp_path / "all" / "report.md").read_text()
