"""The agent's command-line options, built from ``AgentOptions`` (``webagent.agent.options``):
one click option per field a command line sets, its default the field's, so every agent
command (``run``, ``replay``, ``apps eval``, ``miniwob``) starts from the same defaults."""

from __future__ import annotations

from typing import get_args, get_type_hints

import click

from webagent.agent.options import AgentOptions, cli_fields
from webagent.cli_common import cdp_url_option, headed_option


def agent_options(func):
    """One click option per ``AgentOptions`` field a command line sets, its default the
    field's (``webagent.agent.options``): every agent command starts from the same defaults."""
    hints = get_type_hints(AgentOptions)
    for f in reversed(cli_fields()):
        spec = f.metadata["cli"]
        kind = hints[f.name]
        if kind is bool:
            flag = f"{spec['flag']}/{spec['negative']}" if spec["negative"] else spec["flag"]
            func = click.option(flag, f.name, default=f.default, show_default=True, help=spec["help"])(func)
            continue
        choices = get_args(kind)
        kind_of = click.Choice(choices) if choices else click.IntRange(min=spec["min"]) if kind is int else str
        func = click.option(
            spec["flag"], f.name, type=kind_of, default=f.default, show_default=True, help=spec["help"]
        )(func)
    return func


def browser_options(func):
    """The agent's options (``agent_options``) and the browser's: --headed, --cdp-url."""
    return agent_options(headed_option(cdp_url_option(func)))


def options_from(kwargs: dict, **extra) -> AgentOptions:
    """The ``AgentOptions`` of a command's arguments (taken out of ``kwargs``), with ``extra`` settings."""
    return AgentOptions(**{f.name: kwargs.pop(f.name) for f in cli_fields()}, **extra)
