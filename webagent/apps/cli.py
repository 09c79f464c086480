"""``webagent apps``: list the suite's apps and tasks, serve one for a person or for
``webagent run``, evaluate the agent on the tasks, merge shards, write the report."""

from __future__ import annotations

import signal
from pathlib import Path

import click

from webagent.agent.cli_options import browser_options, options_from
from webagent.cli_common import (
    cluster_options,
    endpoint_options,
    merge_arguments,
    model_options,
    open_cluster,
    parse_shard,
    run_async,
    status,
    user_errors,
)
from webagent.errors import UserError

app_dir_option = click.option(
    "--app-dir",
    "app_dirs",
    multiple=True,
    type=click.Path(file_okay=False),
    help="Another app folder (see webagent/apps/APP_FORMAT.md); repeatable.",
)


@click.group("apps")
def apps_group() -> None:
    """Real web applications (Roundup, django-oscar, django-helpdesk) installed offline, with
    tasks checked in each app's own database."""


@apps_group.command("list")
@click.option("--tasks", "show_tasks", is_flag=True, help="Also list each app's tasks.")
@app_dir_option
@user_errors
def list_command(show_tasks, app_dirs) -> None:
    """The apps and how many tasks each has."""
    from webagent.apps.install import app_home
    from webagent.apps.spec import load_apps

    for app in load_apps(extra=app_dirs):
        installed = "installed" if any(app_home(app).glob("pristine-*")) else "not installed yet"
        click.echo(f"{app.name:10} {len(app.tasks):3} tasks  {app.config.title} ({installed})")
        if show_tasks:
            for t in app.tasks:
                click.echo(f"    {t.id:40} [{', '.join(t.kinds)}] {len(t.gold)} steps: {t.task}")


@apps_group.command("install")
@click.argument("apps", nargs=-1)
@app_dir_option
@user_errors
def install_command(apps, app_dirs) -> None:
    """Install and seed APPS (default: all) now, instead of on first use."""
    from webagent.apps.install import install
    from webagent.apps.spec import load_apps

    for spec in load_apps(list(apps), extra=app_dirs):
        click.echo(f"{spec.name}: ready ({install(spec, status)})")


@apps_group.command("start")
@click.argument("app")
@click.option("--port", type=click.IntRange(1, 65535), help="Port on 127.0.0.1 (default: a free one).")
@app_dir_option
@user_errors
def start_command(app, port, app_dirs) -> None:
    """Install APP if needed and serve a fresh instance until Ctrl-C."""
    from webagent.apps.instance import AppInstance
    from webagent.apps.spec import load_apps

    (spec,) = load_apps([app], extra=app_dirs)
    with AppInstance(spec, say=status, port=port) as instance:
        click.echo(f"{spec.name} is serving at {instance.base_url}/ (log: {instance.log})")
        for user in spec.config.users:
            click.echo(f"  user {user.login!r} password {user.password!r}" + (f" ({user.role})" if user.role else ""))
        click.echo(
            f"Try: webagent run --url {instance.url(spec.tasks[0].start) if spec.tasks else instance.base_url} "
            f'"{spec.tasks[0].task if spec.tasks else "your task"}"'
        )
        click.echo("Ctrl-C stops it (its state is thrown away).")
        try:
            signal.sigwait({signal.SIGINT, signal.SIGTERM})
        except KeyboardInterrupt:
            pass


