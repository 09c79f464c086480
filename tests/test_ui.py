"""`webagent ui` in a real browser (issue 48, item 2): Playwright drives Chromium against the
page server, started here as `webagent ui` starts it (``UiServer``), with a scripted model for
the demo shop's order. A run's steps appear live, Stop ends a run with its trace kept, the runs
list opens a run's report, a skill removed from the page is gone from `webagent skills list`;
a request without the token, or a cross-origin one that would change something, is refused;
bad input is one line and loses nothing."""

from __future__ import annotations

import asyncio
import html
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from agent_support import demo_policy
from browser_support import requires_chromium, serve_pages
from click.testing import CliRunner
from playwright.async_api import expect
from test_skills import LOGIN, PARAMS

from webagent.cli import main
from webagent.llm.endpoint import EndpointOptions
from webagent.llm.testing import fake_client
from webagent.replay import store as replay_store
from webagent.skills import store
from webagent.skills.learn import skill_of
from webagent.ui.app import UiServer
from webagent.ui.jobs import UiSettings

PAGES = Path(__file__).parent / "fixtures" / "agent_pages"
SCRIPTED = "scripted:demo-shop"  # model names the form asks for; this test's clients answer them
FOREVER = "scripted:add-one-forever"


def _slow_demo_policy(messages, params, purpose, context=None):
    """The demo shop's scripted model, a little slow per action: a person watching sees each step."""
    if context is not None:
        time.sleep(0.4)
    return demo_policy(messages, params, purpose, context)


def _add_one_forever(messages, params, purpose, context=None):
    """On the counter page: "Add one", again and again (each click changes the page: never stuck)."""
    if context is None:
        return demo_policy(messages, params, purpose, context)
    time.sleep(0.3)
    return {"operation": "CLICK", "element_id": context.control_id("button", "Add one")}


def _client_for(endpoint: EndpointOptions):
    policy = {SCRIPTED: _slow_demo_policy, FOREVER: _add_one_forever}.get(endpoint.model or "")
    return fake_client(policy) if policy else None  # None: the endpoint's own


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    """One page server for the module (each test's WEBAGENT_HOME is its own: read at each request)."""
    settings = UiSettings(runs_dir=tmp_path_factory.mktemp("ui") / "runs", client_for=_client_for)
    server = UiServer(settings).start()
    yield server
    server.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def chromium():
    from playwright.async_api import async_playwright

    from webagent.browser import find_chromium
    from webagent.browser.session import CHROMIUM_ARGS

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS, headless=True)
        yield browser
        await browser.close()


@pytest_asyncio.fixture(loop_scope="module")
async def page(ui, chromium):
    """A fresh browser context (no cookie yet) that opened the printed URL."""
    context = await chromium.new_context(viewport={"width": 1200, "height": 900})
    tab = await context.new_page()
    await tab.goto(ui.url)  # the printed URL: the token becomes the page's cookie
    assert tab.url == ui.base + "/run"
    yield tab
    await context.close()


def in_browser(test):
    """A test that drives Chromium, on the module's event loop (that of ``chromium``)."""
    for mark in (pytest.mark.asyncio(loop_scope="module"), requires_chromium, pytest.mark.browser):
        test = mark(test)
    return test


async def _start_run(page, ui, *, url="", task="", model="", max_steps="", demo=False, save_as=""):
    await page.goto(ui.base + "/run")
    await page.fill("#save_as", save_as)
    if demo:
        await page.check("#demo")
    await page.fill("#url", url)
    await page.fill("#task", task)
    await page.fill("#model", model)
    await page.fill("#max_steps", max_steps)
    await page.click("#start")


@in_browser
async def test_a_demo_shop_run_shows_its_steps_live_opens_from_the_runs_list_and_replays(ui, page):
    await _start_run(page, ui, demo=True, model=SCRIPTED, max_steps="8", save_as="buy-a-book")
    assert "/live/" in page.url
    # three steps on the page while the run is still going: they came as they happened
    await page.wait_for_function(
        "document.querySelectorAll('li.step').length >= 3 && document.getElementById('status').textContent === 'running'",
        timeout=60_000,
    )
    assert await page.get_attribute("#shot", "src")  # the latest screenshot, shown beside the steps
    await page.wait_for_function("document.getElementById('status').textContent !== 'running'", timeout=60_000)
    assert await page.text_content("#status") == "done"
    ended = await page.text_content("#ended") or ""
    assert "demo check: the shop confirmed the order" in ended and "saved as workflow 'buy-a-book'" in ended
    assert await page.is_hidden("#stop")  # nothing left to stop
    steps = await page.locator("li.step").all_text_contents()
    assert len(steps) == 5 and steps[0].startswith("TYPE") and '"Night Trains"' in steps[0]
    shot = await page.get_attribute("#shot", "src")
    assert (await page.request.get(ui.base + shot)).headers["content-type"] == "image/png"

    job = ui.desk.get(page.url.rsplit("/", 1)[1])
    # a click that navigates returns before the next page is there: wait for it, then read it
    await page.click("nav >> text=Runs")
    await page.wait_for_url("**/runs")
    row = page.locator(f"#runs tr[data-run='agent/{job.trace_dir.name}']")
    await expect(row).to_have_count(1)
    await expect(row).to_contain_text("done")
    await row.locator("a.report").click()
    await page.wait_for_url(f"**/runs/agent/{job.trace_dir.name}/")
    await expect(page.locator("h1")).to_contain_text("webagent run: done")  # the run's own report.html

    # The saved workflow, replayed from its page with another name, on the demo shop served again.
    await page.goto(ui.base + "/replay")
    workflow = page.locator("section[data-workflow='buy-a-book']")
    await workflow.locator("input[value='Ada Lovelace']").fill("Grace Hopper")
    await workflow.locator("input[name='demo']").check()
    await workflow.locator("button").click()
    await page.wait_for_function("document.getElementById('status').textContent !== 'running'", timeout=60_000)
    assert await page.text_content("#status") == "done"
    recorded = len(replay_store.load("buy-a-book").steps)
    assert f"replayed {recorded}, repaired 0" in (await page.text_content("#ended") or "")  # no model needed
    assert '"Grace Hopper"' in " ".join(await page.locator("li.step").all_text_contents())


