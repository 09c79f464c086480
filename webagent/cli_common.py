"""What both CLIs share: model options, and turning user errors into one line + exit code."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sys

import click

from webagent.errors import UserError
from webagent.llm.endpoint import EndpointOptions

threads_option = click.option(  # also `webagent serve`'s
    "--threads",
    type=click.IntRange(min=1),
    help="Embedded server: compute threads for reading prompts and decoding (default: every core when the machine "
    "is quiet, one fewer when it is busy; see docs/models.md, Threads).",
)


def calls_in_flight_option(*decls: str):
    """``--concurrency`` of the model options (named otherwise where --concurrency means something else)."""
    return click.option(
        *decls, type=click.IntRange(min=1), default=8, show_default=True, help="Model calls in flight at once."
    )


def model_options(func):
    """--base-url/--model/--api-key/--gguf/--embedded/--n-ctx/--concurrency/--threads/--timeout/--no-cache/--no-structured."""
    from webagent.llm.registry import MODELS, default_model

    opts = [
        click.option(
            "--base-url",
            envvar="OPENAI_BASE_URL",
            help="OpenAI-compatible endpoint (env OPENAI_BASE_URL). Without one, the embedded model is started.",
        ),
        click.option(
            "--model",
            envvar="WEBAGENT_MODEL",
            help="Model name at the endpoint (env WEBAGENT_MODEL); 'fake:heuristic' for a dry run.",
        ),
        click.option("--api-key", envvar="OPENAI_API_KEY", help="API key (env OPENAI_API_KEY)."),
        click.option("--gguf", type=click.Path(dir_okay=False), help="GGUF file for the embedded server."),
        click.option(
            "--embedded",
            type=click.Choice(list(MODELS)),
            metavar="NAME",
            help=f"Registry model for the embedded server, pulled on first use ({', '.join(MODELS)}; "
            f"default {default_model()}; see `webagent models list`).",
        ),
        click.option(
            "--n-ctx",
            type=click.IntRange(min=256),
            default=8192,
            show_default=True,
            help="Embedded server: context tokens per slot (one slot per two cores, at most --concurrency).",
        ),
        calls_in_flight_option("--concurrency"),
        threads_option,
        click.option(
            "--timeout",
            "timeout_s",
            type=click.FloatRange(min=1),
            default=300.0,
            show_default=True,
            help="Seconds per model call.",
        ),
        click.option("--no-cache", is_flag=True, help="Bypass the persistent cache."),
        click.option("--no-structured", is_flag=True, help="Do not request JSON-schema replies; parse text only."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def endpoint_options(kwargs: dict) -> EndpointOptions:
    """Pop the model options out of a command's kwargs."""
    return EndpointOptions(
        base_url=kwargs.pop("base_url"),
        model=kwargs.pop("model"),
        api_key=kwargs.pop("api_key"),
        gguf=kwargs.pop("gguf"),
        embedded=kwargs.pop("embedded"),
        n_ctx=kwargs.pop("n_ctx"),
        concurrency=kwargs.pop("concurrency"),
        timeout_s=kwargs.pop("timeout_s"),
        cache=not kwargs.pop("no_cache"),
        structured=not kwargs.pop("no_structured"),
        threads=kwargs.pop("threads", None),
    )


def fail(message: str, code: int = 2) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def user_errors(func):
    """User errors become one line on stderr and a non-zero exit; Ctrl-C exits 130."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except UserError as exc:
            fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            fail("interrupted; results written so far are kept", 130)

    return wrapper


def run_async(func):
    """Run an async command under `user_errors`."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return asyncio.run(func(*args, **kwargs))

    return user_errors(wrapper)


def status(message: str) -> None:
    """Progress line on stderr (stdout stays clean for --json)."""
    click.echo(f"… {message}", err=True)


def merge_arguments(func):
    """``SHARDS... --out DIR`` of every evaluator's ``merge`` (shard folders of one configuration)."""
    func = click.option("--out", type=click.Path(file_okay=False), required=True, help="The merged results folder.")(
        func
    )
    return click.argument("shards", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))(func)


def parse_shard(text: str | None) -> tuple[int, int]:
    """`--shard i/n` → (i, n): every n-th item starting at i; none → (0, 1)."""
    if not text:
        return 0, 1
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise UserError(f"--shard must look like i/n, e.g. 0/4 (got {text!r})") from None
    if not (n >= 1 and 0 <= i < n):
        raise UserError(f"--shard {text}: need 0 <= i < n")
    return i, n


def cluster_options(func):
    """``--ray [ADDRESS]`` and ``--workers N`` of every evaluator (``webagent.cluster``)."""
    func = click.option(
        "--workers",
        type=click.IntRange(min=1),
        help="With --ray: episodes at once (default: one per core for a Ray started here; the cluster's CPUs).",
    )(func)
    return click.option(
        "--ray",
        "ray_address",
        is_flag=False,
        flag_value="local",
        default=None,
        metavar="[ADDRESS]",
        help="Run each episode as a Ray task: on a Ray started here (no ADDRESS), or on the cluster at "
        "ADDRESS (HOST:PORT of its head, ray://HOST:PORT, or auto). Rows stream into --out as a serial "
        "run writes them; a lost episode runs once more (docs/cluster.md).",
    )(func)


@contextlib.contextmanager
def open_cluster(address: str | None, workers: int | None):
    """The connected Ray for ``--ray`` (None without it), shut down at the end."""
    if address is None:
        if workers is not None:
            raise UserError("--workers is for --ray (a serial run does one episode at a time)")
        yield None
        return
    from webagent.cluster import connect

    cluster = connect(address, workers)
    status(f"Ray {'started here' if cluster.started_here else 'at ' + address}: {cluster.workers} episodes at once")
    try:
        yield cluster
    finally:
        cluster.close()


headed_option = click.option("--headed", is_flag=True, help="Show the browser window.")
cdp_url_option = click.option(
    "--cdp-url", help="Attach to a running Chromium (ws://... or http://host:port) instead of launching one."
)


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
