"""Demonstrations (an app folder's demos.json, APP_FORMAT.md): tasks of the tasks.json schema,
kept apart from the evaluation, that the agent learns skills from. Each builtin app has
enough of them, none is an evaluation task (not its id, not its gold path, not the values it
fills in), a bad demos.json is one error naming file, record and field, and every
demonstration's gold path runs through on a fresh instance (one instance per app)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from browser_support import requires_chromium

from webagent.apps.spec import App, load_app, load_apps
from webagent.errors import DataError

NOTES = Path(__file__).parent / "fixtures" / "apps" / "notes"
BUILTIN = [a for a in load_apps() if a.name in ("roundup", "oscar", "helpdesk")]


def _path(task) -> list[tuple[str, str, str, str]]:
    return [(s.op, s.role, s.name, s.value) for s in task.gold]


def _filled(app: App, task) -> set[tuple[str, str, str]]:
    """What ``task`` types or selects, a user's login or password aside (a demonstration may
    log in as any user)."""
    credentials = {u.login for u in app.config.users} | {u.password for u in app.config.users}
    return {(s.role, s.name, s.value) for s in task.gold if s.op in ("type", "select") and s.value not in credentials}


def _copy_notes(tmp_path) -> Path:
    folder = tmp_path / "notes"
    shutil.copytree(NOTES, folder)
    return folder


def test_the_builtin_apps_have_demonstrations():
    assert {a.name for a in BUILTIN} == {"roundup", "oscar", "helpdesk"}
    for app in BUILTIN:
        assert len(app.demos) >= 6, f"{app.name} has {len(app.demos)} demonstrations"


@pytest.mark.parametrize("app", BUILTIN, ids=[a.name for a in BUILTIN])
def test_no_demonstration_is_an_evaluation_task(app):
    ids = [d.id for d in app.demos]
    assert len(set(ids)) == len(ids)
    assert all(i.startswith("demo-") for i in ids), ids
    assert not set(ids) & {t.id for t in app.tasks}
    for demo in app.demos:
        for task in app.tasks:
            assert _path(demo) != _path(task), f"{demo.id} follows the gold path of {task.id}"
            same = _filled(app, demo) & _filled(app, task)
            assert not same, f"{demo.id} fills in what {task.id} does: {sorted(same)}"


def test_an_app_without_demos_json_has_none_and_the_notes_app_has_two(tmp_path):
    folder = _copy_notes(tmp_path)
    (folder / "demos.json").unlink()
    assert load_app(folder).demos == ()
    notes = load_app(NOTES)
    assert [d.id for d in notes.demos] == ["demo-notes-login", "demo-notes-new-yellow"]
    assert notes.demo("demo-notes-login").gold[0].value == "ann"


def test_a_bad_demonstration_names_file_record_and_field(tmp_path):
    folder = _copy_notes(tmp_path)
    demos = json.loads((folder / "demos.json").read_text())
    demos[1]["gold"][3]["op"] = "hover"
    (folder / "demos.json").write_text(json.dumps(demos))
    with pytest.raises(DataError) as err:
        load_app(folder)
    assert "demos.json, record demo-notes-new-yellow, field 'gold.3.op'" in str(err.value)


def test_a_demonstration_with_an_evaluation_tasks_id_is_refused(tmp_path):
    folder = _copy_notes(tmp_path)
    demos = json.loads((folder / "demos.json").read_text())
    demos[0]["id"] = "notes-count"
    (folder / "demos.json").write_text(json.dumps(demos))
    with pytest.raises(DataError) as err:
        load_app(folder)
    assert "demos.json, record notes-count, field 'id'" in str(err.value)
    assert "evaluation task" in str(err.value)


async def _follow_demos(app: App) -> list:
    from playwright.async_api import async_playwright

    from webagent.apps.gold import launch_browser
    from webagent.apps.gold import verify as verify_demo
    from webagent.apps.instance import AppInstance

    with AppInstance(app) as instance:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                return [await verify_demo(instance, browser, demo) for demo in app.demos]
            finally:
                await browser.close()


@requires_chromium
@pytest.mark.browser
@pytest.mark.parametrize("app", BUILTIN, ids=[a.name for a in BUILTIN])
async def test_every_demonstration_runs_through_on_a_fresh_instance(app):
    verdicts = await _follow_demos(app)
    assert [v.line() for v in verdicts if not v.ok] == []
    assert all(v.run.hosts == {"127.0.0.1"} for v in verdicts)


@requires_chromium
async def test_the_notes_apps_demonstrations_run_through(tmp_path, monkeypatch):
    monkeypatch.setenv("WEBAGENT_APPS", str(tmp_path / "apps"))
    verdicts = await _follow_demos(load_app(NOTES))
    assert [(v.task_id, v.ok, v.run.steps) for v in verdicts] == [
        ("demo-notes-login", True, 3),
        ("demo-notes-new-yellow", True, 7),
    ]