@in_browser
async def test_stop_ends_a_run_with_its_trace_kept_and_a_second_run_meanwhile_is_one_line(ui, page, tmp_path):
    base, stop_pages = serve_pages(tmp_path / "pages", {"counter.html": (PAGES / "counter.html").read_text()})
    try:
        await _start_run(page, ui, url=base + "counter.html", task="add one", model=FOREVER, max_steps="200")
        live = page.url
        jobs = len(ui.desk.jobs)
        await page.wait_for_function("document.querySelectorAll('li.step.ok').length >= 2", timeout=60_000)

        other = await page.context.new_page()  # a second run while this one goes on
        await _start_run(other, ui, demo=True, task="buy a book", model=SCRIPTED)
        assert "is going on" in (await other.text_content("#error") or "")
        assert await other.input_value("#task") == "buy a book"  # the form as it was sent
        assert len(ui.desk.jobs) == jobs  # nothing of it was started

        await page.click("#stop")
        await page.wait_for_function("document.getElementById('status').textContent === 'stopped'", timeout=60_000)
        assert page.url == live
    finally:
        stop_pages()
    job = ui.desk.get(live.rsplit("/", 1)[1])
    assert (job.trace_dir / "steps.jsonl").read_text().strip() and (job.trace_dir / "report.html").is_file()
    assert json.loads((job.trace_dir / "run.json").read_text())["status"] == "interrupted"
    assert "trace: interrupted" in (await page.text_content("#ended") or "")


@in_browser
async def test_a_skill_removed_on_the_page_is_gone_from_skills_list_and_a_bad_import_loses_nothing(ui, page, tmp_path):
    store.add([skill_of(LOGIN, PARAMS, "trace-a", "demonstration")])
    assert "log_in" in CliRunner().invoke(main, ["skills", "list"]).output

    await page.goto(ui.base + "/skills")
    row = page.locator("tr[data-skill='log_in']")
    assert "username, password" in (await row.text_content() or "")
    bad = tmp_path / "old-skills.json"
    bad.write_text(json.dumps({"version": 99, "skills": []}))
    await page.set_input_files("#import-file", str(bad))
    await page.click("#import")
    error = await page.text_content("#error") or ""
    assert "old-skills.json" in error and "version 99" in error and "\n" not in error.strip()
    assert [s.id for s in store.every_skill()] == ["log_in"]  # nothing lost

    async with page.expect_download() as downloading:  # the site's skills file, kept before the removal
        await page.click("a.export")
    exported = tmp_path / "exported.json"
    await (await downloading.value).save_as(exported)

    await row.locator("button.remove").click()
    assert "removed log_in" in (await page.text_content("#said") or "")
    assert await page.locator("tr[data-skill='log_in']").count() == 0
    listed = CliRunner().invoke(main, ["skills", "list"])
    assert listed.exit_code == 0 and "log_in" not in listed.output

    await page.set_input_files("#import-file", str(exported))  # and back, from the exported file
    await page.click("#import")
    assert "imported exported.json: 1 skills kept for 127.0.0.1:8000" in (await page.text_content("#said") or "")
    assert [s.id for s in store.every_skill()] == ["log_in"]


@in_browser
async def test_no_token_no_page_and_a_cross_origin_post_changes_nothing(ui, page, tmp_path):
    store.add([skill_of(LOGIN, PARAMS, "trace-a", "demonstration")])
    assert httpx.get(ui.base + "/skills").status_code == 403
    assert httpx.get(ui.base + "/skills", params={"token": "not-it"}).status_code == 403
    assert httpx.get(ui.base + "/runs", headers={"Host": "evil.test"}, params={"token": ui.token}).status_code == 403

    # A page of another origin, in the browser that holds the token's cookie, posts to the UI.
    other, stop_other = serve_pages(tmp_path / "other", {"attack.html": "<html><body>hi</body></html>"})
    try:
        await page.goto(other + "attack.html")
        sent = await page.evaluate(
            """async (target) => {
                const body = new URLSearchParams({site: "127.0.0.1:8000", skill_id: "log_in"});
                try { await fetch(target, {method: "POST", body, credentials: "include", mode: "no-cors"}); return "sent"; }
                catch (e) { return String(e); }
            }""",
            ui.base + "/skills/remove",
        )
    finally:
        stop_other()
    assert sent == "sent"
    assert [s.id for s in store.every_skill()] == ["log_in"]
    cookie = {"webagent_ui_token": ui.token}
    refused = httpx.post(ui.base + "/skills/remove", cookies=cookie, headers={"Origin": other.rstrip("/")}, data={})
    assert refused.status_code == 403 and "cross-origin" in refused.text
    cross_site = httpx.post(ui.base + "/skills/remove", cookies=cookie, headers={"Sec-Fetch-Site": "cross-site"})
    assert cross_site.status_code == 403


