"""bench/rivals/demos_text.py: an app's demonstrations as text for the peers' prompts (issue 34,
item 7). It holds every demonstration's task and steps, nothing of the evaluation's tasks, no
password typed in a step, and it stays small (the peers run on a 1.5B model, 8k context)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from webagent.apps.spec import GoldStep, load_app, load_apps

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("demos_text", ROOT / "bench" / "rivals" / "demos_text.py")
assert _spec is not None and _spec.loader is not None
demos_text = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(demos_text)

# characters / 4; measured: helpdesk ~1,016, oscar ~1,051, roundup ~891 (Qwen2.5 tokenizer: 1,051, 1,158, 943)
TOKEN_BUDGET = 1500
APPS = [a for a in load_apps() if a.folder.parent.name == "builtin"]


@pytest.mark.parametrize("app", APPS, ids=lambda a: a.name)
def test_every_demo_task_and_step_is_in_the_text(app):
    text = demos_text.demos_text(app.name)
    assert app.demos, f"{app.name} has no demonstrations"
    passwords = {u.password for u in app.config.users}
    lines = text.splitlines()
    at = 0
    for demo in app.demos:
        head = f"Task (starts at {demo.start}): {demo.task}"
        at = lines.index(head, at) + 1  # in order
        for i, step in enumerate(demo.gold, 1):
            assert lines[at] == f"{i}. {demos_text.step_line(step, passwords)}"
            assert step.name in lines[at]
            if step.op in ("type", "select") and step.value not in passwords and "password" not in step.name.lower():
                assert f'"{step.value}"' in lines[at]
            at += 1


@pytest.mark.parametrize("app", APPS, ids=lambda a: a.name)
def test_nothing_of_the_evaluation_tasks(app):
    text = demos_text.demos_text(app.name)
    for task in app.tasks:
        assert task.task not in text, task.id
        assert task.id not in text


@pytest.mark.parametrize("app", APPS, ids=lambda a: a.name)
def test_under_the_token_budget(app):
    text = demos_text.demos_text(app.name)
    assert 0 < demos_text.tokens(text) < TOKEN_BUDGET


@pytest.mark.parametrize("app", APPS, ids=lambda a: a.name)
def test_no_step_types_a_password(app):
    text = demos_text.demos_text(app.name)
    steps = "\n".join(x for x in text.splitlines() if not x.startswith("Task ("))
    for user in app.config.users:
        assert user.password not in steps
    assert 'type the password into textbox "' in steps


def test_step_lines():
    line = demos_text.step_line
    assert (
        line(GoldStep(op="type", role="textbox", name="Username", value="erin"))
        == 'type "erin" into textbox "Username"'
    )
    assert (
        line(GoldStep(op="type", role="textbox", name="Password", value="x"))
        == 'type the password into textbox "Password"'
    )
    assert (
        line(GoldStep(op="type", role="textbox", name="PIN", value="s3"), {"s3"})
        == 'type the password into textbox "PIN"'
    )
    assert line(GoldStep(op="click", role="button", name="Search", nth=1)) == 'click the 2nd button "Search"'
    assert line(GoldStep(op="click", role="link", name="Go", nth=0)) == 'click link "Go"'
    assert (
        line(GoldStep(op="select", role="combobox", name="Priority", value="wish"))
        == 'select "wish" in combobox "Priority"'
    )
    assert line(GoldStep(op="uncheck", role="checkbox", name="Public")) == 'uncheck checkbox "Public"'
    assert line(GoldStep(op="dialog", value="accept")) == "accept the dialog"
    assert line(GoldStep(op="wait", text="Saved")) == 'wait for the text "Saved"'
    assert line(GoldStep(op="done", value="alice")) == 'answer "alice"'
    assert line(GoldStep(op="done")) == "done"


def test_an_added_app_renders_and_one_without_demos_is_empty():
    notes = load_app(ROOT / "tests" / "fixtures" / "apps" / "notes")
    text = demos_text.render(notes)
    assert text.startswith(demos_text.HEADER) if notes.demos else text == ""
    for demo in notes.demos:
        assert demo.task in text
