"""The ``run`` command (registered in ``webagent.cli``)."""

from __future__ import annotations

import json
from functools import partial

import click

from webagent.agent.cli_options import browser_options, options_from
from webagent.api import Agent, RunResult
from webagent.cli_common import allow_domain_option, endpoint_options, model_options, params_option, run_async
from webagent.demo_site import DEMO_TASK
from webagent.errors import UserError


@click.command("run")
@click.argument("task", required=False)
@click.option("--url", help="Where the run starts.")
@click.option(
    "--demo",
    is_flag=True,
    help="Serve the bundled demo shop on 127.0.0.1 and start there (TASK defaults to buying a book).",
)
@click.option("--dry-run", is_flag=True, help="Predict and print actions without executing them.")
@allow_domain_option()
@click.option(
    "--trace-dir",
    type=click.Path(file_okay=False),
    help="Folder for steps.jsonl, screenshots and report.html (default: runs/agent/<time>-<task>).",
)
@click.option(
    "--record",
    "record_dir",
    type=click.Path(file_okay=False),
    help="Also save the steps as Mind2Web records under DIR/live/ (for `mind2web eval --data DIR`).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--accept-dialogs",
    is_flag=True,
    help="Accept every confirm/prompt/beforeunload dialog at once (default: the model answers a confirm or "
    "prompt its own action raised; others are dismissed).",
)
@click.option(
    "--secret",
    "secrets",
    multiple=True,
    metavar="NAME=VALUE",
    help="A value the model may type but never sees: it reads and types <secret:NAME> (also WEBAGENT_SECRET_NAME; "
    "a password in the task is masked the same way). Repeatable.",
)
@click.option(
    "--save-as", metavar="NAME", help="Keep the run, when it ends done, as a workflow for `webagent replay NAME`."
)
@click.option(
    "--no-skills",
    is_flag=True,
    help="Do not offer the start site's skills (learned with `webagent skills learn`) beside the page's controls.",
)
@params_option('Name a typed value as a parameter of the saved workflow (e.g. name="Ada Lovelace"); repeatable.')
@browser_options
@model_options
@run_async
async def run_command(task, url, demo, dry_run, as_json, secrets, save_as, no_skills, params, **kwargs) -> None:
    """Do TASK in a browser starting at --url: observe, remember, act, until DONE."""
    from webagent.agent.secrets import parse_secret_options
    from webagent.trace.params import parse_params

    if demo:
        task = task or DEMO_TASK
    if not url and not demo:
        raise UserError("give --url URL (where the run starts), or --demo")
    if not task or not task.strip():
        raise UserError("the task is empty")
    options = options_from(kwargs, dry_run=dry_run, skills=not no_skills)
    endpoint = endpoint_options(kwargs)
    agent = Agent(
        task,
        url=url,
        demo=demo,
        options=options,
        endpoint=endpoint,
        save_as=save_as,
        params=parse_params(params),
        secrets=parse_secret_options(secrets),
        **kwargs,  # the rest by Agent's own names: allow_domains, trace_dir, record_dir, accept_dialogs, headed, cdp_url
    )
    result = await agent.run(progress=partial(click.echo, err=True))
    _print_result(result, agent, as_json)
    if save_as:
        click.echo(
            f"saved as workflow {result.saved_as!r} (replay it: webagent replay {result.saved_as})"
            if result.saved_as
            else result.save_error,
            err=as_json,
        )
    if result.status == "error":
        raise SystemExit(1)


def _print_result(result: RunResult, agent: Agent, as_json: bool) -> None:
    if as_json:
        out = {k: result.to_json()[k] for k in ("status", "answer", "steps", "trace_dir", "usage", "error")}
        if result.demo_order_placed is not None:
            out["demo_order_placed"] = result.demo_order_placed
        if agent.demo_orders:
            out["demo_orders"] = agent.demo_orders
        click.echo(json.dumps(out))
        return
    click.echo(f"status: {result.status} after {result.steps} steps ({result.failed_steps} failed)")
    if result.answer:
        click.echo(f"answer: {result.answer}")
    if result.error:
        click.echo(f"error: {result.error}")
    if result.demo_order_placed is not None:
        # The shop's own record, whatever the model claimed: a DONE is the model's word only.
        click.echo(
            "demo check: the shop confirmed the order"
            if result.demo_order_placed
            else f"demo check: NOT completed -- the shop has no confirmed order for this task ({agent.demo_orders})"
        )
    elif agent.demo_orders:
        click.echo(f"demo check: not a known demo task, so nothing to judge; {agent.demo_orders}")
    click.echo(f"trace: {result.trace_dir}/steps.jsonl")
    click.echo(f"report: {result.trace_dir}/report.html")
    if agent.recorder is not None:
        click.echo(f"records: {agent.recorder.path} ({agent.recorder.steps} steps)")
    usage = result.usage
    click.echo(
        f"usage: {usage.get('calls', 0)} model calls, {usage.get('cached_calls', 0)} cached, "
        f"{usage.get('prompt_tokens', 0)} prompt + {usage.get('completion_tokens', 0)} completion tokens, "
        f"{usage.get('failures', 0)} failed calls"
    )
