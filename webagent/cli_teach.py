"""``webagent teach URL TASK``: a person does TASK in a Chromium window; what they did is
written as a run's trace and, with ``--save-as NAME``, kept as a workflow that ``webagent
replay NAME`` runs (see ``webagent.agent.teach``)."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from pathlib import Path

import click

from webagent.cli_common import allow_domain_option, run_async, status
from webagent.errors import UserError


def _enter_pressed(loop: asyncio.AbstractEventLoop, done: asyncio.Event) -> None:
    """Sets ``done`` when the person presses Enter in the terminal (or stdin closes). A daemon
    thread: a window closed first does not leave the command waiting on the terminal."""

    def read() -> None:
        try:
            sys.stdin.readline()
        finally:
            loop.call_soon_threadsafe(done.set)

    threading.Thread(target=read, daemon=True).start()


@click.command("teach")
@click.argument("url")
@click.argument("task")
@click.option("--save-as", metavar="NAME", help="Keep the demonstration as a workflow (webagent replay NAME).")
@click.option("--trace-dir", type=click.Path(file_okay=False, path_type=Path), help="Where the trace goes.")
@allow_domain_option()
@click.option("--headless", is_flag=True, help="No window (for scripts that drive the page themselves).")
@run_async
async def teach_command(url, task, save_as, trace_dir, allow_domains, headless) -> None:
    """Record a person doing TASK at URL: every click, select, the final value typed into each
    field (a password only as a placeholder), every form sent and page opened. The recording
    ends when the window is closed or Enter is pressed here."""
    from webagent.agent.teach import Teach
    from webagent.replay import store
    from webagent.trace import workflow as W

    if save_as:
        store.check_name(save_as)
    if not headless and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise UserError("teach opens a browser window, and this machine has no display (DISPLAY is not set)")
    folder = trace_dir or Path("runs") / "teach" / time.strftime("%Y%m%d-%H%M%S")
    async with Teach(url, task, folder, headed=not headless, allowed_domains=list(allow_domains) or None) as teach:
        status(f"recording at {url}: do the task in the window, then close it or press Enter here")
        done = asyncio.Event()
        _enter_pressed(asyncio.get_running_loop(), done)
        await teach.wait_closed(done)
        written = await teach.finish()
    steps = W.read_records(written)
    click.echo(f"recorded {len(steps)} steps: {written}")
    for record in steps:
        click.echo(f"  {record.step}. {record.action_text}")
    if save_as:
        workflow = W.from_trace(written)
        store.save(save_as, workflow, note="taught")
        secrets = [n for n, p in workflow.params.items() if p.get("source") == "password"]
        hint = "".join(f" --param {n}=..." for n in secrets)
        click.echo(f"saved as workflow {save_as!r}: webagent replay {save_as}{hint}")
