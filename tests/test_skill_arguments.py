"""A secret's placeholder is accepted only by a skill parameter of kind "secret", and in a run
a secret parameter takes only a placeholder of a secret the run knows; arguments that cannot
be right are refused before the skill's first step, with one line the model reads (issue 47,
item 7). The page is a fake browser's (no Chromium)."""

from __future__ import annotations

import pytest

from webagent.browser import REDACTED, Action, ActionResult
from webagent.browser.models import ElementRef, Observation
from webagent.html import clean_html
from webagent.skills.arguments import refusal
from webagent.skills.model import Skill, SkillParam, SkillStart, describe
from webagent.skills.offer import Offer
from webagent.skills.run import run_skill
from webagent.trace.fingerprint import PageRef, fingerprint_of, url_pattern
from webagent.trace.step import Op, RecordedStep

URL = "http://127.0.0.1:8000/login.html"
PAGE = (
    '<html><body backend_node_id="1"><form backend_node_id="2" action="/login">'
    '<input backend_node_id="3" type="text" name="project" aria-label="Project">'
    '<input backend_node_id="4" type="password" name="password" aria-label="Password">'
    '<button backend_node_id="5" type="submit">Log in</button></form></body></html>'
)
SECRETS = {"<secret:password>": "hunter2-x"}


def _obs() -> Observation:
    tags = {"1": "body", "2": "form", "3": "input", "4": "input", "5": "button"}
    elements = {i: ElementRef(target="page", backend_node_id=int(i), tag=t) for i, t in tags.items()}
    return Observation(url=URL, title="Log in", raw_html=PAGE, cleaned_html=clean_html(PAGE), elements=elements)


class FakeBrowser:
    dialog = None

    def __init__(self) -> None:
        self.done: list[Action] = []

    async def observe(self) -> Observation:
        return _obs()

    async def settle(self) -> None:
        pass

    async def act(self, action: Action, obs: Observation) -> ActionResult:
        self.done.append(action)
        return ActionResult(ok=True, action=action, url=obs.url)


def _step(op: Op, element_id: str, value: str = "", param: str | None = None) -> RecordedStep:
    page = PageRef(url=URL, pattern=url_pattern(URL), title="Log in")
    return RecordedStep(op=op, value=value, param=param, target=fingerprint_of(_obs(), element_id), page=page)


SKILL = Skill(
    id="log_in",
    name="Log in",
    description="",
    site="127.0.0.1:8000",
    start=SkillStart(url=URL, pattern=url_pattern(URL)),
    params=[
        SkillParam(name="project", kind="text", example="Apollo"),
        SkillParam(name="password", kind="secret", source="password"),
    ],
    steps=[
        _step("TYPE", "3", "Apollo", "project"),
        _step("TYPE", "4", REDACTED, "password"),
        _step("CLICK", "5"),
    ],
)


def _reveal(value: str) -> str:
    return SECRETS.get(value, value)


async def _run(args: dict[str, str], reveal=_reveal):
    browser = FakeBrowser()
    ran = await run_skill(browser, await browser.observe(), Offer("log_in", SKILL, True), args, reveal)
    return ran, browser.done


@pytest.mark.asyncio
async def test_a_placeholder_given_to_a_parameter_that_is_not_a_secret_is_refused_before_any_step():
    for placeholder in (REDACTED, "<secret:password>"):
        ran, done = await _run({"project": placeholder, "password": "<secret:password>"})
        assert not ran.result.ok and done == [] and ran.steps == []
        error = ran.result.error or ""
        assert error.startswith('skill "Log in" was not run: project is not a password') and "\n" not in error


@pytest.mark.asyncio
async def test_a_secret_parameter_in_a_run_takes_only_a_placeholder_the_run_knows():
    for given in ("hunter2-x", REDACTED, "<secret:pin>", "Apollo"):
        ran, done = await _run({"project": "Zeus", "password": given})
        assert not ran.result.ok and done == [], given
        assert "password is a password: it takes only a secret's placeholder" in (ran.result.error or "")
        assert "hunter2-x" not in (ran.result.error or "")  # a password given as itself is never shown
    ran, done = await _run({"project": "Zeus", "password": "<secret:password>"})
    assert ran.result.ok, ran.result.error
    assert [(a.op, a.value) for a in done] == [("TYPE", "Zeus"), ("TYPE", "hunter2-x"), ("CLICK", None)]


def test_given_directly_a_secret_parameter_takes_the_password_itself_never_a_placeholder():
    assert refusal(SKILL, {"project": "Zeus", "password": "hunter2-x"}) is None
    assert "give the password itself" in (refusal(SKILL, {"project": "Zeus", "password": REDACTED}) or "")
    assert "project is not a password" in (refusal(SKILL, {"project": REDACTED, "password": "x"}) or "")


def test_a_skill_line_shows_parameters_as_placeholders_and_constants_as_what_the_skill_does():
    page = PageRef(url=URL, pattern=url_pattern(URL), title="Log in")
    constant = RecordedStep(op="TYPE", value="Apollo", target=fingerprint_of(_obs(), "3"), page=page)
    steps = [constant, *SKILL.steps[1:]]
    line = SKILL.model_copy(update={"description": describe(steps)}).line("log_in")
    assert line == (
        '[log_in] skill "Log in" (project, password): types "Apollo" into Project, Password=<password>, clicks "Log in"'
    )
    assert "Project=" not in line  # no name=value a model would copy into its arguments
    assert describe(SKILL.steps) == 'Project=<project>, Password=<password>, clicks "Log in"'  # never its example
