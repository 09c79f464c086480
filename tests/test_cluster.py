"""Episodes on Ray (``webagent.cluster``): a local Ray of two workers runs the jobs; a worker
killed mid-episode has its episode run again once, a driver killed mid-run resumes with none
lost and none repeated, and an address that cannot be reached is one line before any episode."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from webagent.cluster import Cluster, OnRay, connect
from webagent.errors import UserError
from webagent.evaluation import Evaluator, Item, Serial, evaluate
from webagent.results_folder import ResultsFolder, Row

pytest.importorskip("ray")


@pytest.fixture(scope="module")
def cluster():
    # The workers import this module's evaluator by name: the tests folder on their path.
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parent), before]))
    try:
        started = connect("local", 2)
    finally:
        os.environ.pop("PYTHONPATH") if before is None else os.environ.__setitem__("PYTHONPATH", before)
    yield started
    started.close()


class _Config(BaseModel):
    model: str = "m"


class _Row(Row):
    key: str
    status: str
    pid: int | None = None
    error: str | None = None
    trace_dir: str | None = None
    retried: str | None = None


def _item(key: str, mode: str = "ok") -> Item[str]:
    return Item(key, key, mode)


# Module-level: a Ray worker imports the evaluator by its module and name.
class _Episodes(Evaluator):
    config = _Config()
    traces = False

    def __init__(self, items: list[Item[str]], marker: str = "", traces: bool = False):
        self.items, self.marker, self.traces = items, marker, traces

    @staticmethod
    def results(out: Path) -> ResultsFolder:
        return ResultsFolder(out, _Config, _Row, key=lambda row: row.key)

    def plan(self) -> list[Item[str]]:
        return self.items

    async def run_item(self, worker, item: Item[str], trace: Path | None) -> _Row:
        first = not os.path.exists(f"{self.marker}-{item.key}")
        if item.of.endswith("-once") and first:
            Path(f"{self.marker}-{item.key}").write_text("once")
        if item.of == "die-once" and first:
            os._exit(1)  # the worker process dies mid-episode, as a killed or lost worker does
        if item.of == "hang" or (item.of == "hang-once" and first):
            time.sleep(600)  # a worker that hangs (not in the event loop: nothing else runs)
        if item.of == "raise":
            raise ValueError("the episode's own bug")
        if trace:
            trace.mkdir(parents=True, exist_ok=True)
            (trace / "steps.jsonl").write_text("{}\n")
            (trace / "run.json").write_text(json.dumps({"trace_dir": str(trace), "status": "done"}))
        return _Row(key=str(item.key), status="done", pid=os.getpid())

    def error_row(self, item: Item[str], trace: Path | None, why: str) -> _Row:
        return _Row(key=str(item.key), status="error", error=why)

    def outcome(self, row: _Row) -> str:
        return row.status

    def failed(self, row: _Row) -> bool:
        return row.status != "done"


class _Part(Row):
    doc: str
    part: int
    seen: list[int]  # the parts of its document already in the rows file when this one was emitted


class _Documents(Evaluator):
    """Several rows per item: a document's parts, each a row as it finishes; resumed by part."""

    config = _Config()
    traces = False
    noun = "documents"

    def __init__(self, parts: dict[str, int], out: Path):
        self.parts, self.out = parts, out

    @staticmethod
    def results(out: Path) -> ResultsFolder:
        return ResultsFolder(out, _Config, _Part, key=lambda row: (row.doc, row.part), finished=lambda row: True)

    def plan(self) -> list[Item[list[int]]]:
        return [Item(doc, doc, list(range(n))) for doc, n in self.parts.items()]

    def pending(self, items, done):
        left = [Item(i.key, i.label, [p for p in i.of if (i.key, p) not in done]) for i in items]
        return [item for item in left if item.of]

    async def run_rows(self, worker, item: Item[list[int]], trace: Path | None, emit) -> None:
        for part in item.of:
            rows = self.out / "episodes.jsonl"
            lines = rows.read_text().splitlines() if rows.is_file() else []
            emit(
                _Part(
                    doc=str(item.key),
                    part=part,
                    seen=[r["part"] for r in map(json.loads, lines) if r["doc"] == item.key],
                )
            )
            await asyncio.sleep(0)

    def item_outcome(self, rows: list[_Part]) -> str:
        return f"{len(rows)} parts"

    def failed(self, row: _Part) -> bool:
        return False


