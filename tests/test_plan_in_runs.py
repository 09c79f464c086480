"""A plan over skills in a real browser (issue 47 item 2): on the sign-in page of
fixtures/teach_site, the model names the goal ("Save note", a skill that starts logged in on the
notes page); the program logs in first (the user's name from one short call, the password as
the run's secret), then saves the note. The skills are the ones ``webagent teach`` recorded
(``test_skills_in_runs``), with the start and end fields ``apps learn`` fills (s50-skillstate)
set by hand."""

from __future__ import annotations

import json

import pytest
from agent_support import prompt_of
from browser_support import open_page, requires_chromium
from test_skills_in_runs import PASSWORD, browser, site, skills  # noqa: F401 - the fixtures

from webagent.agent import AgentOptions, run_agent
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.skills.model import SkillEnd
from webagent.trace.writer import TraceWriter

pytestmark = [pytest.mark.browser, requires_chromium, pytest.mark.asyncio(loop_scope="module")]


def _with_ends(skills, site):  # noqa: F811 - the fixture's value
    """The log-in leaves the run on the notes page; the note is saved there, logged in."""
    log_in, note = (s.model_copy(deep=True) for s in skills)
    log_in.start.path, log_in.end = "/index.html", SkillEnd(url=site + "notes.html?user=ada", path="/notes.html")
    note.start.path, note.start.logged_in = "/notes.html", True
    return [log_in, note]


async def test_the_model_names_the_goal_and_the_program_logs_in_first(browser, site, skills, tmp_path):  # noqa: F811
    await open_page(browser, site + "index.html")
    known = _with_ends(skills, site)
    prompts: list[str] = []
    purposes: list[str] = []

    def model(messages, params, purpose, context=None):
        purposes.append(purpose)
        if purpose == "plan_args":
            return {"user": "bo"}
        prompts.append(prompt_of(messages))
        if "Saved:" in context.page or len(prompts) > 2:
            return {"action": {"operation": "DONE", "value": ""}}
        args = {"title": "Eggs", "colour": "Yellow"}
        return {"action": {"operation": "SKILL", "element_id": "save_note", "args": args}}

    trace = TraceWriter(tmp_path / "trace")
    result = await run_agent(
        browser,
        fake_client(FunctionBackend(model)),
        "Log in as bo and save a yellow note titled Eggs",
        options=AgentOptions(max_steps=3, screenshots=False, form_check=False),
        trace=trace,
        skills=known,
        secrets={"password": PASSWORD},
    )
    assert await browser.page.title() == "Saved: Eggs (Yellow) by bo", result
    # offered on the sign-in page, saying what runs first
    assert '[save_note] skill "Save note"' in prompts[0] and "(runs log_in first)" in prompts[0]
    assert purposes == ["action", "plan_args", "action"] and result.steps == 2
    first = json.loads((trace.folder / "steps.jsonl").read_text().splitlines()[0])
    assert [s["op"] for s in first["skill_steps"]] == ["TYPE", "TYPE", "CLICK", "TYPE", "SELECT", "CLICK"]
    assert "ran first: log_in" in first["result_text"]
    assert PASSWORD not in (trace.folder / "steps.jsonl").read_text()
