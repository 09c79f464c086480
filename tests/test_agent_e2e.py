"""End to end: a function-driven fake model completes the demo shop's flow through the
real browser; the trace, screenshots, report.html and Mind2Web records are written and valid."""

import asyncio
import json
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
import pytest_asyncio
from agent_support import demo_policy
from browser_support import requires_chromium
from click.testing import CliRunner
from PIL import Image

from webagent.agent import AgentOptions, run_agent
from webagent.agent.mind2web_export import Mind2WebRecorder
from webagent.agent.report import write_report
from webagent.browser import BrowserSession
from webagent.demo_site import SITE_DIR, demo_task_done, serve_directory
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.trace.writer import OUTLINE, TraceWriter

pytestmark = [pytest.mark.browser, requires_chromium, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser():
    async with BrowserSession() as browser:
        yield browser


@pytest.fixture(scope="module")
def site():
    base, stop = serve_directory(SITE_DIR)
    yield base
    stop()


async def _start(browser, url):
    browser.guard = None
    assert (await browser.open(url)).ok


@pytest.mark.parametrize("lookup", ["always", "auto"])
async def test_fake_model_completes_the_demo_flow(browser, site, tmp_path, lookup):
    await _start(browser, site + "index.html")
    backend = FunctionBackend(demo_policy)
    trace, records = TraceWriter(tmp_path / "trace"), tmp_path / "records"
    recorder = Mind2WebRecorder(records, "Buy Night Trains for Ada Lovelace, express", site, run_id="demo-run")
    result = await run_agent(
        browser,
        fake_client(backend),
        "Buy Night Trains for Ada Lovelace, express",
        options=AgentOptions(lookup=lookup),
        trace=trace,
        recorder=recorder,
    )
    write_report(trace.folder)

    assert (result.status, result.answer, result.steps, result.failed_steps) == ("done", "Your order was placed", 6, 0)
    final = parse_qs(urlsplit(browser.page.url).query)
    assert browser.page.url.startswith(site + "confirm.html")
    assert (final["item"], final["name"], final["shipping"]) == (["b6"], ["Ada Lovelace"], ["express"])
    assert demo_task_done(browser.page.url, site)  # the check `make demo` prints
    assert not demo_task_done(site + "index.html", site)
    assert not demo_task_done(browser.page.url.replace("express", "standard"), site)
    purposes = {r["purpose"] for r in backend.requests}
    # the form check (on by default) asked once before the order was sent
    assert purposes == ({"gist", "lookup", "action", "form_check"} if lookup == "always" else {"action", "form_check"})

    steps = [json.loads(line) for line in (trace.folder / "steps.jsonl").read_text().splitlines()]
    assert [s["action"]["operation"] for s in steps] == ["TYPE", "CLICK", "TYPE", "SELECT", "CLICK", "DONE"]
    for s in steps:
        assert s["url"].startswith(site) and s["title"] and s["snippets"] >= 1 and s["raw_words"] > 0
        assert s["usage"]["calls"] >= 1 and "action_s" in s["times"]
        assert s["action"]["operation"] == "DONE" or s["times"]["observe_s"] > 0  # the page after the action
        assert s["ok"] and s["changed"]
        assert s["result_text"].startswith("ok") or s["result_text"] == "done: Your order was placed"
        if lookup == "always":
            assert s["gists"] and s["lookup"]["pages"] and s["lookup_skipped"] is None
        else:
            assert not s["gists"] and "fits the context" in s["lookup_skipped"]
    assert steps[1]["element"] == "[link]  Night Trains"
    # Per-step usage adds up to the run's.
    assert sum(s["usage"]["calls"] for s in steps) == result.usage["calls"] == len(backend.requests)

    # Screenshots: one per step, the acted-on element outlined in red.
    for s in steps:
        assert (trace.folder / s["screenshot"]).is_file()
    image = Image.open(trace.folder / steps[0]["screenshot"]).convert("RGB")
    reds = int((np.asarray(image) == np.array(OUTLINE, dtype=np.uint8)).all(axis=-1).sum())
    assert reds > 100
    run = json.loads((trace.folder / "run.json").read_text())
    assert run["status"] == "done" and run["steps"] == 6

    html = (trace.folder / "report.html").read_text()
    assert html.count('class="step"') == 6 and html.count("data:image/png;base64,") == 6
    assert "[link]  Night Trains" in html and "<details>" in html and 'src="step_' not in html

    # The records load as Mind2Web tasks, and the positive candidate is on the recorded page.
    from mind2web.data import load_tasks

    tasks = load_tasks(records)
    assert len(tasks) == 1 and tasks[0].split == "live"
    task = tasks[0]
    assert [a.operation.op for a in task.actions] == ["TYPE", "CLICK", "TYPE", "SELECT", "CLICK"]
    assert [a.operation.value for a in task.actions][2:4] == ["Ada Lovelace", "Express (1 day)"]
    for action in task.actions:
        (pos,) = action.pos_candidates
        assert f'backend_node_id="{pos.backend_node_id}"' in action.cleaned_html
        assert pos.attributes["bounding_box_rect"]
    assert task.action_reprs[1] == "[link]  Night Trains -> CLICK"

    # ... and `mind2web eval` scores them (the heuristic fake clicks the first id: wrong, but scored).
    from mind2web.cli import main as m2w

    out = await asyncio.to_thread(
        CliRunner().invoke,
        m2w,
        [
            "eval",
            "--data",
            str(records),
            "--method",
            "raw",
            "--model",
            "fake:heuristic",
            "--out",
            str(tmp_path / "eval"),
            "--no-cache",
        ],
    )
    assert out.exit_code == 0, out.output
    report = json.loads((tmp_path / "eval" / "report.json").read_text())
    raw = report["results"]["live"]["raw"]  # every recorded step scored, none missing
    assert raw["steps_run"] == len(task.actions) == 5 and raw["incomplete_tasks"] == 0


async def test_the_fake_reads_the_step_as_data_so_rewording_the_prompt_breaks_nothing(
    browser, site, tmp_path, monkeypatch
):
    """The function-driven fake takes the step's URL, history and controls as data
    (``LiveContext``), as pydantic-ai's FunctionModel receives AgentInfo: with every prompt's
    "URL", "Current page" and "Previous actions" reworded, it still orders the book."""
    import webagent.web.live_chat as live_chat

    def reworded(text: str) -> str:
        for old, new in (("URL:", "address"), ("Current page", "Now showing"), ("Previous actions", "Done so far")):
            text = text.replace(old, new)
        return text

    render = live_chat.render_prompt  # the full step message (live_chat.full_step_message)
    monkeypatch.setattr(live_chat, "render_prompt", lambda name, **kw: reworded(render(name, **kw)))
    user_turn = live_chat.LiveChat.user_turn
    monkeypatch.setattr(live_chat.LiveChat, "user_turn", lambda self, **kw: reworded(user_turn(self, **kw)))
    await _start(browser, site + "index.html")
    backend = FunctionBackend(demo_policy)
    result = await run_agent(browser, fake_client(backend), "Buy Night Trains for Ada Lovelace, express")
    assert (result.status, result.steps) == ("done", 6)
    asked = [r["messages"][-1]["content"] for r in backend.requests if r["purpose"] == "action"]
    assert asked and not any("URL:" in a or "Previous actions" in a for a in asked)  # the words did change
