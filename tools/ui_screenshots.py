"""The screenshots of docs/ui.md: each page of ``webagent ui``, taken with Playwright in
Chromium against a page server started here, with the demo shop's scripted model (the test
suite's, ``tests/agent_support.demo_policy``) so that no model is needed.

    .venv/bin/python -m tools.ui_screenshots            # writes docs/img/ui/*.png

A private WEBAGENT_HOME and runs folder (temporary) hold the run, the workflow and the skills shown.
"""

from __future__ import annotations

import asyncio
import functools
import os
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "img" / "ui"
SCRIPTED = "scripted:demo-shop"


@functools.cache
def _demo_policy():
    """The test suite's scripted model of the demo shop (tests/agent_support.py), loaded by its path."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("agent_support", ROOT / "tests" / "agent_support.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.demo_policy


def _slow(messages, params, purpose, context=None):
    if context is not None:
        time.sleep(1.0)  # a step at a time, for the live page's picture
    return _demo_policy()(messages, params, purpose, context)


async def _shoot(server) -> None:
    base, url = server.base, server.url
    from playwright.async_api import async_playwright

    from webagent.browser import find_chromium
    from webagent.browser.session import CHROMIUM_ARGS

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS, headless=True)
        page = await (await browser.new_context(viewport={"width": 1200, "height": 820})).new_page()
        await page.goto(url)
        await page.check("#demo")
        await page.fill("#model", SCRIPTED)
        await page.fill("#max_steps", "8")
        await page.fill("#save_as", "night-trains-express")
        await page.screenshot(path=str(OUT / "new-run.png"))
        await page.click("#start")
        await page.wait_for_function("document.querySelectorAll('li.step').length >= 3", timeout=120_000)
        await page.screenshot(path=str(OUT / "live-run.png"))
        await page.wait_for_function("document.getElementById('status').textContent !== 'running'", timeout=120_000)
        await page.screenshot(path=str(OUT / "run-ended.png"))
        for name in ("runs", "skills", "replay"):
            await page.goto(f"{base}/{name}")
            await page.screenshot(path=str(OUT / f"{name}.png"))
        await page.goto(f"{base}/skills")
        await page.locator("tr[data-skill] a").first.click()
        await page.screenshot(path=str(OUT / "skill.png"))
        await _teach(page, server)
        await browser.close()


async def _teach(page, server) -> None:
    """Teach on the test site of tests/test_skills.py; the "window" (headless here) driven as a person would."""
    from webagent.demo_site import serve_directory

    server.settings.teach_headless = True
    site, stop_site = serve_directory(ROOT / "tests" / "fixtures" / "teach_site")
    try:
        await page.goto(f"{server.base}/teach")
        await page.fill("#url", site + "index.html")
        await page.fill("#task", "Log in as ada and save a note titled Milk")
        await page.screenshot(path=str(OUT / "teach.png"))
        await page.click("#start")
        job = server.desk.get(page.url.rsplit("/", 1)[1])
        while job.handle is None and job.running:
            await asyncio.sleep(0.1)

        async def log_in_and_save():
            window = job.handle.page
            await window.get_by_role("textbox", name="User name").fill("ada")
            await window.get_by_label("Password").fill("s3cret-pw")
            await window.get_by_role("button", name="Log in").click()
            await window.wait_for_url("**/notes.html*")
            await window.get_by_role("textbox", name="Title").fill("Milk")
            await window.get_by_role("button", name="Save note").click()
            await window.wait_for_function("document.title.startsWith('Saved')")

        await asyncio.to_thread(job.call, log_in_and_save())
        await page.wait_for_function("document.querySelectorAll('li.step').length >= 5", timeout=60_000)
        await page.screenshot(path=str(OUT / "teach-live.png"))
        await page.click("#finish")
        await page.wait_for_function("document.getElementById('status').textContent !== 'running'", timeout=60_000)
        await page.screenshot(path=str(OUT / "teach-done.png"))
    finally:
        stop_site()


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="webagent-ui-shots-"))
    os.environ["WEBAGENT_HOME"] = str(tmp / "home")
    from webagent.api import Agent
    from webagent.llm.testing import fake_client
    from webagent.skills import store
    from webagent.skills.learn import from_recording
    from webagent.ui.app import UiServer
    from webagent.ui.jobs import UiSettings

    runs = tmp / "runs"
    # A workflow to replay and the skills learned from it: the demo order, done once before.
    first = Agent("", demo=True, llm=fake_client(_slow), max_steps=8, trace_dir=runs / "agent" / "first-order")
    first.save_as, first.params = "buy-a-book", {"name": "Ada Lovelace"}
    done = first.run_sync()
    assert done.ok, done
    store.add(from_recording(runs / "agent" / "first-order"))
    OUT.mkdir(parents=True, exist_ok=True)
    server = UiServer(
        UiSettings(runs_dir=runs, client_for=lambda e: fake_client(_slow) if e.model == SCRIPTED else None)
    )
    server.start()
    try:
        asyncio.run(_shoot(server))
    finally:
        server.stop()
    print(f"wrote {', '.join(sorted(p.name for p in OUT.glob('*.png')))} to {OUT}")


if __name__ == "__main__":
    main()
