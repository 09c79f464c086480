"""`webagent qa-eval`: QuALITY / QMSum / NarrativeQA with every reading method side by side."""

from __future__ import annotations

import json
from pathlib import Path

import click

from webagent.cli_common import (
    cluster_options,
    endpoint_options,
    merge_arguments,
    model_options,
    open_cluster,
    run_async,
    status,
    user_errors,
)
from webagent.docqa.data import DATASETS, DEFAULT_NARRATIVEQA_SPLIT, NARRATIVEQA_SPLITS, load
from webagent.docqa.methods import parse_methods
from webagent.docqa.options import PAGINATIONS, QAOptions

# The paper's pagination (Appendix C, Table 8) and context budget (6k words) per dataset.
PAGE_WORDS = {"quality": (280, 600), "qmsum": (280, 600), "narrativeqa": (500, 3000)}

gist_model_option = click.option(  # also `webagent ask`'s
    "--gist-model",
    metavar="NAME",
    help="Paginate and gist with this model (a registry name such as qwen2.5-coder-0.5b, a GGUF file, or a model "
    "at --base-url); the other calls (look-up, answer, a method's own) stay with the main model. Both are served "
    "at once.",
)


@click.group("qa-eval", invoke_without_command=True)
@click.option("--dataset", type=click.Choice(DATASETS), help="Required to run (not for `qa-eval merge`).")
@click.option(
    "--data", help="QuALITY/QMSum JSONL file, NarrativeQA folder (or hf:deepmind/narrativeqa); required to run."
)
@click.option(
    "--split",
    type=click.Choice(NARRATIVEQA_SPLITS),
    help=f"NarrativeQA: the split to read (default {DEFAULT_NARRATIVEQA_SPLIT}; train only when named).",
)
@click.option(
    "--method", "methods", default="all", show_default=True, help="Comma-separated methods (name or name@k), or 'all'."
)
@click.option(
    "--max-pages",
    type=click.IntRange(min=1),
    default=QAOptions.max_pages,
    show_default=True,
    help="readagent-p/s: most pages to look up (when no @k is given).",
)
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions.")
@click.option("--shard", help="i/n: every n-th document, starting at the i-th.")
@click.option("--out", type=click.Path(file_okay=False), default="runs/qa-eval", show_default=True)
@click.option("--min-words", type=click.IntRange(min=1), help="Pagination (default: the paper's for the dataset).")
@click.option("--max-words", type=click.IntRange(min=2), help="Pagination (default: the paper's for the dataset).")
@click.option("--pagination", type=click.Choice(PAGINATIONS), default=QAOptions.pagination, show_default=True)
@click.option(
    "--context-words",
    type=click.IntRange(min=100),
    default=QAOptions.context_words,
    show_default=True,
    help="Context budget in words (full/truncate cut here; look-ups stop adding pages here).",
)
@click.option(
    "--max-children",
    type=click.IntRange(min=2),
    default=QAOptions.max_children,
    show_default=True,
    help="MemWalker: children per node.",
)
@click.option(
    "--max-refinements",
    type=click.IntRange(min=0),
    default=QAOptions.max_refinements,
    show_default=True,
    help="summary-tree: most INSUFFICIENT DETAIL refinements per question.",
)
@click.option("--no-rater", is_flag=True, help="Skip the LLM raters (ROUGE only) for free-form answers.")
@click.option("--skip-bad", is_flag=True, help="Keep going past malformed records (counted in skipped_records.jsonl).")
@click.option("--doc-concurrency", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--single-pass", is_flag=True, help="Pagination also writes each page's gist (one read per page).")
@gist_model_option
@cluster_options
@model_options
@run_async
async def qa_eval_command(
    dataset,
    data,
    split,
    methods,
    max_pages,
    limit,
    shard,
    out,
    min_words,
    max_words,
    pagination,
    context_words,
    max_children,
    max_refinements,
    no_rater,
    skip_bad,
    doc_concurrency,
    single_pass,
    gist_model,
    ray_address,
    workers,
    **kwargs,
) -> None:
    """Evaluate reading methods on a long-document QA dataset; writes OUT/report.md, report.json and a PNG."""
    import signal

    if click.get_current_context().invoked_subcommand:  # `qa-eval merge`: nothing to run here
        return
    if not dataset or not data:
        raise click.UsageError("Missing option '--dataset' or '--data' (both are needed to run an evaluation).")

    from webagent.cli_common import parse_shard
    from webagent.docqa.report import write_report
    from webagent.docqa.runner import make_config, results, run_eval, select
    from webagent.llm.endpoint import open_client, open_gist_client

    def stop_on_term(*_):  # `kill` of a long run stops the embedded model server too, and keeps results
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop_on_term)
    variants = parse_methods(methods, max_pages)
    shard_ix = parse_shard(shard)
    lo, hi = PAGE_WORDS[dataset]
    options = QAOptions(
        min_words=min_words or lo,
        max_words=max_words or hi,
        pagination=pagination,
        single_pass=single_pass,
        gist_model=gist_model,
        max_pages=max_pages,
        importance_lookup=dataset == "narrativeqa",
        context_words=context_words,
        max_children=max_children,
        max_refinements=max_refinements,
    )
    loaded = load(dataset, data, skip_bad=skip_bad, split=split)
    if dataset == "narrativeqa":
        split = split or DEFAULT_NARRATIVEQA_SPLIT
    out_dir = Path(out)
    if loaded.skipped:
        out_dir.mkdir(parents=True, exist_ok=True)
        with open(out_dir / "skipped_records.jsonl", "w", encoding="utf-8") as f:
            for s in loaded.skipped:
                f.write(json.dumps(s, ensure_ascii=False) + "\n")
        status(f"skipped {len(loaded.skipped)} malformed records (see {out_dir / 'skipped_records.jsonl'})")
    documents = select(loaded.documents, limit, shard_ix)
    status(
        f"{len(documents)} documents, {sum(len(d.questions) for d in documents)} questions"
        + (f" (split {split})" if split else "")
        + ", "
        f"methods: {', '.join(v.name for v in variants)}"
    )
    data_id = data if data.startswith("hf:") else str(Path(data).resolve())
    results(out_dir).check(make_config(dataset, data_id, variants, "?", options, split), ignore=("model",))
    endpoint = endpoint_options(kwargs)
    with open_cluster(ray_address, workers) as cluster:
        async with open_client(endpoint) as client, open_gist_client(endpoint, gist_model, client) as memory_client:
            config = make_config(dataset, data_id, variants, client.model_name, options, split)
            summary = await run_eval(
                client,
                documents,
                variants,
                out_dir,
                config,
                doc_concurrency=doc_concurrency,
                rate=not no_rater,
                memory_client=memory_client,
                cluster=cluster,
                endpoint=endpoint,
                say=status,
            )
            usage_line = (client.usage if cluster is None else cluster.usage).summary_line()
    report = write_report(out_dir)
    status(
        f"{summary['ran']} method-questions run, {summary['resumed']} resumed"
        + (
            f", {summary['endpoint_failures']} left by endpoint failures (run again to retry)"
            if summary["endpoint_failures"]
            else ""
        )
    )
    click.echo((out_dir / "report.md").read_text(encoding="utf-8"))
    click.echo(
        f"wrote {out_dir / 'report.md'}, report.json, accuracy_vs_compression.png ({report['questions']} questions)"
    )
    click.echo(usage_line)


