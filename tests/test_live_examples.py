"""The live agent's worked examples (prompts/web_live_examples.md) teach only what the agent
itself would show and accept: every answer is a well-formed reply naming an element on that
example's page whose kind takes the operation, and every history line reads like the
agent's own."""

from __future__ import annotations

import json
import re

import pytest

from webagent.prompts import load_prompt
from webagent.web.live_action import LiveAction, _example_turns

LINE = re.compile(r'^\[(\w+)\] ([a-z -]+?) "([^"]*)"(.*)$')
TAKES = {
    "CLICK": ("link", "button", "submit button", "checkbox", "radio", "read-only field"),
    "TYPE": ("text field", "password field", "search field", "text area"),
    "SELECT": ("select",),
}
HISTORY = re.compile(
    r'^\d+\. ((CLICK|TYPE|SELECT) \[\w+\]( "[^"]*")?( \+ Enter)?|FILL( \[\w+\]="[^"]*")+ then CLICK \[\w+\])'
    r" \[[a-z -]+\]  \S.* -> (ok|no visible change)"
)


def _blocks():
    turns = _example_turns()
    return [(turns[i]["content"], turns[i + 1]["content"]) for i in range(0, len(turns), 2)]


@pytest.mark.parametrize("asked,answer", _blocks())
def test_every_worked_answer_fits_its_page(asked, answer):
    page = asked.split("'''")[1]
    controls = {m.group(1): m for m in map(LINE.match, page.strip().splitlines()) if m}
    action = LiveAction.model_validate(json.loads(answer)["action"])
    if action.operation == "DONE":
        return
    if action.operation == "FILL":  # each field as its TYPE or SELECT, then the submit button
        for f in action.fields:
            line = controls.get(f.element_id)
            assert line is not None and line.group(2) in TAKES["TYPE"] + TAKES["SELECT"], f.element_id
            if line.group(2) == "select":
                assert f'"{f.value}"' in line.group(4).split("options:", 1)[1]
        assert action.element_id in controls and controls[action.element_id].group(2) == "submit button"
        return
    line = controls.get(action.element_id)
    assert line is not None, f"{action.describe()}: no line [{action.element_id}] on the page"
    assert line.group(2) in TAKES[action.operation], f"{action.describe()} on a {line.group(2)}"
    if action.operation == "SELECT":
        assert f'"{action.value}"' in line.group(4).split("options:", 1)[1]


@pytest.mark.parametrize("asked,answer", _blocks())
def test_every_worked_history_line_reads_like_the_agents(asked, answer):
    history = asked.split("Previous actions and their results:\n", 1)[1].split("\nCurrent page", 1)[0]
    for line in history.splitlines():
        assert line == "None" or HISTORY.match(line), line


def test_the_worked_login_types_the_placeholder_never_a_password():
    text = load_prompt("web_live_examples")
    assert '{"element_id": "12", "value": "<secret:password>"}' in text  # the placeholder, in a FILL
    assert "********" not in text or 'value="********"' in text


def test_a_worked_answer_is_given_with_done():
    answers = [json.loads(a)["action"] for _, a in _blocks()]
    assert any(a["operation"] == "DONE" and a.get("value") for a in answers)