def test_a_url_that_is_not_http_is_one_line_and_starts_nothing(ui):
    jobs, folders = len(ui.desk.jobs), sorted(ui.settings.runs_dir.glob("*/*"))
    cookie = {"webagent_ui_token": ui.token}
    sent = httpx.post(ui.base + "/run", cookies=cookie, data={"url": "ftp://example.test/", "task": "x"})
    assert sent.status_code == 400
    page = html.unescape(sent.text)
    assert "'ftp://example.test/' is not an http(s) address" in page and 'value="ftp://example.test/"' in page
    assert len(ui.desk.jobs) == jobs and sorted(ui.settings.runs_dir.glob("*/*")) == folders


def test_webagent_ui_prints_a_url_with_a_token_every_request_needs(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "webagent.cli", "ui", "--runs-dir", str(tmp_path / "runs")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("webagent ui: open http://127.0.0.1:"), line
        url = line.split("open ", 1)[1].strip()
        base, token = url.split("/?token=")
        for _ in range(100):  # until it listens
            try:
                refused = httpx.get(base + "/runs")
                break
            except httpx.ConnectError:
                time.sleep(0.1)
        assert refused.status_code == 403 and "needs the token" in refused.text
        entered = httpx.get(url)
        assert entered.status_code == 303 and entered.headers["location"] == "/"  # the token leaves the address
        assert f"webagent_ui_token={token}" in entered.headers["set-cookie"]
        assert "samesite=strict" in entered.headers["set-cookie"].lower()
        listed = httpx.get(base + "/runs", cookies={"webagent_ui_token": token})
        assert listed.status_code == 200 and listed.headers["x-frame-options"] == "DENY"
    finally:
        proc.terminate()  # (not SIGINT: a suite run in the background hands its children SIGINT ignored)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise


@in_browser
async def test_teach_shows_each_step_as_recorded_and_then_the_skills_learned(ui, page, monkeypatch):
    from webagent.demo_site import serve_directory

    monkeypatch.setattr(ui.settings, "teach_headless", True)  # the person's window: driven here, as test_skills does
    base, stop_site = serve_directory(Path(__file__).parent / "fixtures" / "teach_site")
    try:
        await page.goto(ui.base + "/teach")
        await page.fill("#url", base + "index.html")
        await page.fill("#task", "Log in as ada and save a note titled Milk")
        await page.click("#start")
        job = ui.desk.get(page.url.rsplit("/", 1)[1])
        for _ in range(300):
            if job.handle is not None or not job.running:
                break
            await asyncio.sleep(0.1)
        assert job.handle is not None, job.events

        async def log_in():  # the person, in the window teach opened
            window = job.handle.page
            await window.get_by_role("textbox", name="User name").fill("ada")
            await window.get_by_label("Password").fill("s3cret-pw")
            await window.get_by_role("button", name="Log in").click()
            await window.wait_for_url("**/notes.html*")

        async def save_note():
            window = job.handle.page
            await window.get_by_role("textbox", name="Title").fill("Milk")
            await window.get_by_role("button", name="Save note").click()
            await window.wait_for_function("document.title.startsWith('Saved')")

        await asyncio.to_thread(job.call, log_in())
        # the steps show while the recording goes on
        await page.wait_for_function(
            "document.querySelectorAll('li.step').length >= 3 && document.getElementById('status').textContent === 'running'",
            timeout=60_000,
        )
        await asyncio.to_thread(job.call, save_note())
        await page.click("#finish")
        await page.wait_for_function("document.getElementById('status').textContent !== 'running'", timeout=60_000)
    finally:
        stop_site()
    assert await page.text_content("#status") == "done"
    steps = " ".join(await page.locator("li.step").all_text_contents())
    assert '"ada"' in steps and "s3cret-pw" not in steps
    learned = await page.text_content("#skills") or ""
    assert 'skill "Log in" (user, password)' in learned and 'skill "Save note" (title)' in learned
    assert {s.name for s in store.every_skill()} == {"Log in", "Save note"}


def test_teach_without_a_display_is_one_line(ui, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    sent = httpx.post(
        ui.base + "/teach", cookies={"webagent_ui_token": ui.token}, data={"url": "http://127.0.0.1:9/", "task": "x"}
    )
    assert sent.status_code == 400 and "this machine has no display (DISPLAY is not set)" in sent.text
