"""The agent's command-line options, built from ``AgentOptions`` (``webagent.agent.options``):
one click option per field a command line sets, its default the field's, so every agent
command (``run``, ``replay``, ``apps eval``, ``miniwob``) starts from the same defaults."""

from __future__ import annotations

from typing import get_args, get_type_hints

import click

from webagent.agent.options import AgentOptions, cli_fields


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


headed_option = click.option("--headed", is_flag=True, help="Show the browser window.")
cdp_url_option = click.option(
    "--cdp-url", help="Attach to a running Chromium (ws://... or http://host:port) instead of launching one."
)


def browser_options(func):
    """The agent's options (``agent_options``) and the browser's: --headed, --cdp-url."""
    return agent_options(headed_option(cdp_url_option(func)))


def allow_domain_option(default: str = "only the start URL's host and port; none when it is a file"):
    """``--allow-domain`` (repeatable), ``default`` saying where navigation may go without one."""
    return click.option(
        "--allow-domain",
        "allow_domains",
        multiple=True,
        help=f"Another site top-level navigation may go to: HOST (any port) or HOST:PORT (default: {default}).",
    )


def params_option(text: str):
    """``--param KEY=VALUE`` (repeatable), ``text`` saying what a workflow parameter is to the command."""
    return click.option("--param", "params", multiple=True, metavar="KEY=VALUE", help=text)


def options_from(kwargs: dict, **extra) -> AgentOptions:
    """The ``AgentOptions`` of a command's arguments (taken out of ``kwargs``), with ``extra`` settings."""
    return AgentOptions(**{f.name: kwargs.pop(f.name) for f in cli_fields()}, **extra)
