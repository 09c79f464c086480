"""The real-app suite's machinery on a tiny app written for these tests
(tests/fixtures/apps/notes: stdlib WSGI + SQLite): app folders read strictly, reset by
restoring the state under a running server, the Playwright gold path, the ceiling run of
the whole agent with the gold-path model, resume, and the report."""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3
import urllib.request
from pathlib import Path

import pytest
from browser_support import requires_chromium

from webagent.apps.instance import AppInstance, named_port, restore, stable_port
from webagent.apps.spec import load_app, load_apps
from webagent.errors import DataError, UserError

NOTES = Path(__file__).parent / "fixtures" / "apps" / "notes"


@pytest.fixture
def apps_home(tmp_path, monkeypatch):
    monkeypatch.setenv("WEBAGENT_APPS", str(tmp_path / "apps"))
    return tmp_path / "apps"


def _copy_notes(tmp_path) -> Path:
    folder = tmp_path / "notes"
    shutil.copytree(NOTES, folder)
    return folder


def test_a_bad_task_names_file_record_and_field(tmp_path):
    folder = _copy_notes(tmp_path)
    tasks = json.loads((folder / "tasks.json").read_text())
    tasks[1]["gold"][0]["op"] = "hover"
    (folder / "tasks.json").write_text(json.dumps(tasks))
    with pytest.raises(DataError) as err:
        load_app(folder)
    assert "tasks.json, record notes-count, field 'gold.0.op'" in str(err.value)


def test_a_bad_app_toml_and_a_missing_file_are_one_line(tmp_path):
    folder = _copy_notes(tmp_path)
    (folder / "app.toml").write_text('name = "notes"\ntitle = "x"\nready = "/"\n')
    with pytest.raises(DataError, match=r"app.toml, field 'ready'"):
        load_app(folder)
    (folder / "app.py").unlink()
    with pytest.raises(UserError, match="app.py is missing"):
        load_app(folder)
    with pytest.raises(UserError, match="unknown app 'nope'"):
        load_apps(["nope"])


def test_restore_brings_a_database_back_under_an_open_connection(tmp_path):
    pristine, live = tmp_path / "pristine", tmp_path / "live"
    pristine.mkdir()
    with sqlite3.connect(pristine / "db") as con:
        con.execute("CREATE TABLE t (x)")
        con.execute("INSERT INTO t VALUES (1)")
    (pristine / "files").mkdir()
    (pristine / "files" / "a.txt").write_text("a")
    shutil.copytree(pristine, live)
    server_side = sqlite3.connect(live / "db")  # a server that keeps its connection open
    server_side.execute("INSERT INTO t VALUES (2)")
    server_side.commit()
    (live / "files" / "new.txt").write_text("added by a run")
    (live / "files" / "a.txt").write_text("changed")
    restore(pristine, live)
    assert server_side.execute("SELECT x FROM t").fetchall() == [(1,)]
    assert sorted(p.name for p in (live / "files").iterdir()) == ["a.txt"]
    assert (live / "files" / "a.txt").read_text() == "a"


def test_restore_from_a_pristine_state_that_is_gone_says_so_and_leaves_the_live_state(tmp_path):
    live = tmp_path / "live"
    live.mkdir()
    (live / "db").write_text("the running app's data")
    with pytest.raises(UserError, match=r"the pristine state .*gone is gone: another webagent process"):
        restore(tmp_path / "gone", live)
    assert (live / "db").read_text() == "the running app's data"


def test_a_server_that_does_not_come_up_names_the_app_and_its_log(tmp_path, apps_home):
    folder = _copy_notes(tmp_path)
    source = (
        (folder / "app.py")
        .read_text()
        .replace('elif command == "serve":', 'elif command == "serve":\n        raise SystemExit(3)')
    )
    (folder / "app.py").write_text(source)
    with pytest.raises(UserError) as err:
        AppInstance(load_app(folder)).start()
    message = str(err.value)
    assert message.startswith("app notes did not come up on 127.0.0.1:") and "exited (code 3)" in message
    assert "serve-" in message and message.endswith(".log")


@requires_chromium
async def test_gold_paths_reach_their_checks_and_a_second_run_fails_the_check(apps_home):
    from playwright.async_api import async_playwright

    from webagent.apps.gold import follow, launch_browser
    from webagent.apps.gold import verify as verify_task

    app = load_app(NOTES)
    with AppInstance(app) as instance:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            for task in app.tasks:
                verdict = await verify_task(instance, browser, task)
                assert verdict.ok, verdict.line()
                assert verdict.run.hosts == {"127.0.0.1"}
            # Done twice: a second note of that title fails the check.
            create = app.task("notes-create-pinned")
            instance.reset()
            for _ in range(2):
                context = await browser.new_context()
                again = await follow(context, instance.url(create.start), create)
                await context.close()
                assert again.ok
            assert instance.check(create.id) == (False, "2 notes titled 'Dentist on Friday'")
            # A wrong answer fails an answer task.
            assert instance.check("notes-count", "3")[0] is False
            await browser.close()