@apps_group.command("eval")
@click.option("--app", "app_names", multiple=True, help="An app to run (repeatable; default: all).")
@click.option("--task", "task_ids", multiple=True, help="A task id to run (repeatable; default: all of the apps').")
@click.option("--out", type=click.Path(file_okay=False), required=True, help="Results folder (resumed if it exists).")
@click.option("--ceiling", is_flag=True, help="Drive the agent with the gold path as its model (a perfect model).")
@click.option("--shard", help="i/n: run every n-th task from the i-th (0-based); join shards with `apps merge`.")
@click.option(
    "--stop-at-goal/--no-stop-at-goal",
    default=True,
    show_default=True,
    help="End a run as soon as the app's check passes after an action. --no-stop-at-goal lets the model "
    "go on until it answers DONE (or the step limit): the step the goal was first reached is recorded, "
    "and the task counts only if the check still passes at the end.",
)
@click.option(
    "--skills",
    is_flag=True,
    help="Offer the apps' skills learned from their demonstrations (run `webagent apps learn` first).",
)
@click.option(
    "--learn",
    is_flag=True,
    help="Two passes: OUT/pass1, then OUT/pass2 offered the skills learned from the pass-1 runs the apps' "
    "checks confirmed (never a task's own run).",
)
@app_dir_option
@browser_options
@cluster_options
@model_options
@run_async
async def eval_command(
    app_names,
    task_ids,
    out,
    ceiling,
    shard,
    stop_at_goal,
    skills,
    learn,
    app_dirs,
    headed,
    cdp_url,
    ray_address,
    workers,
    **kwargs,
) -> None:
    """Run the agent on the suite's tasks; write episodes.jsonl, traces and the report."""
    from webagent.apps.episode import AppsRow
    from webagent.apps.online import learn_from_pass, summary_line
    from webagent.apps.report import write_report
    from webagent.apps.runner import AppsConfig, AppsEval, select_tasks
    from webagent.apps.spec import load_apps
    from webagent.evaluation import backend, evaluate
    from webagent.llm.endpoint import open_client

    if headed or cdp_url:
        raise UserError("apps eval starts its own headless browser per task (--headed/--cdp-url are for `run`)")
    options = options_from(kwargs, skills=skills or learn)  # an evaluation offers skills only when asked
    endpoint = endpoint_options(kwargs)
    apps = load_apps(list(app_names), extra=app_dirs)
    out = Path(out)
    shard_of = parse_shard(shard)
    select_tasks(apps, list(task_ids), shard_of)  # an unknown task fails here, before a model is started

    async def passes(client, model: str) -> None:
        config = AppsConfig(model=model, agent=options, stop_at_goal=stop_at_goal, skills=skills)
        on = backend(client, cluster, endpoint)

        async def run(folder: Path, config: AppsConfig, online=None) -> list[AppsRow]:
            tasks = AppsEval(apps, list(task_ids), config, ceiling=ceiling, shard=shard_of, online=online, say=status)
            return await evaluate(tasks, folder, on, say=status)

        if not learn:
            await run(out, config)
            click.echo(f"report: {write_report(out)}")
            return
        first = await run(out / "pass1", config)
        click.echo(f"report: {write_report(out / 'pass1')}")
        online = learn_from_pass(out / "pass1", first)
        status(f"learned {sum(map(len, online.values()))} skills from the confirmed runs of pass 1")
        second = await run(out / "pass2", config.model_copy(update={"online": True}), online)
        click.echo(f"report: {write_report(out / 'pass2')}")
        click.echo(summary_line("pass 1", first) + "; " + summary_line("pass 2 (skills learned online)", second))

    with open_cluster(ray_address, workers) as cluster:
        if ceiling:
            await passes(None, "ceiling (gold path)")
        else:
            async with open_client(endpoint) as client:
                await passes(client, client.model_name)
                click.echo((client.usage if cluster is None else cluster.usage).summary_line())
    if ray_address is not None:  # the workers' live states on this machine, left when Ray ended them
        from webagent.apps.install import app_home
        from webagent.apps.instance import sweep_orphans

        for app in apps:
            sweep_orphans(app_home(app) / "live")


@apps_group.command("learn")
@click.option("--app", "app_names", multiple=True, required=True, help="An app to learn (repeatable).")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("runs/apps/demos"),
    show_default=True,
    help="Where the demonstrations' recordings go (one trace folder each).",
)
@app_dir_option
@run_async
async def learn_command(app_names, out, app_dirs) -> None:
    """Learn an app's skills from its demonstrations alone (demos.json): each is done by its gold
    path in the teach browser on a fresh instance, recorded, and cut into skills."""
    from webagent.apps.learn import app_site, learn_app, learned_lines
    from webagent.apps.spec import load_apps

    for app in load_apps(list(app_names), extra=app_dirs):
        learned = await learn_app(app, out / app.name, say=status)
        for line in learned_lines(app.name, app_site(app), learned):
            click.echo(line)


@apps_group.command("merge")
@merge_arguments
@user_errors
def merge_command(shards, out) -> None:
    """Join shard folders of one `apps eval` into OUT and write its report."""
    from webagent.apps.report import write_report
    from webagent.apps.runner import results
    from webagent.results_folder import merge

    n = merge([Path(s) for s in shards], Path(out), results(Path(out)))
    click.echo(f"{n} tasks; report: {write_report(Path(out))}")


@apps_group.command("report")
@click.argument("out", type=click.Path(exists=True, file_okay=False))
@click.option("--beside", type=click.Path(exists=True, file_okay=False), help="Another run (the ceiling) to compare.")
@user_errors
def report_command(out, beside) -> None:
    """Write OUT's report again (report.md, summary.json, success.png)."""
    from webagent.apps.report import write_report

    click.echo(write_report(Path(out), Path(beside) if beside else None))
