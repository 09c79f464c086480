"""A task's gold path followed by Playwright alone (no model, no agent): each step found
the way a person describes it, by role and accessible name (``get_by_role(..., exact=True)``).
Every request's host is recorded, so a test can show that no page of the app reaches
outside 127.0.0.1.

``python -m webagent.apps.gold APP [TASK_ID ...]`` checks each task on a fresh instance:
the check false before, the gold path followed, the check true after, nothing requested
from another host; it prints a line per task and exits non-zero if one failed. With
``--demos`` it follows the app's demonstrations (demos.json) instead: a demonstration has
no check, it passes when every step was found and done and nothing was requested from
another host."""

from __future__ import annotations

import argparse
import asyncio
import difflib
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from webagent.apps.instance import AppInstance
from webagent.apps.spec import Demo, GoldStep, Task, load_apps, url_regex
from webagent.errors import RuntimeFailure, UserError, first_line

STEP_TIMEOUT_MS = 10_000
NAMES_TIMEOUT_S = 5.0
NEAREST = 3  # names listed in an error
LIKE = 0.4  # difflib ratio from which a name of the step's role is listed (the nearest anyway when none is)
CLOSE = 0.6  # and from which a name of another role is
# Roles no step names: containers without a role of their own (Chromium's own roles, such as
# StaticText, RootWebArea or LabelText, start with a capital and are left out too).
_NO_ROLES = frozenset({"", "generic", "none", "presentation"})
_ROLE_ALIASES = {"image": "img"}  # Chromium's name for a role -> ARIA's (get_by_role's)
LOCAL_HOSTS = frozenset({"127.0.0.1"})


class GoldStepError(RuntimeFailure):
    """A gold step that cannot be done on the page: what it wanted and what the page has instead."""


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


async def named_elements(page) -> list[tuple[str, str]]:
    """(role, accessible name) of each element of ``page``'s own document, as Chromium
    computes them (``Accessibility.getFullAXTree``; Playwright has no API for a name), the
    name "" when it has none; [] when the tree cannot be read. Roles are ARIA's (Chromium's
    "image" is "img")."""
    try:
        cdp = await page.context.new_cdp_session(page)
    except Exception:  # noqa: BLE001 - not Chromium, or the page is gone: no names to offer
        return []
    try:
        reply = await asyncio.wait_for(cdp.send("Accessibility.getFullAXTree"), NAMES_TIMEOUT_S)
    except Exception:  # noqa: BLE001 - the same: the error message goes without names
        return []
    finally:
        try:
            await cdp.detach()
        except Exception:  # noqa: BLE001, S110 - the page closed meanwhile
            pass
    found: dict[tuple[str, str], None] = {}
    for node in reply.get("nodes", []):
        role = str((node.get("role") or {}).get("value") or "")
        if node.get("ignored") or role in _NO_ROLES or role[:1].isupper():
            continue
        name = " ".join(str((node.get("name") or {}).get("value") or "").split())
        found[(_ROLE_ALIASES.get(role, role), name)] = None
    return list(found)


def _ranked(wanted: str, names: list[str]) -> list[tuple[float, str]]:
    key = wanted.casefold()
    scored = [(difflib.SequenceMatcher(None, key, n.casefold()).ratio(), n) for n in dict.fromkeys(names) if n]
    return sorted(scored, key=lambda pair: -pair[0])


def instead_of(elements: list[tuple[str, str]], role: str, name: str) -> str:
    """What a page whose elements are ``elements`` (``named_elements``) has instead of a
    ``role`` named ``name``: the nearest names of that role, else elements of other roles
    with a close name ("" when the page's elements are unknown)."""
    if not elements:
        return ""
    same = [n for r, n in elements if r == role and n]
    if same:
        ranked = _ranked(name, same)
        nearest = [n for score, n in ranked if score >= LIKE][:NEAREST] or [n for _, n in ranked[:NEAREST]]
        return "nearest names on the page: " + ", ".join(repr(n) for n in nearest)
    roles: dict[str, str] = {}
    for r, n in elements:
        roles.setdefault(n, r)
    close = [n for score, n in _ranked(name, list(roles)) if score >= CLOSE][:NEAREST]
    if not close:
        return "nothing on the page has a close name"
    return "close names with other roles: " + ", ".join(f"{roles[n]} {n!r}" for n in close)


