"""`mind2web`: snippets, eval, score, merge."""

from __future__ import annotations

import json
from pathlib import Path

import click

from webagent.cli_common import (
    cluster_options,
    endpoint_options,
    model_options,
    open_cluster,
    run_async,
    status,
    user_errors,
)
from webagent.errors import EndpointError, UserError


def _depth(value: str) -> int | str:
    if value == "auto":
        return value
    if value.isdigit() and int(value) >= 1:
        return int(value)
    raise click.BadParameter("use a positive integer or 'auto'")


def _int_list(value: str) -> list[int]:
    try:
        ks = [int(x) for x in value.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated integers, got {value!r}") from None
    if not ks or any(k < 1 for k in ks):
        raise click.BadParameter("values must be positive integers")
    return ks


def _load(data: str, split: str | None, skip_bad: bool):
    from mind2web.data import load_tasks

    bad: list = []
    tasks = load_tasks(data, split=split, skip_bad=skip_bad, bad_log=bad)
    for problem in bad:
        click.echo(
            f"skipped: {problem['file']}, {problem.get('record')}, field {problem.get('field')}: {problem['message']}",
            err=True,
        )
    if not tasks:
        raise UserError(f"no tasks found in {data}" + (f" (split {split})" if split else ""))
    return tasks, bad


def _cut_options(func):
    """``--depth`` and ``--budget-words`` of ``snippets`` and ``eval``: how a page is cut into snippets."""
    func = click.option(
        "--budget-words",
        type=click.IntRange(min=10),
        default=300,
        show_default=True,
        help="--depth auto: most words of one snippet (a subtree larger than this is split "
        "further); unused with an integer depth.",
    )(func)
    return click.option(
        "--depth",
        default="auto",
        show_default=True,
        help="N: the paper's cut (App. E.1, which tests 5-7): each element at depth N "
        "(<html> = 0, <body> = 1) with its descendants is one snippet, the rest above "
        "depth N kept in leftover snippets, no word budget. 'auto' (ours): a "
        "budget-driven cut (--budget-words) at a depth chosen per page.",
    )(func)


@click.group()
def main() -> None:
    """Mind2Web with ReadAgent's web gist memory (paper Appendix E) and baselines."""


@main.command("snippets")
@click.argument("file", type=click.Path())
@click.option("--action-uid", help="Which action's page, for a Mind2Web file (default: the first).")
@_cut_options
@click.option(
    "--json", "as_json", is_flag=True, help="Only the JSON lines, one object per snippet (no summary line on stderr)."
)
@user_errors
def snippets_command(file, action_uid, depth, budget_words, as_json) -> None:
    """Print the snippets of a page: a Mind2Web JSON/JSONL file or an .html file.

    One JSON object per snippet (index, ids, text, words) on stdout, then a summary
    line on stderr: snippet count, the cut, and the snippets' word sizes.
    """
    import statistics

    from webagent.html import split_snippets

    depth = _depth(depth)
    path = Path(file)
    if not path.is_file():
        raise UserError(f"{file}: no such file")
    if path.suffix.lower() in (".html", ".htm"):
        html = path.read_text(encoding="utf-8", errors="replace")
    else:
        tasks, _ = _load(file, None, False)
        actions = [a for t in tasks for a in t.actions]
        if action_uid:
            actions = [a for a in actions if a.action_uid == action_uid]
            if not actions:
                raise UserError(f"{file}: no action with action_uid {action_uid!r}")
        html = actions[0].cleaned_html
    snippets = split_snippets(html, depth=depth, budget_words=budget_words)
    for s in snippets:
        click.echo(
            json.dumps({"index": s.index, "ids": list(s.ids), "text": s.text, "words": s.words}, ensure_ascii=False)
        )
    if as_json:
        return
    if depth == "auto":
        from webagent.html import choose_depth, load_tree

        how = f"auto (ours): depth {choose_depth(load_tree(html), budget_words)}, budget {budget_words} words"
    else:
        how = f"paper's cut at depth {depth}"
    sizes = sorted(s.words for s in snippets)
    click.echo(
        f"{len(snippets)} snippets, {how}; words min {sizes[0]} / median "
        f"{statistics.median(sizes):g} / max {sizes[-1]}",
        err=True,
    )


@main.command("eval")
@click.option(
    "--data",
    required=True,
    help="Folder in the official layout (DIR/test_website/*.json ...), a JSON/JSONL file, or "
    "hf:NAME:SPLIT (the hub's osunlp/Mind2Web holds only train).",
)
@click.option(
    "--split", help="Split to use: a subfolder of --data, e.g. test_website (default: all), or the hub split."
)
@click.option(
    "--method",
    "methods",
    default="readagent-p",
    show_default=True,
    help="Comma-separated: raw, bm25, neural, ranker, gistmem, readagent-p (or name@k), or 'all' (all but ranker).",
)
@click.option("--max-lookup", default="1,5", show_default=True, help="readagent-p: most snippets looked up (list).")
@click.option("--top-k", default="1,5", show_default=True, help="bm25/neural/ranker: snippets retrieved (list).")
@_cut_options
@click.option(
    "--context-tokens",
    type=click.IntRange(min=1024),
    default=8192,
    show_default=True,
    help="raw: the page is truncated to fit this context.",
)
@click.option(
    "--previous-k",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="Previous actions shown to the model: the last k of the gold ones (teacher-forced, as "
    "MindAct; 5 is its default); 0 = none.",
)
@click.option(
    "--act-on",
    type=click.Choice(["looked-up", "context"]),
    default="looked-up",
    show_default=True,
    help="readagent-p: looked-up = after a look-up the action may only pick ids of the looked-up "
    "snippets (the paper: the model reads the retrieved snippets again and predicts the target "
    "element); context = any id visible in the prompt (gists included).",
)
@click.option(
    "--typed-actions",
    is_flag=True,
    help="Try the live agent's typed action space: each operation only on the allowed ids of the kind "
    "it fits (CLICK on clickable or unclassified elements, TYPE on text fields, SELECT on selects "
    "with a value among their options), by schema and by check. Off: the benchmark's plain space.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N tasks.")
@click.option("--shard", help="i/n: every n-th task starting at i (merge the shards' folders with `merge`).")
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    help="Output folder (default runs/m2w-SPLIT); running again resumes into it.",
)
@click.option("--skip-bad", is_flag=True, help="Skip malformed records (reported) instead of stopping.")
@click.option(
    "--scores",
    type=click.Path(dir_okay=False),
    help="MindAct ranker scores (scores_all_data.pkl), for the ranker method.",
)
@cluster_options
@model_options
@run_async
async def eval_command(
    data,
    split,
    methods,
    max_lookup,
    top_k,
    depth,
    budget_words,
    context_tokens,
    previous_k,
    act_on,
    typed_actions,
    limit,
    shard,
    out,
    skip_bad,
    scores,
    ray_address,
    workers,
    **kwargs,
) -> None:
    """Run methods over Mind2Web steps; write steps.jsonl, report.md, report.json and a histogram."""
    from mind2web.methods import expand_variants
    from mind2web.report import summary_lines, write_report
    from mind2web.rows import STEPS_FILE, read_manifest, read_rows
    from mind2web.runner import ENDPOINT_DOWN_AFTER, EvalConfig, choose_tasks, run_eval
    from webagent.cli_common import parse_shard
    from webagent.llm.endpoint import open_client

    depth = _depth(depth)
    shard_ix = parse_shard(shard)
    lookups, ks = _int_list(max_lookup), _int_list(top_k)
    names = [m.strip() for m in methods.split(",") if m.strip()]
    variants = expand_variants(names, top_k=ks, max_lookup=lookups)
    if any(v.method == "ranker" for v in variants) and not scores:
        raise UserError("the ranker method needs MindAct's ranker scores: pass --scores scores_all_data.pkl")
    tasks, skipped = _load(data, split, skip_bad)
    if scores:
        from mind2web.ranker import attach_ranker, load_ranker

        missing = attach_ranker(tasks, load_ranker(scores))
        click.echo(f"ranker scores attached ({missing} candidates without a score)", err=True)
    out_dir = Path(out or f"runs/m2w-{split or 'all'}")
    opts = endpoint_options(kwargs)
    with open_cluster(ray_address, workers) as cluster:
        async with open_client(opts) as client:
            config = EvalConfig.for_client(
                client,
                data=str(data),
                split=split,
                depth=depth,
                budget_words=budget_words,
                context_tokens=context_tokens,
                previous_k=previous_k,
                act_on=act_on,
                typed_actions=typed_actions,
            )
            chosen = len(choose_tasks(tasks, limit=limit, shard=shard_ix))
            click.echo(
                f"{chosen} of {len(tasks)} tasks; methods: {', '.join(v.name for v in variants)}; out: {out_dir}",
                err=True,
            )
            info = await run_eval(
                client,
                tasks,
                variants,
                out_dir,
                config,
                shard=shard_ix,
                limit=limit,
                step_concurrency=max(1, opts.concurrency // 2),
                cluster=cluster,
                endpoint=opts,
                say=status,
            )
            usage = client.usage if cluster is None else cluster.usage
    rows = read_rows(out_dir / STEPS_FILE)
    if skipped:  # --skip-bad: what was left out, kept next to the results
        with open(out_dir / "skipped_records.jsonl", "w", encoding="utf-8") as f:
            f.writelines(json.dumps(problem, default=str) + "\n" for problem in skipped)
    meta = {**config.model_dump(mode="json"), "usage": usage.to_dict(), "skipped_records": len(skipped), **info}
    report = write_report(rows, read_manifest(out_dir), out_dir, meta)
    for line in summary_lines(report["results"]):
        click.echo(line)
    click.echo(
        f"ran {info['ran']} method-steps, resumed {info['resumed']}"
        + (
            f", retried {info['retried_endpoint_failures']} whose endpoint had failed"
            if info["retried_endpoint_failures"]
            else ""
        )
    )
    click.echo(f"report: {out_dir / 'report.md'} (and report.json, steps.jsonl)")
    click.echo(usage.summary_line())
    if info["not_started"]:
        raise EndpointError(
            f"the endpoint seems down ({info['endpoint_failures']} method-steps failed on it, the last "
            f"{ENDPOINT_DOWN_AFTER} in a row): stopped with {info['not_started']} method-steps not "
            "started; run the same command again to resume"
        )
    if info["endpoint_failures"]:
        raise EndpointError(
            f"{info['endpoint_failures']} method-steps failed because the endpoint was unavailable "
            "(scored as wrong in this report); run the same command again to retry only those"
        )


@main.command("score")
@click.option("--data", required=True, help="Folder in the official layout, or a JSON/JSONL file.")
@click.option("--split", help="Subfolder to use.")
@click.option(
    "--predictions",
    required=True,
    type=click.Path(dir_okay=False),
    help='JSONL lines {"annotation_id", "action_uid", "element_id", "op", "value"}.',
)
@click.option("--skip-bad", is_flag=True, help="Skip malformed records (reported) instead of stopping.")
@click.option("--json", "as_json", is_flag=True, help="Print the scores as one JSON object.")
@user_errors
def score_command(data, split, predictions, skip_bad, as_json) -> None:
    """Score a predictions file with the benchmark's metrics."""
    from mind2web.score import score_predictions

    tasks, _ = _load(data, split, skip_bad)
    result = score_predictions(tasks, predictions)
    if as_json:
        click.echo(json.dumps(result))
        return
    for key in ("element_acc", "op_f1", "step_sr", "task_sr"):
        click.echo(f"{key:<12} {result[key]:6.2f}   micro {result['micro_' + key]:6.2f}")
    click.echo(
        f"{result['num_tasks']} tasks, {result['num_steps']} steps, "
        f"{result['missing_predictions']} missing, {result['unknown_predictions']} unknown predictions"
    )


@main.command("merge")
@click.argument("runs", nargs=-1, required=True, type=click.Path(file_okay=False))
@click.option(
    "--out", required=True, type=click.Path(file_okay=False), help="Folder for the merged run and its report."
)
@user_errors
def merge_command(runs, out) -> None:
    """Join the outputs of shards (same configuration) and write one report."""
    from mind2web.report import summary_lines, write_report
    from mind2web.rows import STEPS_FILE, Manifest, read_manifest, read_rows, write_manifest
    from mind2web.runner import results
    from webagent.results_folder import merge

    out_dir = Path(out)
    merge([Path(run) for run in runs], out_dir, results(out_dir))  # one configuration, the later shard's row wins
    manifest = Manifest()
    for run in runs:
        manifest = manifest.union(read_manifest(Path(run)).tasks, source=run)
    write_manifest(out_dir, manifest)
    rows = read_rows(out_dir / STEPS_FILE)  # typed: a row of another version is one clear line
    stored = results(out_dir).stored() or {}
    report = write_report(rows, manifest, out_dir, {**stored, "merged_from": list(runs)})
    for line in summary_lines(report["results"]):
        click.echo(line)
    click.echo(
        f"merged {len(rows)} method-steps of {len(manifest.tasks)} tasks from {len(runs)} runs; "
        f"report: {out_dir / 'report.md'}"
    )


@main.command("report")
@click.argument("run", type=click.Path(file_okay=False, exists=True))
@user_errors
def report_command(run) -> None:
    """Write a run folder's report again from its steps (e.g. after it was killed)."""
    from mind2web.report import summary_lines, write_report
    from mind2web.rows import STEPS_FILE, read_manifest, read_rows
    from mind2web.runner import results
    from webagent.results_folder import CONFIG_FILE

    folder = Path(run)
    stored = results(folder).stored()
    if stored is None:
        raise UserError(f"{run}: not an eval output folder (no {CONFIG_FILE})")
    report = write_report(read_rows(folder / STEPS_FILE), read_manifest(folder), folder, stored)
    for line in summary_lines(report["results"]):
        click.echo(line)
    click.echo(f"report: {folder / 'report.md'}")


if __name__ == "__main__":
    main()
