"""The ``miniwob`` command (registered in ``webagent.cli``)."""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path

import click

from webagent.agent.cli_options import agent_options, options_from
from webagent.cli_common import (
    calls_in_flight_option,
    cdp_url_option,
    cluster_options,
    endpoint_options,
    merge_arguments,
    model_options,
    open_cluster,
    run_async,
    user_errors,
)
from webagent.errors import UserError
from webagent.miniwob.scripted import SUITE_TASKS


def _episode_concurrency(func):
    """model_options' --concurrency means model calls in flight; here --concurrency is the
    number of episodes in parallel, and the calls in flight are --model-concurrency."""
    func = model_options(func)
    func.__click_params__ = [p for p in func.__click_params__ if p.name != "concurrency"]
    func = calls_in_flight_option("--model-concurrency", "concurrency")(func)
    return click.option(
        "--concurrency",
        "episodes_in_parallel",
        type=click.IntRange(min=1, max=16),
        default=1,
        show_default=True,
        help="Episodes in parallel (one browser, one context each).",
    )(func)


@click.group("miniwob", invoke_without_command=True)
@click.option(
    "--tasks",
    default=",".join(SUITE_TASKS),
    show_default=True,
    help="Comma-separated MiniWoB++ task names.",
)
@click.option("--episodes", type=click.IntRange(min=1), default=5, show_default=True, help="Episodes (seeds) per task.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="First seed.")
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default="runs/miniwob",
    show_default=True,
    help="Results folder (resumed when it holds the same configuration).",
)
@click.option("--no-traces", is_flag=True, help="Do not keep a trace folder per episode.")
@click.option(
    "--reload-each-episode",
    is_flag=True,
    help="Load the task page afresh for every episode (default: "
    "further episodes of a task start on its loaded page, as MiniWoB's own harness does; with --ray, "
    "every episode loads its page afresh).",
)
@cdp_url_option
@click.option("--shard", help="i/n: run every n-th (task, seed) from the i-th (0-based); join with `miniwob merge`.")
@agent_options
@_episode_concurrency
@cluster_options
@run_async
async def miniwob_command(
    tasks,
    episodes,
    seed,
    out,
    no_traces,
    reload_each_episode,
    cdp_url,
    shard,
    episodes_in_parallel,
    ray_address,
    workers,
    **kwargs,
) -> None:
    """Run the agent on MiniWoB++ tasks; report success rate and mean raw reward.

    `--model fake:scripted` is a scripted model that knows the right actions of
    click-button, enter-text, login-user, choose-list and click-checkboxes (the harness check).
    """
    from webagent.cli_common import parse_shard
    from webagent.miniwob.episode import model_client
    from webagent.miniwob.report import write_reports
    from webagent.miniwob.runner import MiniWoBConfig, MiniWoBEval, run_miniwob

    if click.get_current_context().invoked_subcommand:  # `miniwob merge`: nothing to run here
        return
    shard_of = parse_shard(shard)
    names = [t.strip() for t in tasks.split(",") if t.strip()]
    if not names:
        raise UserError("--tasks is empty")
    # a benchmark run: nothing learned elsewhere is offered
    options = options_from(kwargs, screenshots=not no_traces, skills=False)
    endpoint = endpoint_options(kwargs)
    out_dir = Path(out)
    started = time.perf_counter()
    with open_cluster(ray_address, workers) as cluster:
        async with model_client(endpoint) as client:
            config = MiniWoBConfig(
                model=client.model_name,
                agent=options,
                seed=seed,
                structured=endpoint.structured,
                # a Ray worker loads each episode's page afresh (its episodes are not consecutive seeds)
                reuse_page=not reload_each_episode and ray_address is None,
            )
            planned = MiniWoBEval(names, episodes, config, shard=shard_of, traces=not no_traces, cdp_url=cdp_url)
            rows = await run_miniwob(
                client,
                planned,
                out_dir,
                concurrency=episodes_in_parallel,
                progress=partial(click.echo, err=True),
                cluster=cluster,
                endpoint=endpoint,
            )
    summary = write_reports(out_dir, rows, names, config.model_dump(mode="json"), time.perf_counter() - started)
    for name, s in [*summary["tasks"].items(), ("overall", summary["overall"])]:
        click.echo(
            f"{name:18} {s['episodes']:3} episodes  success {100 * s['success_rate']:5.1f}%  "
            f"mean raw reward {s['mean_raw_reward']:+.3f}  mean steps {s['mean_steps']:.1f}"
        )
    click.echo(f"report: {out_dir / 'report.md'} (also report.json, success_rate.png)")


@miniwob_command.command("merge")
@merge_arguments
@user_errors
def merge_command(shards, out) -> None:
    """Join shard folders of one `miniwob` run into OUT and write its report."""
    from webagent.miniwob.report import write_reports
    from webagent.miniwob.runner import results
    from webagent.results_folder import merge

    n = merge([Path(s) for s in shards], Path(out), results(Path(out)))
    rows = list(results(Path(out)).rows().values())
    config = results(Path(out)).stored_config()
    tasks = list(dict.fromkeys(r.task for r in rows))
    write_reports(Path(out), rows, tasks, config.model_dump(mode="json") if config else {})
    click.echo(f"{n} episodes; report: {Path(out) / 'report.md'}")