async def _missing(page, step: GoldStep, what: str = "") -> GoldStepError:
    """The error for ``step``'s element not on ``page``: ``what`` (by default, whether no
    element has the role or none of them the name), then what the page has instead."""
    elements = await named_elements(page)
    if not what:
        has_role = any(r == step.role for r, _ in elements) or not elements
        what = f"no {step.role} has this name" if has_role else f"no {step.role} on the page"
    instead = instead_of(elements, step.role, step.name)
    return GoldStepError(f"{step.describe()}: {what}" + (f"; {instead}" if instead else ""))


async def _locate(page, step: GoldStep):
    loc = page.get_by_role(step.role, name=step.name, exact=True)
    try:  # content a page's script adds after its load event: wait for it, as a person would
        await loc.nth(step.nth or 0).wait_for(state="visible", timeout=STEP_TIMEOUT_MS)
    except Exception:  # noqa: BLE001 - counted below: none, or too few, have this role and name
        pass
    count = await loc.count()
    if count == 0:
        raise await _missing(page, step)
    if step.nth is not None:
        if count <= step.nth:
            raise GoldStepError(f"{step.describe()}: only {count} on the page")
        return loc.nth(step.nth)
    if count != 1:
        raise GoldStepError(f"{step.describe()}: {count} elements have this role and name (add nth to choose one)")
    return loc


async def wait_for(page, step: GoldStep, timeout_ms: float = STEP_TIMEOUT_MS) -> None:
    """Wait until a ``wait`` step's element (role and name), ``text`` or ``url`` is on
    ``page``; a ``GoldStepError`` saying what was awaited, and what the page has instead,
    when it is not there within ``timeout_ms``."""
    waited = f"not there after {timeout_ms / 1000:g} s"
    if step.url:
        pattern = url_regex(step.url)
        try:
            await page.wait_for_url(re.compile(pattern) if pattern is not None else step.url, timeout=timeout_ms)
        except Exception:  # noqa: BLE001 - a timeout: said below with where the page is
            raise GoldStepError(f"{step.describe()}: {waited}; the page is at {page.url}") from None
        return
    if step.text:
        loc = page.get_by_text(step.text).first
    else:
        loc = page.get_by_role(step.role, name=step.name, exact=True).nth(step.nth or 0)
    try:
        await loc.wait_for(state="visible", timeout=timeout_ms)
    except Exception:  # noqa: BLE001 - a timeout: said below
        if step.text:
            raise GoldStepError(f"{step.describe()}: {waited} (the page is {page.url})") from None
        raise await _missing(page, step, waited) from None


def answer_next_dialog(page, answer: str) -> None:
    """A dialog step: the dialog the next action raises is answered so (Playwright alone
    dismisses every dialog it is not told about)."""
    page.once("dialog", lambda dialog: dialog.accept() if answer == "accept" else dialog.dismiss())


async def do_step(page, step: GoldStep) -> None:
    """One step; a ``dialog`` step was prepared before the step that raises it (``follow``)."""
    if step.op in ("done", "dialog"):
        return
    if step.op == "wait":
        await wait_for(page, step)
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


async def follow(context, start_url: str, task: Task, setup: Sequence[GoldStep] = ()) -> GoldRun:
    """Open ``start_url`` in a new page of ``context`` and follow ``task``'s gold path (after a
    demonstration's ``setup`` steps)."""
    path = [*setup, *task.gold]
    run = GoldRun(ok=False)
    t0 = time.perf_counter()
    page = await context.new_page()
    page.on("request", lambda request: run.hosts.add(urlsplit(request.url).hostname or urlsplit(request.url).scheme))
    try:
        await page.goto(start_url, wait_until="load", timeout=STEP_TIMEOUT_MS)
        for k, step in enumerate(path):
            if k + 1 < len(path) and path[k + 1].op == "dialog":
                answer_next_dialog(page, path[k + 1].value)
            await do_step(page, step)
            run.steps += 1
        run.ok = True
    except Exception as exc:  # noqa: BLE001 - a step that fails is this run's result, with where it failed
        run.error = f"step {run.steps + 1}: {first_line(exc)}"
    finally:
        await page.close()
        run.hosts -= {"data", "blob"}
        run.seconds = time.perf_counter() - t0
    return run


