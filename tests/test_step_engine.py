"""The step engine (``webagent.trace.engine``): one ``execute`` for every step done on a page,
one repair policy per caller. Replay may let the model's repair be another operation (the
recorded step is then tried again); a skill may not. A skill that begins with GOTO runs. And
the live step's typed parts: a page with no view raises, the skills' lifecycle is one object.

The page is a fake browser's (no Chromium): two states of one form, the second shown once
"Show form" is clicked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import webagent
from webagent.agent import AgentOptions
from webagent.agent.state import RunState
from webagent.browser import Action, ActionResult
from webagent.browser.models import ElementRef, Observation
from webagent.errors import UserError
from webagent.html import clean_html
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.replay.runner import Replay, ReplayResult
from webagent.skills.lifecycle import SkillLifecycle
from webagent.skills.model import Skill, SkillStart
from webagent.skills.offer import Offer
from webagent.skills.run import run_skill
from webagent.trace.engine import REPLAY, SKILL
from webagent.trace.fingerprint import PageRef, fingerprint_of, url_pattern
from webagent.trace.step import RecordedStep
from webagent.trace.workflow import Workflow
from webagent.trace.writer import TraceWriter

URL = "http://127.0.0.1:8000/notes.html"
HIDDEN = (
    '<html><body backend_node_id="1"><h1 backend_node_id="2">Notes</h1><form backend_node_id="3" action="/save">'
    '<input backend_node_id="4" type="text" name="title" aria-label="Title">'
    '<button backend_node_id="5" type="button">Show form</button>'
    '<button backend_node_id="6" type="submit">Save</button></form></body></html>'
)
SHOWN = HIDDEN.replace(
    '<button backend_node_id="5" type="button">Show form</button>',
    '<input backend_node_id="7" type="text" name="name" aria-label="Name">',
)


def _obs(html: str) -> Observation:
    tags = {"1": "body", "2": "h1", "3": "form", "4": "input", "5": "button", "6": "button", "7": "input"}
    elements = {
        i: ElementRef(target="page", backend_node_id=int(i), tag=t)
        for i, t in tags.items()
        if f'backend_node_id="{i}"' in html
    }
    return Observation(url=URL, title="Notes", raw_html=html, cleaned_html=clean_html(html), elements=elements)


class FakeBrowser:
    """One page: the Name field shows once "Show form" is clicked; every action works."""

    dialog = None

    def __init__(self) -> None:
        self.html = HIDDEN
        self.done: list[Action] = []

    async def observe(self) -> Observation:
        return _obs(self.html)

    async def settle(self) -> None:
        pass

    async def act(self, action: Action, obs: Observation) -> ActionResult:
        self.done.append(action)
        if action.op == "CLICK" and action.element_id == "5":
            self.html = SHOWN
        return ActionResult(ok=True, action=action, url=obs.url)


def _step(op, element_id: str, value: str = "") -> RecordedStep:
    page = PageRef(url=URL, pattern=url_pattern(URL), title="Notes")
    return RecordedStep(op=op, value=value, target=fingerprint_of(_obs(SHOWN), element_id), page=page)


def _save_skill(*steps: RecordedStep) -> Skill:
    """A skill "save" on the notes page, of ``steps``, started where it is called."""
    return Skill(
        id="save",
        name="Save",
        description="",
        site="127.0.0.1:8000",
        start=SkillStart(url=URL, pattern=url_pattern(URL)),
        steps=list(steps),
    )


def _show_form(messages, params, purpose, context):
    """The model's repair of a step whose field is hidden: it clicks "Show form"."""
    assert purpose == "action", purpose
    return {"operation": "CLICK", "element_id": context.control_id("button", "Show form")}


def test_the_policies_say_how_many_repairs_whether_the_page_is_checked_and_whether_the_operation_may_change():
    typed = RecordedStep(op="TYPE", value="Ada")
    assert (REPLAY.attempts, REPLAY.check_page, REPLAY.change_op) == (3, True, True)
    assert (SKILL.attempts, SKILL.check_page, SKILL.change_op) == (1, False, False)
    assert [REPLAY.verdict(typed, op) for op in ("TYPE", "CLICK")] == ["next", "again"]
    assert [SKILL.verdict(typed, op) for op in ("TYPE", "CLICK")] == ["next", "refused"]
    # one hint, one line: what the model reads of the step it repairs
    assert (
        REPLAY.line(typed, "gone") == '(repairing a recorded step: last time: TYPE "Ada" into (no element); now: gone)'
    )
    assert SKILL.line(typed, "gone") == """(a skill's step: last time: TYPE "Ada" into (no element); now: gone)"""