@qa_eval_command.command("merge")
@merge_arguments
@user_errors
def merge_command(shards, out) -> None:
    """Join shard folders of one `qa-eval` (--shard i/n) into OUT and write its report."""
    from webagent.docqa.report import write_report
    from webagent.docqa.runner import merge

    n = merge([Path(s) for s in shards], Path(out))
    report = write_report(Path(out))
    click.echo(f"{n} method-questions ({report['questions']} questions); report: {Path(out) / 'report.md'}")


async def ask_with_method(path, question: str, method: str, options: QAOptions, as_json: bool, kwargs: dict) -> None:
    """`webagent ask --method M` for the methods other than ReadAgent-P/S."""
    from webagent.docqa.ask_method import ask_method
    from webagent.llm.endpoint import open_client, open_gist_client

    endpoint = endpoint_options(kwargs)
    async with (
        open_client(endpoint) as client,
        open_gist_client(endpoint, options.gist_model, client) as memory_client,
    ):
        result = await ask_method(
            client, path, question, method, options=options, memory_client=memory_client, progress=status
        )
        usage_line = client.usage.summary_line()
    lines = [
        f"method: {result.method}; pages read in full: {', '.join(map(str, result.pages_read)) or 'none'} "
        f"of {result.num_pages}; compression rate: {result.compression_rate:.1f}%"
        + ("  (memory from cache)" if result.memory_from_cache else "")
    ]
    if result.failures or result.memory_failures:
        lines.append(
            f"failures: {result.failures} in answering ({result.problem or 'see --json'}), "
            f"{result.memory_failures} in building the memory (not cached)"
        )
    print_answer(result, lines, usage_line, as_json)


def print_answer(result, lines: list[str], usage_line: str, as_json: bool) -> None:
    """What `webagent ask` prints: one JSON object, or the answer, a blank line, ``lines`` and the cost."""
    if as_json:
        click.echo(result.model_dump_json())
        return
    for line in (result.answer or "(the model gave an empty answer)", "", *lines, usage_line):
        click.echo(line)