async def _ceiling(apps, task_ids, out, config, say=print) -> list[dict]:
    """``apps eval --ceiling``, serially (``webagent.evaluation``)."""
    from webagent.apps.runner import AppsEval
    from webagent.evaluation import Serial, evaluate

    return await evaluate(AppsEval(apps, task_ids, config, ceiling=True, say=say), out, Serial(), say=say)


@requires_chromium
async def test_ceiling_run_resumes_and_reports(tmp_path, apps_home):
    from webagent.agent.loop import AgentOptions
    from webagent.apps.report import write_report
    from webagent.apps.runner import AppsConfig

    app = load_app(NOTES)
    out = tmp_path / "ceiling"
    options = AgentOptions(max_steps=12, screenshots=False)
    config = AppsConfig(model="ceiling (gold path)", agent=options)
    said: list[str] = []
    rows = await _ceiling([app], ["notes-count"], out, config, say=said.append)
    assert [r.success for r in rows] == [True]
    assert rows[0].answer == "2" and rows[0].steps == 4
    rows = await _ceiling([app], [], out, config, say=said.append)
    assert "2 tasks, 1 already in " + str(out / "episodes.jsonl") in said
    # a line per step while a task runs, then the task's line
    steps = [line for line in said if line.startswith("notes-create-pinned step ")]
    assert len(steps) == 8 and steps[0].startswith("notes-create-pinned step 1: http://127.0.0.1:")
    assert said.index(steps[-1]) < next(i for i, line in enumerate(said) if "] notes-create-pinned: success" in line)
    assert {r.task: r.success for r in rows} == {"notes-count": True, "notes-create-pinned": True}
    create = next(r for r in rows if r.task == "notes-create-pinned")
    assert create.steps == 8 and create.answer.startswith("the app's database shows the task done")
    report = write_report(out).read_text()
    assert "2/2 tasks succeeded" in report and (out / "success.png").stat().st_size > 1000
    steps = (out / "steps.md").read_text()  # each task step by step, from its trace
    assert "## notes-count\n\nsuccess (site confirmed); 4 steps" in steps and "\n4. `/" in steps
    with pytest.raises(UserError, match="another configuration"):
        await _ceiling(
            [app], [], out, config.model_copy(update={"agent": AgentOptions(max_steps=3, screenshots=False)})
        )


@requires_chromium
async def test_without_stop_at_goal_the_run_goes_on_and_the_goal_step_is_recorded(tmp_path, apps_home):
    from webagent.agent.loop import AgentOptions
    from webagent.apps.report import write_report
    from webagent.apps.runner import AppsConfig

    app = load_app(NOTES)
    out = tmp_path / "on"
    options = AgentOptions(max_steps=12, screenshots=False)
    config = AppsConfig(model="ceiling (gold path)", agent=options, stop_at_goal=False)
    [row] = await _ceiling([app], ["notes-create-pinned"], out, config)
    # The check first passes after the 8th action (Save note); the run then goes on to the
    # perfect model's DONE instead of ending there, and the note still stands at the end.
    assert (row.goal_step, row.steps, row.went_on, row.success) == (8, 9, 0, True)
    assert row.status == "done" and not (row.answer or "").startswith("the app's database")
    assert "1 reached the goal, 0 acted after it, 0 no longer passed at the end" in write_report(out).read_text()


def test_the_cli_lists_apps_and_refuses_bad_input_in_one_line(tmp_path, apps_home):
    from click.testing import CliRunner

    from webagent.cli import main

    runner = CliRunner()
    listed = runner.invoke(main, ["apps", "list", "--tasks", "--app-dir", str(NOTES)])
    assert listed.exit_code == 0
    assert "notes        2 tasks  Notes (a test app" in listed.output and "notes-create-pinned" in listed.output
    bad = runner.invoke(main, ["apps", "eval", "--app", "nope", "--out", str(tmp_path / "o"), "--ceiling"])
    assert bad.exit_code == 2 and bad.output.strip().startswith("error: unknown app 'nope'")
    shard = runner.invoke(main, ["apps", "eval", "--shard", "3/2", "--out", str(tmp_path / "o"), "--ceiling"])
    assert shard.exit_code == 2 and "--shard 3/2" in shard.output
    # an unknown task is refused before any model is started or reached (nothing listens on port 9)
    task = ["apps", "eval", "--task", "nope", "--out", str(tmp_path / "o"), "--base-url", "http://127.0.0.1:9/v1"]
    unknown = runner.invoke(main, task + ["--model", "m"])
    assert unknown.exit_code == 2 and unknown.output.strip().startswith("error: unknown task 'nope'")


