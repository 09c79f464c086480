"""A task's gold path followed by Playwright alone (no model, no agent): each step found
the way a person describes it, by role and accessible name (``get_by_role(..., exact=True)``).
Every request's host is recorded, so a test can show that no page of the app reaches
outside 127.0.0.1.

``python -m webagent.apps.gold APP [TASK_ID ...]`` checks each task on a fresh instance:
the check false before, the gold path followed, the check true after, nothing requested
from another host; it prints a line per task and exits non-zero if one failed."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from webagent.apps.instance import AppInstance
from webagent.apps.spec import GoldStep, Task, load_apps

STEP_TIMEOUT_MS = 10_000
LOCAL_HOSTS = frozenset({"127.0.0.1"})


class GoldStepError(Exception):
    pass


@dataclass
class GoldRun:
    ok: bool
    steps: int = 0
    error: str = ""
    hosts: set[str] = field(default_factory=set)
    seconds: float = 0.0

    @property
    def outside_hosts(self) -> set[str]:
        return {h for h in self.hosts if h not in LOCAL_HOSTS}


async def _locate(page, step: GoldStep):
    loc = page.get_by_role(step.role, name=step.name, exact=True)
    try:  # content a page's script adds after its load event: wait for it, as a person would
        await loc.nth(step.nth or 0).wait_for(state="visible", timeout=STEP_TIMEOUT_MS)
    except Exception:  # noqa: BLE001 - counted below: "0 elements have this role and name"
        pass
    count = await loc.count()
    if step.nth is not None:
        if count <= step.nth:
            raise GoldStepError(f"{step.describe()}: only {count} on the page")
        return loc.nth(step.nth)
    if count != 1:
        raise GoldStepError(f"{step.describe()}: {count} elements have this role and name")
    return loc


async def do_step(page, step: GoldStep) -> None:
    if step.op == "done":
        return
    loc = await _locate(page, step)
    if step.op == "click":
        await loc.click(timeout=STEP_TIMEOUT_MS)
    elif step.op == "type":
        await loc.fill(step.value, timeout=STEP_TIMEOUT_MS)
    elif step.op == "select":
        await loc.select_option(label=step.value, timeout=STEP_TIMEOUT_MS)
    elif step.op == "check":
        await loc.check(timeout=STEP_TIMEOUT_MS)
    elif step.op == "uncheck":
        await loc.uncheck(timeout=STEP_TIMEOUT_MS)
    await page.wait_for_load_state("load", timeout=STEP_TIMEOUT_MS)


async def follow(context, start_url: str, task: Task) -> GoldRun:
    """Open ``start_url`` in a new page of ``context`` and follow ``task``'s gold path."""
    run = GoldRun(ok=False)
    t0 = time.perf_counter()
    page = await context.new_page()
    page.on("request", lambda request: run.hosts.add(urlsplit(request.url).hostname or urlsplit(request.url).scheme))
    try:
        await page.goto(start_url, wait_until="load", timeout=STEP_TIMEOUT_MS)
        for step in task.gold:
            await do_step(page, step)
            run.steps += 1
        run.ok = True
    except Exception as exc:  # noqa: BLE001 - a step that fails is this run's result, with where it failed
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        run.error = f"step {run.steps + 1}: {first}"
    finally:
        await page.close()
        run.hosts.discard("data")
        run.hosts.discard("blob")
        run.seconds = time.perf_counter() - t0
    return run


async def launch_browser(pw):
    from webagent.browser.session import CHROMIUM_ARGS, find_chromium

    return await pw.chromium.launch(executable_path=find_chromium(), headless=True, args=CHROMIUM_ARGS)


@dataclass
class GoldVerdict:
    task_id: str
    before: bool
    after: bool
    run: GoldRun
    why: str = ""
    reset_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.before and self.after and self.run.ok and not self.run.outside_hosts

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        detail = [
            f"check before={self.before} after={self.after}",
            f"{self.run.steps} steps",
            f"{self.run.seconds:.1f} s",
            f"reset {self.reset_s * 1000:.0f} ms",
        ]
        if self.run.error:
            detail.append(self.run.error)
        if self.run.outside_hosts:
            detail.append(f"requested {sorted(self.run.outside_hosts)}")
        if not self.after and self.why:
            detail.append(f"check: {self.why}")
        return f"{mark} {self.task_id}: " + "; ".join(detail)


async def verify_task(instance: AppInstance, browser, task: Task) -> GoldVerdict:
    """Fresh instance, check false, gold path, check true (with the gold answer for an answer task)."""
    reset_s = instance.reset()
    # An answer task changes nothing on the site: "before" is the check of an empty answer.
    before, _ = instance.check(task.id, "" if task.answer is not None else None)
    context = await browser.new_context()
    try:
        run = await follow(context, instance.url(task.start), task)
    finally:
        await context.close()
    after, why = instance.check(task.id, task.answer)
    return GoldVerdict(task.id, before, after, run, why, reset_s)


async def _main(app_name: str, task_ids: list[str], app_dirs: list[str]) -> int:
    from playwright.async_api import async_playwright

    (app,) = load_apps([app_name], extra=app_dirs)
    tasks = [app.task(t) for t in task_ids] if task_ids else list(app.tasks)
    failed = 0
    with AppInstance(app, say=print) as instance:
        print(f"{app.name} at {instance.base_url}")
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            for task in tasks:
                verdict = await verify_task(instance, browser, task)
                failed += not verdict.ok
                print(verdict.line(), flush=True)
            await browser.close()
    print(f"{len(tasks) - failed}/{len(tasks)} gold paths reach their check")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m webagent.apps.gold", description=__doc__.splitlines()[0])
    parser.add_argument("app")
    parser.add_argument("tasks", nargs="*")
    parser.add_argument("--app-dir", action="append", default=[], help="an app folder outside the package")
    args = parser.parse_args(argv)
    from webagent.errors import UserError

    try:
        return asyncio.run(_main(args.app, args.tasks, args.app_dir))
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
