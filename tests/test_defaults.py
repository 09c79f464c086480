"""Defaults in one place (issue 35, item 3): the Python API, `run`, `replay`, `apps eval` and
`miniwob` start from ``AgentOptions``' own defaults unless a flag says otherwise, and a bad
value is refused by the options themselves."""

from __future__ import annotations

from dataclasses import fields

import click
import pytest

from webagent import Agent
from webagent.agent.options import AgentOptions, cli_fields
from webagent.cli import main

COMMANDS = [("run",), ("replay",), ("apps", "eval"), ("miniwob",)]


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
    return command


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) for p in COMMANDS])
def test_every_agent_command_starts_from_the_options_defaults(path):
    params = {p.name: p for p in _command(path).params}
    defaults = AgentOptions()
    for f in cli_fields():
        assert f.name in params, f"{' '.join(path)} has no option for {f.name}"
        assert params[f.name].default == getattr(defaults, f.name), f"{' '.join(path)}: {f.name}"


def test_the_form_check_is_on_by_default_everywhere():
    # the API's default used to be off while `webagent run`'s was on
    assert AgentOptions().form_check is True
    for path in COMMANDS:
        assert {p.name: p for p in _command(path).params}["form_check"].default is True


def test_the_api_starts_from_the_same_defaults_and_takes_max_steps():
    assert Agent("t", url="http://127.0.0.1:1/").agent_options() == AgentOptions()
    assert Agent("t", url="http://127.0.0.1:1/", max_steps=4).agent_options() == AgentOptions(max_steps=4)
    given = AgentOptions(lookup="always", form_check=False)
    assert Agent("t", url="http://127.0.0.1:1/", options=given).agent_options() is given


def test_a_flag_changes_only_its_own_option(tmp_path):
    from webagent.agent.cli_options import options_from

    kwargs = {f.name: getattr(AgentOptions(), f.name) for f in cli_fields()} | {"max_steps": 10, "other": 1}
    options = options_from(kwargs, skills=False)
    assert options == AgentOptions(max_steps=10, skills=False)
    assert kwargs == {"other": 1}  # the agent's options taken out, the rest left for the command


@pytest.mark.parametrize("name,value", [("lookup", "sometimes"), ("act_on", "page"), ("prompt", "short")])
def test_a_value_outside_its_choices_is_refused(name, value):
    with pytest.raises(ValueError, match=name):
        AgentOptions(**{name: value})


def test_the_cli_fields_are_options_fields():
    names = {f.name for f in fields(AgentOptions)}
    assert {f.name for f in cli_fields()} <= names
    assert {f.name for f in cli_fields()} >= {"max_steps", "lookup", "max_lookup", "context_tokens", "form_check"}
    # each lever of issue 47 measured alone
    levers = {"skill_states", "menu", "plan", "loop_breaker", "grounded_done", "reason"}
    assert levers <= {f.name for f in cli_fields()}
