"""An app learns from its demonstrations alone (issue 34, item 6), with no code change: the
notes app of tests/fixtures/apps/notes brings two demonstrations (``demos.json``); ``apps
learn`` records each through the teach browser driven by its gold path, cuts them into
skills and keeps them for the app's site; ``apps eval --skills`` offers them, and a model
that calls them finishes a task the app's check confirms; the ceiling (primitive actions
only) still finishes every task with the skills offered."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from browser_support import requires_chromium
from click.testing import CliRunner

from webagent.apps.learn import app_site, learn_app
from webagent.apps.spec import load_app
from webagent.cli import main
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.skills import store

pytestmark = [pytest.mark.browser, requires_chromium]
NOTES = Path(__file__).parent / "fixtures" / "apps" / "notes"


@pytest.fixture
def apps_home(tmp_path, monkeypatch):
    monkeypatch.setenv("WEBAGENT_APPS", str(tmp_path / "apps"))
    return tmp_path / "apps"


def _learn(tmp_path) -> str:
    result = CliRunner().invoke(
        main, ["apps", "learn", "--app", "notes", "--app-dir", str(NOTES), "--out", str(tmp_path / "demos")]
    )
    assert result.exit_code == 0, result.output
    return result.output


def test_apps_learn_records_the_demonstrations_and_keeps_their_skills(tmp_path, apps_home):
    output = _learn(tmp_path)
    assert "notes: 2 demonstrations, 2 skills learned, 2 kept" in output
    assert '[log_in] skill "Log in" (login, password)' in output
    assert '[save_note] skill "Save note" (title, colour)' in output
    for demo in ("demo-notes-login", "demo-notes-new-yellow"):
        recorded = (tmp_path / "demos" / "notes" / demo / "steps.jsonl").read_text() + (
            tmp_path / "demos" / "notes" / demo / "run.json"
        ).read_text()
        assert "ann-secret-7" not in recorded  # the task told the password: the recording scrubs it
    listed = CliRunner().invoke(main, ["skills", "list"])
    assert listed.output.count(" skill ") == 2


def test_a_demonstrations_setup_is_done_before_the_recording_starts_and_never_recorded(tmp_path, apps_home):
    import shutil

    folder = tmp_path / "notes"
    shutil.copytree(NOTES, folder)
    demos = json.loads((folder / "demos.json").read_text())
    demos[1]["setup"], demos[1]["gold"] = demos[1]["gold"][:3], demos[1]["gold"][3:]  # already logged in
    (folder / "demos.json").write_text(json.dumps(demos))
    result = CliRunner().invoke(
        main, ["apps", "learn", "--app", "notes", "--app-dir", str(folder), "--out", str(tmp_path / "demos")]
    )
    assert result.exit_code == 0, result.output
    recorded = tmp_path / "demos" / "notes" / "demo-notes-new-yellow"
    steps = [json.loads(line) for line in (recorded / "steps.jsonl").read_text().splitlines()]
    assert [s["action"]["operation"] for s in steps] == ["CLICK", "TYPE", "SELECT", "CLICK"]  # no log-in
    assert "ann-secret-7" not in (recorded / "steps.jsonl").read_text() + (recorded / "run.json").read_text()
    skills = {s.id: s for s in store.load(app_site(load_app(folder)))}
    assert [Path(p).name for p in skills["log_in"].sources] == ["demo-notes-login"]
    assert [Path(p).name for p in skills["save_note"].sources] == ["demo-notes-new-yellow"]


@pytest.mark.asyncio
async def test_a_model_that_calls_the_skills_finishes_a_task_the_app_confirms(tmp_path, apps_home):
    from webagent.agent.loop import AgentOptions
    from webagent.apps.runner import AppsConfig, AppsEval
    from webagent.evaluation import Serial, evaluate

    app = load_app(NOTES)
    await learn_app(app, tmp_path / "demos", say=print)

    def model(messages, params, purpose, context):
        if "Your notes" in context.page or "Buy milk" in context.page:
            return {"action": {"operation": "DONE", "value": "2"}}
        assert "log_in" in context.skills, context.skills  # the skill learned from the log-in demonstration
        secret = re.search(r"<secret:\w+>", context.task).group(0)  # the password as the task shows it
        return {"action": {"operation": "SKILL", "element_id": "log_in", "args": {"login": "ann", "password": secret}}}

    options = AgentOptions(max_steps=4, screenshots=False, skills=True)
    config = AppsConfig(model="fake", agent=options, skills=True)
    [row] = await evaluate(
        AppsEval([app], ["notes-count"], config), tmp_path / "run", Serial(fake_client(FunctionBackend(model)))
    )
    assert row.success and row.steps == 2, row
    steps = [
        json.loads(line)
        for line in (tmp_path / "run" / "traces" / "notes-count" / "steps.jsonl").read_text().splitlines()
    ]
    assert steps[0]["action"]["operation"] == "SKILL" and [s["op"] for s in steps[0]["skill_steps"]] == [
        "TYPE",
        "TYPE",
        "CLICK",
    ]
    assert "ann-secret-7" not in (tmp_path / "run" / "traces" / "notes-count" / "steps.jsonl").read_text()


@pytest.mark.asyncio
async def test_the_ceiling_finishes_every_task_with_the_skills_offered(tmp_path, apps_home):
    from webagent.agent.loop import AgentOptions
    from webagent.apps.runner import AppsConfig, AppsEval
    from webagent.evaluation import Serial, evaluate

    app = load_app(NOTES)
    await learn_app(app, tmp_path / "demos", say=print)
    options = AgentOptions(max_steps=12, screenshots=False, skills=True)
    config = AppsConfig(model="ceiling (gold path)", agent=options, skills=True)
    rows = await evaluate(AppsEval([app], [], config, ceiling=True), tmp_path / "ceiling", Serial())
    assert [r.success for r in rows] == [True, True]
    prompts = (tmp_path / "ceiling" / "traces" / "notes-create-pinned" / "steps.jsonl").read_text()
    assert 'skill \\"Log in\\"' in prompts  # offered beside the controls, and not needed


def test_apps_eval_with_skills_before_learning_says_what_to_do(tmp_path, apps_home):
    result = CliRunner().invoke(
        main,
        [
            "apps",
            "eval",
            "--app",
            "notes",
            "--app-dir",
            str(NOTES),
            "--skills",
            "--ceiling",
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code != 0
    assert "no skills yet: run `webagent apps learn --app notes` first" in result.output


def test_apps_eval_learn_offers_pass_two_the_skills_of_the_other_confirmed_runs(tmp_path, apps_home):
    out = tmp_path / "online"
    args = ["apps", "eval", "--app", "notes", "--app-dir", str(NOTES), "--ceiling", "--learn", "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "pass 1: 2/2 tasks (100%); pass 2 (skills learned online): 2/2 tasks (100%)" in result.output
    learned = json.loads((out / "pass1" / "online_skills.json").read_text())["skills"]
    by_source = {(s["id"], Path(s["sources"][0]).name) for s in learned}
    assert ("save_note", "notes-create-pinned") in by_source and ("log_in", "notes-count") in by_source

    def offered(task: str, folder: str = "pass2") -> set[str]:
        steps = (out / folder / "traces" / task / "steps.jsonl").read_text().splitlines()
        pages = [json.loads(line)["calls"][0]["messages"][-1]["content"] for line in steps]  # not the examples
        return {label for page in pages for label in re.findall(r"^\[([a-z_]+)\] skill ", page, re.MULTILINE)}

    # each task is offered what the other run taught, never what only its own run did
    assert offered("notes-count") == {"log_in", "save_note"}
    assert offered("notes-create-pinned") == {"log_in"}
    assert json.loads((out / "pass2" / "config.json").read_text())["online"] is True
    assert offered("notes-count", "pass1") == set()  # pass 1: no skills (no --skills)
