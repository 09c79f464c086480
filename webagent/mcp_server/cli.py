"""``webagent mcp``: serve the tools over stdio until the client closes the connection.

Start-up input that does not fit (no allowed site, a config or secrets file that does not
read, an endpoint that does not answer) is one line on stderr and a non-zero exit, before
the protocol starts; stdout carries nothing but the protocol."""

from __future__ import annotations

from pathlib import Path

import click

from webagent.agent.options import AgentOptions
from webagent.cli_common import endpoint_options, model_options, user_errors


@click.command("mcp")
@click.option(
    "--allow-site",
    "allowed_sites",
    multiple=True,
    metavar="HOST[:PORT]",
    help="A site the agent may drive (HOST: any port; repeatable). A tool call may narrow these, never widen them.",
)
@click.option(
    "--docs-dir",
    "docs_dirs",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="A folder whose documents ask_document may read (repeatable; default: none).",
)
@click.option(
    "--secrets-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help='A TOML file of secrets, NAME = "value" each (also WEBAGENT_SECRET_NAME variables). '
    "A call names them; their values never reach a tool's arguments, replies or the log.",
)
@click.option(
    "--runs-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where runs are kept and listed (default: $WEBAGENT_HOME/runs).",
)
@click.option(
    "--max-steps",
    type=click.IntRange(min=1),
    help=f"Most steps a run may take (default: webagent run's, {AgentOptions().max_steps}).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A TOML file with allowed_sites, docs_dirs, secrets_file, runs_dir, max_steps (flags add to it).",
)
@model_options
@user_errors
def mcp_command(allowed_sites, docs_dirs, secrets_file, runs_dir, max_steps, config_path, **kwargs) -> None:
    """Serve webagent's tools to an assistant over the Model Context Protocol (stdio): run a
    task, replay a workflow, view a page, list and show skills, ask a document, list runs."""
    import anyio

    from webagent.mcp_server.config import load_config, load_secrets
    from webagent.mcp_server.policy import Policy
    from webagent.mcp_server.server import build_server
    from webagent.mcp_server.tools import ModelClient, Tools

    config = load_config(
        config_path,
        allowed_sites=allowed_sites,
        docs_dirs=docs_dirs,
        secrets_file=secrets_file,
        runs_dir=runs_dir,
        max_steps=max_steps,
    )
    policy = Policy(config.allowed_sites, config.docs_dirs, load_secrets(config), config.max_steps)
    endpoint = endpoint_options(kwargs)
    tools = Tools(policy, ModelClient(endpoint), config.runs_folder())
    server = build_server(tools)

    async def serve() -> None:
        resolved = endpoint.resolved()
        if resolved.model or resolved.base_url:  # a fake or an endpoint: checked now (the embedded model starts on use)
            await tools.model.get()
        await server.run_stdio_async()

    anyio.run(serve)