def test_an_item_of_several_rows_streams_them_resumes_by_row_and_runs_alike_on_ray(cluster, tmp_path):
    """Serially each row is written as it comes (the next part sees it in the file); a resume runs
    only the rows not in the folder; on Ray the same rows come back, each once."""
    serial, lines = tmp_path / "serial", []
    _Documents.results(serial).append(_Part(doc="d1", part=0, seen=[]))  # done before: not run again
    asyncio.run(evaluate(_Documents({"d1": 3, "d2": 2}, serial), serial, Serial(), say=lines.append))
    rows = [json.loads(line) for line in (serial / "episodes.jsonl").read_text().splitlines()]
    assert [(r["doc"], r["part"]) for r in rows] == [("d1", 0), ("d1", 1), ("d1", 2), ("d2", 0), ("d2", 1)]
    assert [r["seen"] for r in rows[1:]] == [[0], [0, 1], [], [0]]  # each row on disk before the next part ran
    assert len(lines) == 2 and lines[0].startswith("[1/2] d1: 2 parts;") and lines[1].startswith("[2/2] d2: 2 parts;")
    on_ray = tmp_path / "ray"
    asyncio.run(evaluate(_Documents({"d1": 3, "d2": 2}, tmp_path / "elsewhere"), on_ray, OnRay(cluster), say=None))
    keys = [(r["doc"], r["part"]) for r in map(json.loads, (on_ray / "episodes.jsonl").read_text().splitlines())]
    assert sorted(keys) == [("d1", 0), ("d1", 1), ("d1", 2), ("d2", 0), ("d2", 1)]


def _run(on: OnRay, out: Path, episodes: _Episodes, lines: list[str]) -> ResultsFolder:
    asyncio.run(evaluate(episodes, out, on, say=lines.append))
    return episodes.results(out)


def _keys(path: Path) -> list[str]:
    return [json.loads(line)["key"] for line in path.read_text().splitlines()]


def test_a_worker_killed_mid_episode_runs_it_again_once_and_every_episode_is_in_the_results_once(cluster, tmp_path):
    items = [_item(k, "die-once" if k == "e3" else "ok") for k in ("e1", "e2", "e3", "e4", "e5")]
    lines: list[str] = []
    folder = _run(OnRay(cluster), tmp_path / "out", _Episodes(items, str(tmp_path / "killed")), lines)
    keys = _keys(folder.rows_path)
    assert sorted(keys) == ["e1", "e2", "e3", "e4", "e5"]  # each exactly once
    rows = folder.rows()
    assert rows["e3"].status == "done" and rows["e3"].retried == "run again after its worker was lost"
    assert not any("retried" in rows[k].model_fields_set for k in ("e1", "e2", "e4", "e5"))
    assert any("e3: its worker was lost (WorkerCrashedError" in line for line in lines)
    assert lines[-1].startswith("[5/5] ") and "0 failed so far" in lines[-1]


def test_a_hung_worker_is_ended_and_run_again_then_recorded_as_failed_and_the_run_goes_on(cluster, tmp_path):
    """No row within the per-episode limit: the worker is treated as lost (ended, the episode run
    again once); hung twice, the episode is an error row with the reason, and the run completes."""
    items = [_item("h1", "hang-once"), _item("h2", "hang"), _item("ok")]
    lines: list[str] = []
    t0 = time.perf_counter()
    folder = _run(OnRay(cluster, limit_s=45), tmp_path / "out", _Episodes(items, str(tmp_path / "hung")), lines)
    assert time.perf_counter() - t0 < 300  # not the 600 s a hung worker sleeps
    rows = folder.rows()
    assert sorted(_keys(folder.rows_path)) == ["h1", "h2", "ok"]
    assert rows["h1"].status == "done" and rows["h1"].retried == "run again after its worker was lost"
    assert rows["h2"].status == "error"
    assert rows["h2"].error == "worker lost twice (no row after 45 s: its worker hung)"
    assert rows["ok"].status == "done" and "retried" not in rows["ok"].model_fields_set
    assert "h1: its worker was lost (no row after 45 s: its worker hung); running it again" in lines
    assert lines[-1].startswith("[3/3] ") and "1 failed so far" in lines[-1]
    assert folder.done() == {"h1", "ok"}  # the error row runs again on resume


def test_an_episode_that_raises_is_an_error_row_a_resume_runs_again(cluster, tmp_path):
    lines: list[str] = []
    folder = _run(OnRay(cluster), tmp_path / "out", _Episodes([_item("bad", "raise")]), lines)
    row = folder.rows()["bad"]
    assert row.status == "error" and row.error == "ValueError: the episode's own bug"
    assert folder.done() == set()  # not finished: a resume runs it again
    assert "1 failed so far" in lines[-1]


def test_a_trace_from_another_node_comes_back_where_a_serial_run_writes_it(cluster, tmp_path):
    trace = tmp_path / "out" / "traces" / "t1"
    elsewhere = Cluster(cluster.address, cluster.workers, node="another-node")  # every worker is "remote"
    folder = _run(OnRay(elsewhere), tmp_path / "out", _Episodes([_item("t1")], traces=True), [])
    assert (trace / "steps.jsonl").read_text() == "{}\n"
    assert json.loads((trace / "run.json").read_text())["trace_dir"] == str(trace)  # not the worker's temporary folder
    row = folder.rows()["t1"]
    assert row.trace_dir == str(trace)
    assert json.loads(folder.rows_path.read_text()) == {
        "key": "t1",
        "status": "done",
        "pid": row.pid,
        "trace_dir": str(trace),
    }


def test_an_address_that_cannot_be_reached_is_one_line_before_anything_starts():
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.perf_counter()
    with pytest.raises(UserError, match=rf"cannot reach a Ray cluster at 127.0.0.1:{port}: "):
        connect(f"127.0.0.1:{port}")
    assert time.perf_counter() - t0 < 10
    with pytest.raises(UserError, match="expected HOST:PORT"):
        connect("nowhere")