async def launch_browser(pw):
    from webagent.browser.session import CHROMIUM_ARGS, find_chromium

    return await pw.chromium.launch(executable_path=find_chromium(), headless=True, args=CHROMIUM_ARGS)


@dataclass
class GoldVerdict:
    """A task's or a demonstration's run on a fresh instance, with the app's check before and
    after it (a task's; ``None`` for a demonstration, which has no check)."""

    task_id: str
    run: GoldRun
    reset_s: float = 0.0
    before: bool | None = None
    after: bool | None = None
    why: str = ""

    @property
    def ok(self) -> bool:
        checked = self.before is None or (not self.before and bool(self.after))
        return checked and self.run.ok and not self.run.outside_hosts

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        detail = [] if self.before is None else [f"check before={self.before} after={self.after}"]
        detail += [f"{self.run.steps} steps", f"{self.run.seconds:.1f} s", f"reset {self.reset_s * 1000:.0f} ms"]
        if self.run.error:
            detail.append(self.run.error)
        if self.run.outside_hosts:
            detail.append(f"requested {sorted(self.run.outside_hosts)}")
        if not self.after and self.why:
            detail.append(f"check: {self.why}")
        return f"{mark} {self.task_id}: " + "; ".join(detail)


async def verify(instance: AppInstance, browser, task: Task) -> GoldVerdict:
    """Fresh instance, then the gold path: a task's check false before and true after (with the
    gold answer for an answer task); a demonstration (``Demo``: no check) after its setup steps."""
    reset_s = instance.reset()
    demo = task if isinstance(task, Demo) else None  # a demonstration has no check
    # An answer task changes nothing on the site: "before" is the check of an empty answer.
    before = None if demo is not None else instance.check(task.id, "" if task.answer is not None else None)[0]
    context = await browser.new_context()
    try:
        run = await follow(context, instance.url(task.start), task, demo.setup if demo is not None else ())
    finally:
        await context.close()
    if demo is not None:
        return GoldVerdict(task.id, run, reset_s)
    after, why = instance.check(task.id, task.answer)
    return GoldVerdict(task.id, run, reset_s, before, after, why)


async def _main(app_name: str, task_ids: list[str], app_dirs: list[str], demos: bool = False) -> int:
    from playwright.async_api import async_playwright

    (app,) = load_apps([app_name], extra=app_dirs)
    tasks: list[Task] | list[Demo]
    if demos:
        tasks = [app.demo(t) for t in task_ids] if task_ids else list(app.demos)
        if not tasks:
            raise UserError(f"app {app.name} has no demonstrations (no demos.json in {app.folder})")
    else:
        tasks = [app.task(t) for t in task_ids] if task_ids else list(app.tasks)
    failed = 0
    with AppInstance(app, say=print) as instance:
        print(f"{app.name} at {instance.base_url}")
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            for task in tasks:
                verdict = await verify(instance, browser, task)
                failed += not verdict.ok
                print(verdict.line(), flush=True)
            await browser.close()
    what = "demonstrations run through" if demos else "gold paths reach their check"
    print(f"{len(tasks) - failed}/{len(tasks)} {what}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m webagent.apps.gold", description=__doc__.splitlines()[0])
    parser.add_argument("app")
    parser.add_argument("tasks", nargs="*", help="task ids (demonstration ids with --demos); all when none")
    parser.add_argument("--app-dir", action="append", default=[], help="an app folder outside the package")
    parser.add_argument(
        "--demos", action="store_true", help="follow the demonstrations (demos.json) instead of the tasks; no check"
    )
    args = parser.parse_args(argv)
    try:
        return asyncio.run(_main(args.app, args.tasks, args.app_dir, demos=args.demos))
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
