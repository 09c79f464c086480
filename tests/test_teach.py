"""Teach by showing (issue 34, item 1): a person does a task in the agent's browser; every
click, select, the final value typed into each field, a form sent with Enter and a page the
person opened become a run's steps, with the element fingerprints a run's steps carry, and
the recording replays without a model, with new values.

The "person" is Playwright driving the teach browser by role and name. The site
(``fixtures/teach_site``) signs in with a GET form, so the password would reach the URL: no
file the recording writes may hold it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from browser_support import requires_chromium
from click.testing import CliRunner

from webagent.agent.teach import Teach
from webagent.api import replay
from webagent.browser import REDACTED
from webagent.cli import main
from webagent.demo_site import serve_directory
from webagent.trace import workflow as W

pytestmark = [pytest.mark.browser, requires_chromium]
SITE = Path(__file__).parent / "fixtures" / "teach_site"
PASSWORD = "s3cret-pw"
TASK = "Log in as ada and save a yellow pinned note titled Milk"


@pytest.fixture(scope="module")
def site():
    base, stop = serve_directory(SITE)
    yield base
    stop()


def _files_hold(folder: Path, text: str) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


async def _log_in(page, enter: bool = False) -> None:
    await page.get_by_role("textbox", name="User name").fill("ada")
    await page.get_by_label("Password").fill(PASSWORD)
    if enter:
        await page.get_by_label("Password").press("Enter")
    else:
        await page.get_by_role("button", name="Log in").click()
    await page.wait_for_url("**/notes.html*")


@pytest.mark.asyncio
async def test_a_demonstration_is_recorded_as_a_run_and_replays_with_new_values(site, tmp_path):
    async with Teach(site + "index.html", TASK, tmp_path / "taught", headed=False) as teach:
        page = teach.page
        await _log_in(page)
        await page.get_by_role("textbox", name="Title").fill("Milk")
        await page.get_by_role("combobox", name="Colour").select_option("Yellow")
        await page.get_by_role("checkbox", name="Pin to the top").click()  # its label's click counts once
        await page.get_by_role("button", name="Save note").click()
        await page.wait_for_function("document.title.startsWith('Saved')")
        assert await page.title() == "Saved: Milk (Yellow, pinned) by ada"
        folder = await teach.finish()
    steps = W.read_records(folder)
    assert [(s.action.operation, s.action.value) for s in steps if s.action] == [
        ("TYPE", "ada"),
        ("TYPE", REDACTED),
        ("CLICK", ""),
        ("TYPE", "Milk"),
        ("SELECT", "Yellow"),
        ("CLICK", ""),
        ("CLICK", ""),
    ]
    assert all(s.target and s.target.tag in ("input", "button", "select") for s in steps)
    assert [s.element for s in steps][:3] == [
        "[text field]  User name",
        "[password field]  Password",
        "[submit button]  Log in",
    ]
    assert _files_hold(folder, PASSWORD) == []  # not in the steps, not in the URL the run ended on

    workflow = W.from_trace(folder)
    assert workflow.params["password"]["default"] is None  # a placeholder, given at replay
    assert workflow.params["title"]["default"] == "Milk"
    again = await replay(folder, {"password": PASSWORD, "title": "Eggs"}, no_model=True, trace_dir=tmp_path / "again")
    assert again.status == "done" and again.model_calls == 0 and again.repaired == 0
    assert again.final_title == "Saved: Eggs (Yellow, pinned) by ada"
    assert _files_hold(tmp_path / "again", PASSWORD) == []


@pytest.mark.asyncio
async def test_a_form_sent_with_enter_and_a_page_the_person_opened_are_steps(site, tmp_path):
    async with Teach(site + "index.html", "Log in as ada", tmp_path / "taught", headed=False) as teach:
        await _log_in(teach.page, enter=True)
        await teach.page.goto(site + "index.html")  # the person types an address
        await teach.page.wait_for_load_state("load")
        folder = await teach.finish()
    steps = W.read_records(folder)
    ops = [(s.action.operation, s.action.press_enter) for s in steps if s.action]
    assert ops == [("TYPE", False), ("TYPE", True), ("GOTO", False)]
    assert steps[2].action is not None and steps[2].action.value == site + "index.html"


@pytest.mark.asyncio
async def test_a_gesture_keeps_its_order_when_the_recorder_is_slow(site, tmp_path):
    """A select then a click, made while the recorder is still busy with the field the select
    left (a machine under load): the steps are in the order the person made them."""
    async with Teach(
        site + "notes.html?user=ada", "Save a pink note titled Milk", tmp_path / "t", headed=False
    ) as teach:
        assert teach.recorder is not None
        page = teach.page
        await page.get_by_role("textbox", name="Title").fill("Milk")  # still being edited
        async with teach.recorder._lock:  # the recorder busy: each event waits its turn
            await page.get_by_role("combobox", name="Colour").select_option("Pink")  # flushes Title
            await page.get_by_role("button", name="Save note").click(no_wait_after=True)
            await asyncio.sleep(0.5)  # both events sent while the first still waits
        await teach.settle()
        folder = await teach.finish()
    steps = W.read_records(folder)
    assert [s.action.operation for s in steps if s.action] == ["TYPE", "SELECT", "CLICK"]


def test_a_recording_with_no_steps_is_one_line_and_writes_nothing(site, tmp_path):
    out = tmp_path / "nothing"
    result = CliRunner().invoke(
        main, ["teach", site + "index.html", "Do nothing", "--headless", "--trace-dir", str(out)], input="\n"
    )
    assert result.exit_code != 0
    assert result.output.strip().splitlines()[-1] == (
        "error: the recording has no steps: nothing was clicked, typed or chosen; nothing written"
    )
    assert not (out / "steps.jsonl").exists()


def test_teach_without_a_display_says_so_in_one_line(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    result = CliRunner().invoke(main, ["teach", "http://127.0.0.1:9/", "Do it"])
    assert result.exit_code != 0 and "no display" in result.output
    assert "Traceback" not in result.output