def test_the_cli_refuses_a_bad_address_with_one_line_and_no_results(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "webagent.cli", "miniwob", "--model", "fake:scripted", "--tasks", "click-button",
         "--episodes", "1", "--ray", "127.0.0.1:1", "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == ["error: cannot reach a Ray cluster at 127.0.0.1:1: Connection refused"]
    assert not (out / "episodes.jsonl").exists()


@pytest.mark.browser
def test_a_driver_killed_mid_run_resumes_with_none_lost_and_none_repeated(tmp_path):
    """The real CLI (MiniWoB++ with the scripted model, two workers): killed once two rows are
    in, then run again to the end: every episode's row, each once."""
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "webagent.cli", "miniwob", "--model", "fake:scripted", "--tasks",
           "click-button,enter-text", "--episodes", "3", "--no-traces", "--ray", "--workers", "2", "--out", str(out)]  # fmt: skip
    driver = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    rows = out / "episodes.jsonl"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and (not rows.is_file() or len(rows.read_text().splitlines()) < 2):
        time.sleep(0.2)
    os.kill(driver.pid, signal.SIGKILL)  # the driver alone, as a crash would
    driver.wait()
    before = len(rows.read_text().splitlines())
    assert 2 <= before < 6
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"6 episodes, {before} already in {rows}" in done.stderr
    keys = [(r["task"], r["seed"]) for r in map(json.loads, rows.read_text().splitlines())]
    assert sorted(keys) == sorted(
        (t, s) for t in ("click-button", "enter-text") for s in range(3)
    )  # none lost, none twice


def _same(a: list[dict], b: list[dict], key, fields: tuple[str, ...]) -> None:
    """The two runs' rows, keyed, agree on ``fields`` (what the method answered and how it scored)."""
    left, right = {key(r): r for r in a}, {key(r): r for r in b}
    assert set(left) == set(right) and left
    assert {k: [left[k].get(f) for f in fields] for k in left} == {k: [right[k].get(f) for f in fields] for k in right}


async def test_qa_eval_on_ray_answers_as_the_serial_run(cluster, tmp_path):
    """Each document's questions in a worker (the shipped fake model, made there): the same
    answers and scores as in-process, and the workers' model use summed on the driver."""
    from webagent.docqa.data import load
    from webagent.docqa.methods import parse_methods
    from webagent.docqa.options import QAOptions
    from webagent.docqa.runner import make_config, results, run_eval
    from webagent.llm.endpoint import EndpointOptions, open_client

    fixture = Path(__file__).parent / "fixtures" / "docqa" / "narrativeqa"
    docs = load("narrativeqa", str(fixture)).documents[:1]  # one document: one worker
    variants = parse_methods("readagent-p@2,bm25@1")
    endpoint = EndpointOptions(model="fake:heuristic", cache=False)
    rows = {}
    for name, on in (("serial", None), ("ray", cluster)):
        async with open_client(endpoint) as client:
            config = make_config("narrativeqa", "x", variants, client.model_name, QAOptions())
            await run_eval(
                client,
                docs,
                variants,
                tmp_path / name,
                config,
                cluster=on,
                endpoint=endpoint,
            )
        rows[name] = [r.model_dump() for r in results(tmp_path / name).rows().values()]
    _same(
        rows["serial"], rows["ray"], lambda r: (r["method"], r["qid"]), ("answer", "rouge1", "rating", "context_words")
    )
    assert cluster.usage.total.calls > 0  # the workers' calls, counted on the driver


async def test_mind2web_on_ray_predicts_as_the_serial_run(cluster, tmp_path):
    from mind2web.data import load_tasks
    from mind2web.methods import Variant
    from mind2web.rows import STEPS_FILE, read_rows
    from mind2web.runner import EvalConfig, run_eval
    from webagent.llm.endpoint import EndpointOptions, open_client

    fixture = Path(__file__).parent / "fixtures" / "mind2web"
    tasks = load_tasks(fixture, split="test_website")
    variants = [Variant("bm25", 1), Variant("readagent-p", 1)]
    endpoint = EndpointOptions(model="fake:heuristic", cache=False)
    rows = {}
    for name, on in (("serial", None), ("ray", cluster)):
        async with open_client(endpoint) as client:
            config = EvalConfig.for_client(client, data=str(fixture), split="test_website", depth="auto",
                                           budget_words=300, context_tokens=8192, previous_k=5, act_on="looked-up",
                                           typed_actions=False)  # fmt: skip
            info = await run_eval(client, tasks, variants, tmp_path / name, config, cluster=on, endpoint=endpoint)
            assert info["ran"] == info["planned"] > 0
        rows[name] = [r.model_dump() for r in read_rows(tmp_path / name / STEPS_FILE)]
    _same(rows["serial"], rows["ray"], lambda r: (r["variant"], r["annotation_id"], r["action_uid"]),
          ("element_id", "op", "value", "step_success", "context_words"))  # fmt: skip