@pytest.mark.asyncio
async def test_replay_lets_a_repair_change_the_operation_and_tries_the_step_again(tmp_path):
    steps = [_step("TYPE", "4", "Milk"), _step("TYPE", "7", "Ada"), _step("CLICK", "6")]
    steps.append(RecordedStep(op="DONE", page=steps[0].page))
    workflow = Workflow(task="Save a note titled Milk by Ada", start_url=URL, steps=steps)
    backend = FunctionBackend(_show_form)
    replay = Replay(
        workflow,
        trace_dir=tmp_path,
        client=fake_client(backend),
        options=AgentOptions(screenshots=False),
    )
    replay.browser, replay.trace = FakeBrowser(), TraceWriter(tmp_path)
    result, done = ReplayResult(status="max_steps"), []
    await replay._steps(result, done)
    assert (result.status, result.replayed, result.repaired, len(backend.requests)) == ("done", 4, 1, 1)
    # the model's CLICK stood in for no step: the recorded TYPE was tried again, and found
    assert [(s.op, s.repaired) for s in done] == [
        ("TYPE", False),
        ("CLICK", True),
        ("TYPE", False),
        ("CLICK", False),
        ("DONE", False),
    ]
    assert [(a.op, a.element_id) for a in replay.browser.done] == [
        ("TYPE", "4"),
        ("CLICK", "5"),
        ("TYPE", "7"),
        ("CLICK", "6"),
    ]


@pytest.mark.asyncio
async def test_a_skill_refuses_a_repair_that_changes_the_operation():
    skill = _save_skill(_step("TYPE", "4", "Milk"), _step("TYPE", "7", "Ada"), _step("CLICK", "6"))
    browser = FakeBrowser()
    asked: list[str] = []

    async def repair(obs, line):
        asked.append(line)
        return Action(op="CLICK", element_id="5")

    ran = await run_skill(browser, await browser.observe(), Offer("save", skill, True), {}, repair=repair)
    assert asked and asked[0].startswith("""(a skill's step: last time: TYPE "Ada" into [textbox] "Name"; now: """)
    assert not ran.result.ok and "the model's repair was CLICK, not TYPE" in (ran.result.error or "")
    assert [(a.op, a.element_id) for a in browser.done] == [("TYPE", "4")]  # the repair was not done


@pytest.mark.asyncio
async def test_a_skill_that_begins_with_goto_runs():
    browser = FakeBrowser()
    browser.html = SHOWN
    goto = RecordedStep(op="GOTO", value=URL, page=PageRef(url=URL, pattern=url_pattern(URL), title="Notes"))
    skill = Skill(
        id="note",
        name="Note",
        description="",
        site="127.0.0.1:8000",
        start=SkillStart(url=URL, pattern=url_pattern(URL), reachable=True),
        steps=[goto, _step("TYPE", "4", "Milk"), _step("CLICK", "6")],
    )
    ran = await run_skill(browser, await browser.observe(), Offer("note", skill, False), {})
    assert ran.result.ok, ran.result.error
    assert [(s.op, s.ok) for s in ran.steps] == [("GOTO", True), ("TYPE", True), ("CLICK", True)]
    assert [a.op for a in browser.done] == ["GOTO", "TYPE", "CLICK"]


def test_a_page_with_no_view_raises_and_reads_as_empty():
    state = RunState("a task", AgentOptions())
    empty = Observation(url=URL, title="", raw_html="", cleaned_html="", elements={})
    with pytest.raises(UserError, match="the HTML is empty"):
        state.view(empty)
    assert (state.lines(empty), state.shown(empty), state.controls(empty)) == ([], [], {})
    snippets, view = state.view(_obs(SHOWN))
    assert snippets and set(view.controls) == set(state.controls(_obs(SHOWN)))


def test_the_skill_lifecycle_keeps_a_skill_that_could_not_start_from_the_offers():
    skill = _save_skill(_step("TYPE", "4", "Milk"), _step("CLICK", "6"))
    life = SkillLifecycle(known=[skill])
    obs = _obs(SHOWN)
    [offer] = life.offer(obs, {}, dialog=False)
    assert life.offer(obs, {}, dialog=True) == []  # a dialog open: nothing offered
    life.acted(offer, True, [], sent_form=True, n=1)
    assert life.done == {"save": 1} and "(you did this at step 1)" in (life.offer(obs, {}, False) and life.block())
    for n in (2, 3):  # could not start (no step done), then a form was sent: offered again, once
        life.acted(offer, False, [], sent_form=False, n=n)
        assert life.offer(obs, {}, dialog=False) == []
        life.acted(None, True, None, sent_form=True, n=n)
        assert bool(life.offer(obs, {}, dialog=False)) is (n == 2)


def test_every_step_done_on_a_page_goes_through_execute():
    """Among the packages that do steps (the live loop, FILL, skills, replay), one function
    calls the browser's ``act``: ``trace.engine.execute``."""
    root = Path(webagent.__file__).parent
    callers = sorted(
        path.relative_to(root).as_posix()
        for package in ("agent", "skills", "replay", "trace")
        for path in (root / package).rglob("*.py")
        if re.search(r"\.act\(", path.read_text(encoding="utf-8"))
    )
    assert callers == ["trace/engine.py"]
