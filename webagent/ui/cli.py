"""``webagent ui``: the local page (registered in ``webagent.cli``)."""

from __future__ import annotations

from pathlib import Path

import click

from webagent.cli_common import endpoint_options, headed_option, model_options, user_errors
from webagent.errors import UserError


@click.command("ui")
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Address to bind (keep it local: the page runs a browser)."
)
@click.option("--port", type=click.IntRange(min=0, max=65535), default=0, help="Port (default: a free one).")
@click.option(
    "--runs-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("runs"),
    show_default=True,
    help="Where runs are written and listed from (<kind>/<time>-<task>/, as `webagent run` writes them).",
)
@click.option(
    "--secret",
    "secrets",
    multiple=True,
    metavar="NAME=VALUE",
    help="A value runs may type but the model never sees (also WEBAGENT_SECRET_NAME); the page shows only its name.",
)
@headed_option
@model_options
@user_errors
def ui_command(host, port, runs_dir, secrets, headed, **kwargs) -> None:
    """A local web page to start and watch runs, look through past runs, keep skills, teach and
    replay. Prints a URL with a random token: every request needs it."""
    from webagent.agent.secrets import parse_secret_options
    from webagent.ui.app import UiServer
    from webagent.ui.jobs import UiSettings

    if host in ("0.0.0.0", "::", ""):
        raise UserError(f"--host {host!r} listens on every address: name the one address to serve the page on")
    settings = UiSettings(
        runs_dir=runs_dir, endpoint=endpoint_options(kwargs), secrets=parse_secret_options(secrets), headed=headed
    )
    server = UiServer(settings, host=host, port=port)
    click.echo(f"webagent ui: open {server.url}", err=False)
    click.echo("(the token in it is needed by every request; Ctrl-C stops the page and any run going on)", err=True)
    server.run()