def test_merge_joins_shards_of_one_configuration_and_refuses_mixed_ones(tmp_path):
    from dataclasses import asdict

    from webagent.agent.options import AgentOptions
    from webagent.apps.episode import AppsRow
    from webagent.apps.runner import results
    from webagent.results_folder import merge

    config = json.dumps({"model": "m", "agent": asdict(AgentOptions()), "stop_at_goal": True}, indent=2)
    shards = []
    for i, tasks in enumerate([["a", "c"], ["b"]]):
        shard = tmp_path / f"s{i}"
        shard.mkdir()
        (shard / "config.json").write_text(config)
        rows = [
            AppsRow(app="notes", task=t, kinds=["read"], gold_steps=1, success=t != "b", status="done", steps=1,
                    cause=None, check="", answer=None, error=None, usage={}, trace_dir=None)
            for t in tasks
        ]  # fmt: skip
        (shard / "episodes.jsonl").write_text("".join(r.to_line() for r in rows))
        shards.append(shard)
    out = tmp_path / "all"
    assert merge(shards, out, results(out)) == 3
    assert {t: r.success for t, r in results(out).rows().items()} == {"a": True, "b": False, "c": True}
    # the configuration as read (a setting added since, skills, at its default)
    assert json.loads((out / "config.json").read_text()) == {**json.loads(config), "skills": False, "online": False}
    (shards[1] / "config.json").write_text(config.replace('"max_steps": 15', '"max_steps": 3'))
    with pytest.raises(UserError, match="one configuration"):
        merge(shards, tmp_path / "mixed", results(tmp_path / "mixed"))
    # A folder written before a setting existed merges with one that has its default.
    (shards[1] / "config.json").write_text(config.replace(',\n  "stop_at_goal": true', ""))
    assert merge(shards, tmp_path / "older", results(tmp_path / "older")) == 3
    (shards[0] / "episodes.jsonl").write_text("not json\n")
    with pytest.raises(UserError, match=r"s0/episodes.jsonl, line 1: not a row of an apps eval run"):
        results(shards[0]).rows()


def test_an_eval_killed_by_sigterm_leaves_no_app_serving(tmp_path, apps_home):
    """The app server dies with the process that started it (SIGTERM skips `with` cleanup)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = (
        "import sys, time\n"
        "from webagent.apps.instance import AppInstance\n"
        "from webagent.apps.spec import load_app\n"
        f"instance = AppInstance(load_app({str(NOTES)!r})).__enter__()\n"
        "print(instance.proc.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    server = int(parent.stdout.readline())
    os.kill(server, 0)  # serving
    parent.send_signal(signal.SIGTERM)
    parent.wait(10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(server, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(server, signal.SIGKILL)
    raise AssertionError("the app server outlived the eval that started it")


def test_an_app_gets_the_same_port_run_after_run_and_a_free_one_when_that_is_taken():
    # The port is in the page URL the model reads: a new one each run changed every prompt.
    # (Names of no real app: a suite running beside the tests may hold roundup's own port.)
    port = stable_port("port-test-app")
    assert port == named_port("port-test-app") == stable_port("port-test-app") != stable_port("port-test-other")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        other = stable_port("port-test-app")
        assert other != port
        with socket.socket() as s:
            s.bind(("127.0.0.1", other))  # the fallback is really free


def test_an_instance_does_not_start_on_a_port_another_run_is_starting_on(apps_home):
    """Two runs that found an app's usual port free at once both served there, and the second
    one's tasks ran on the first one's server. A port is claimed first; a claimed one is left."""
    from webagent.apps.instance import claim_port, free_port

    port = free_port()
    other_run = claim_port(port)  # another run, between choosing the port and binding it
    assert other_run is not None and claim_port(port) is None
    with AppInstance(load_app(NOTES), port=port) as instance:
        assert instance.port != port
        with urllib.request.urlopen(instance.url("/"), timeout=10) as reply:
            assert reply.status == 200
    other_run.close()
    again = claim_port(port)  # released with its holder
    assert again is not None
    again.close()


def test_a_resume_under_another_agent_option_is_refused_in_one_line_naming_it(tmp_path, apps_home):
    """The configuration pins the agent's options whole: `apps eval --no-form-check` into a folder
    made with the check on is refused before anything runs, naming the option; a folder of the
    layout before (the options at the top, no form check) is refused in one line too."""
    from click.testing import CliRunner

    from webagent.agent.options import AgentOptions
    from webagent.apps.runner import AppsConfig, results
    from webagent.cli import main

    out = tmp_path / "o"
    results(out).pin(AppsConfig(model="ceiling (gold path)", agent=AgentOptions(skills=False)))
    args = ["apps", "eval", "--app", "notes", "--app-dir", str(NOTES), "--ceiling", "--out", str(out)]
    refused = CliRunner().invoke(main, [*args, "--no-form-check"])
    assert refused.exit_code != 0 and not (out / "episodes.jsonl").exists()
    assert refused.output.strip().splitlines() == [
        f"error: {out} holds an apps eval run with another configuration (form_check (true → false)); use another --out"
    ]
    older = {"model": "ceiling (gold path)", "max_steps": 15, "lookup": "auto", "context_tokens": 8192}
    (out / "config.json").write_text(json.dumps(older))
    refused = CliRunner().invoke(main, args)
    assert refused.output.strip().splitlines() == [
        f"error: {out / 'config.json'}: written by an older version for an apps eval run (it has no agent); "
        "use another --out"
    ]
