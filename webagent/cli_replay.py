"""``webagent replay`` and ``webagent workflows list|show|rm`` (registered in ``webagent.cli``)."""

from __future__ import annotations

import json
from datetime import datetime
from functools import partial

import click

from webagent.agent.cli_options import agent_options, options_from
from webagent.cli_common import (
    allow_domain_option,
    cdp_url_option,
    endpoint_options,
    headed_option,
    model_options,
    params_option,
    run_async,
    user_errors,
)


@click.command("replay")
@click.argument("source", metavar="TRACE_DIR|NAME")
@click.option("--url", help="Start here instead of the recorded start URL (the same site elsewhere).")
@click.option("--demo", is_flag=True, help="Serve the bundled demo shop and start there (for runs made with --demo).")
@params_option("A new value for one of the workflow's parameters (see `webagent workflows show`); repeatable.")
@click.option("--no-model", is_flag=True, help="Never ask the model: a step that cannot be replayed fails the replay.")
@allow_domain_option("the recorded run's, else the start host")
@click.option(
    "--trace-dir",
    type=click.Path(file_okay=False),
    help="Folder for the replay's trace (default: runs/replay/<time>-<name>).",
)
@headed_option
@cdp_url_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@agent_options
@model_options
@run_async
async def replay_command(source, params, as_json, **kwargs) -> None:
    """Replay a finished run (its trace folder, or a workflow saved with `run --save-as NAME`)
    in a fresh browser without the model; only steps whose page or element changed go to
    the model, and the repaired workflow is written for the next replay."""
    from webagent import replay
    from webagent.trace.params import parse_params

    options = options_from(kwargs)  # the repairs decide as `webagent run` does
    endpoint = endpoint_options(kwargs)
    result = await replay(
        source,
        parse_params(params),
        options=options,
        endpoint=endpoint,
        progress=partial(click.echo, err=True),
        **kwargs,  # the rest by replay's own names: url, demo, no_model, allow_domains, trace_dir, headed, cdp_url
    )
    if as_json:
        click.echo(json.dumps(result.to_json(), ensure_ascii=False))
    else:
        click.echo(
            f"status: {result.status} after {result.steps} steps: {result.replayed} replayed, "
            f"{result.repaired} repaired"
        )
        if result.answer:
            click.echo(f"answer: {result.answer}")
        if result.error:
            click.echo(f"error: {result.error}")
        for miss in result.misses:
            click.echo(f"  step {miss['step']} {'repaired' if miss['repaired'] else 'NOT repaired'}: {miss['why']}")
        if result.demo_order_placed is not None:
            click.echo(
                "demo check: the shop confirmed the order"
                if result.demo_order_placed
                else "demo check: NOT completed -- the shop has no confirmed order for this task"
            )
        if result.saved_as:
            click.echo(f"workflow {result.saved_as!r} updated with the repaired steps")
        click.echo(f"trace: {result.trace_dir}/steps.jsonl")
        click.echo(f"report: {result.trace_dir}/report.html")
        if result.status == "done":
            click.echo(f"workflow: {result.trace_dir}/workflow.json (replay it: webagent replay {result.trace_dir})")
        usage = result.usage
        click.echo(
            f"usage: {usage.get('calls', 0)} model calls, {usage.get('prompt_tokens', 0)} prompt + "
            f"{usage.get('completion_tokens', 0)} completion tokens; {result.wall_s:.1f} s"
        )
    if result.status == "error":
        raise SystemExit(1)


@click.group("workflows")
def workflows_group() -> None:
    """Saved workflows ($WEBAGENT_HOME/workflows): list, show, rm."""


@workflows_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@user_errors
def workflows_list(as_json) -> None:
    """The saved workflows: name, steps, parameters, task."""
    from webagent.replay import store

    rows = store.listing()
    if as_json:
        click.echo(json.dumps(rows, ensure_ascii=False))
        return
    if not rows:
        click.echo(f"no saved workflows in {store.root()} (save one with `webagent run --save-as NAME`)")
        return
    for row in rows:
        if "error" in row:
            click.echo(f"{row['name']:24} (unreadable: {row['error']})")
            continue
        when = datetime.fromtimestamp(row["updated"]).strftime("%Y-%m-%d %H:%M") if row.get("updated") else ""
        params = ", ".join(row["params"]) or "-"
        click.echo(f"{row['name']:24} {row['steps']:3} steps  params: {params:30} {when}  {row['task'][:60]}")


@workflows_group.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the workflow as JSON.")
@user_errors
def workflows_show(name, as_json) -> None:
    """A saved workflow: task, start URL, parameters and steps."""
    from webagent.replay import store

    workflow = store.load(name)
    if as_json:
        click.echo(json.dumps(workflow.to_json(), ensure_ascii=False, indent=1))
        return
    click.echo(f"task: {workflow.task}")
    click.echo(f"start: {workflow.start_url}")
    click.echo(f"folder: {store.folder(name)}")
    for pname, spec in workflow.params.items():
        default = "(password: give --param)" if spec.get("default") is None else repr(spec["default"])
        click.echo(f"param {pname} = {default}  [{spec.get('source')}]")
    for n, step in enumerate(workflow.steps, 1):
        click.echo(f"{n:3}. {step.describe()}  on {step.page.pattern}" + ("  (repaired)" if step.repaired else ""))


@workflows_group.command("rm")
@click.argument("names", nargs=-1, required=True)
@user_errors
def workflows_rm(names) -> None:
    """Delete saved workflows."""
    from webagent.replay import store

    for name in names:
        store.remove(name)
        click.echo(f"removed {name}")
