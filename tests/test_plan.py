"""A plan over skills (``webagent.skills.plan``, issue 47 item 2): the model chooses the goal
skill, the program finds the skills that lead from where the run stands to its start (log in,
open the record), runs them, then the goal, and hands control back; a skill that could not start
re-plans from where the run stands. Arguments of a skill on the way come from the goal's by
name, the run's secrets as placeholders, or one short model call; never a demonstration's
example value.

The site is a fake browser's (no Chromium), three pages: a log-in form, a ticket list (staff
only: a guest who opens it is sent to the log-in) with a "Number" box that opens a ticket, and
a ticket's page with a Status select. The skills are built by hand with the start and end
fields ``apps learn`` fills (s50-skillstate)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from webagent.agent import AgentOptions, run_agent
from webagent.browser import Action, ActionResult
from webagent.browser.models import ElementRef, Observation
from webagent.html import clean_html
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.skills.lifecycle import PlannedOffer, SkillLifecycle
from webagent.skills.model import Skill, SkillEnd, SkillParam, SkillStart, at_path
from webagent.skills.offer import Offer
from webagent.skills.plan import Where, given_arguments, plan, reachable_from, run_plan
from webagent.trace.fingerprint import PageRef, fingerprint_of, url_pattern
from webagent.trace.step import Op, RecordedStep
from webagent.web.agent_view import Control

SITE = "http://127.0.0.1:8000"
HOME, LOGIN, LIST = f"{SITE}/", f"{SITE}/login/", f"{SITE}/tickets/"
PASSWORD = "pw-1"
PAGES = {
    "/": '<html><body backend_node_id="1"><h1 backend_node_id="9">Help desk</h1></body></html>',
    "/login/": (
        '<html><body backend_node_id="1"><form backend_node_id="10" action="/login/">'
        '<input backend_node_id="2" type="text" name="user" aria-label="User">'
        '<input backend_node_id="3" type="password" name="pw" aria-label="Password">'
        '<button backend_node_id="4" type="submit">Log in</button></form></body></html>'
    ),
    "/tickets/": (
        '<html><body backend_node_id="1"><form backend_node_id="11" action="/tickets/">'
        '<input backend_node_id="5" type="text" name="q" aria-label="Number">'
        '<button backend_node_id="6" type="submit">Open</button></form></body></html>'
    ),
    "ticket": (
        '<html><body backend_node_id="1"><form backend_node_id="12" action="/save/">'
        '<select backend_node_id="7" name="status" aria-label="Status"><option backend_node_id="13">open</option>'
        '<option backend_node_id="14">closed</option></select>'
        '<button backend_node_id="8" type="submit">Save</button></form></body></html>'
    ),
}
STAFF = ("/tickets/",)  # paths a guest is sent away from (to the log-in)


def _page(url: str) -> str:
    path = urlsplit(url).path
    return PAGES.get(path) or PAGES["ticket"]


def _obs(url: str) -> Observation:
    html = _page(url)
    elements = {
        i: ElementRef(target="page", backend_node_id=int(i), tag=tag)
        for tag, i in re.findall(r'<(\w+) backend_node_id="(\d+)"', html)
    }
    return Observation(url=url, title="Help desk", raw_html=html, cleaned_html=clean_html(html), elements=elements)


class FakeSite:
    """The three pages; a log-in with the right password lets the staff pages open."""

    dialog = None

    def __init__(self, url: str = HOME, logged_in: bool = False) -> None:
        self.url, self.logged_in = url, logged_in
        self.typed: dict[str, str] = {}
        self.done: list[tuple[str, str | None, str | None]] = []
        self.saved: tuple[str, str] | None = None

    def _go(self, url: str) -> None:
        staff = urlsplit(url).path.startswith(STAFF)
        self.url = LOGIN if staff and not self.logged_in else url

    async def observe(self, **_) -> Observation:
        return _obs(self.url)

    async def settle(self, page=None) -> None:
        pass

    async def quiet(self, *_, **__) -> bool:
        return True

    async def act(self, action: Action, obs: Observation | None = None) -> ActionResult:
        self.done.append((action.op, action.element_id, action.value))
        if action.op == "GOTO":
            self._go(action.value or "")
        elif action.op in ("TYPE", "SELECT"):
            self.typed[action.element_id or ""] = action.value or ""
        elif action.op == "CLICK" and action.element_id == "4":
            self.logged_in = self.typed.get("3") == PASSWORD
            self._go(LIST if self.logged_in else LOGIN)
        elif action.op == "CLICK" and action.element_id == "6":
            self._go(f"{LIST}{self.typed.get('5', '')}/")
        elif action.op == "CLICK" and action.element_id == "8":
            self.saved = (self.url, self.typed.get("7", "open"))
        return ActionResult(ok=True, action=action, url=self.url)


def _step(url: str, op: Op, element_id: str, value: str = "", param: str | None = None) -> RecordedStep:
    page = PageRef(url=url, pattern=url_pattern(url), title="Help desk")
    return RecordedStep(op=op, value=value, param=param, target=fingerprint_of(_obs(url), element_id), page=page)


def _skill(id: str, start: SkillStart, steps, params=(), end: SkillEnd | None = None) -> Skill:
    return Skill(
        id=id,
        name=id.replace("_", " ").capitalize(),
        description="",
        site="127.0.0.1:8000",
        start=start,
        steps=list(steps),
        params=list(params),
        end=end,
    )


def _skills() -> dict[str, Skill]:
    """log_in (a stable address) -> the list; open_ticket (the list, staff) -> a ticket's page;
    set_status (a ticket's page, a template: never opened by address)."""
    ticket = f"{LIST}14/"
    log_in = _skill(
        "log_in",
        SkillStart(url=LOGIN, pattern=url_pattern(LOGIN), path="/login/", reachable=True),
        [
            _step(LOGIN, "TYPE", "2", "ada", "user"),
            _step(LOGIN, "TYPE", "3", "********", "password"),
            _step(LOGIN, "CLICK", "4"),
        ],
        [SkillParam(name="user", kind="text", example="ada"), SkillParam(name="password", kind="secret")],
        SkillEnd(url=LIST, path="/tickets/"),
    )
    open_ticket = _skill(
        "open_ticket",
        SkillStart(url=LIST, pattern=url_pattern(LIST), path="/tickets/", reachable=True, logged_in=True),
        [_step(LIST, "TYPE", "5", "14", "number"), _step(LIST, "CLICK", "6")],
        [SkillParam(name="number", kind="text", example="14")],
        SkillEnd(url=ticket, path="/tickets/*/"),
    )
    set_status = _skill(
        "set_status",
        SkillStart(url=ticket, pattern=url_pattern(ticket), path="/tickets/*/", logged_in=True),
        [_step(ticket, "SELECT", "7", "closed", "status"), _step(ticket, "CLICK", "8")],
        [SkillParam(name="status", kind="select", example="closed")],
    )
    return {s.id: s for s in (log_in, open_ticket, set_status)}


def _ids(chain) -> list[str] | None:
    return None if chain is None else [s.id for s in chain]


def test_at_path_matches_a_template_segment_by_segment():
    assert at_path("/tickets/*/", f"{LIST}7/?x=1") and at_path("/tickets/", LIST)
    assert not at_path("/tickets/*/", LIST) and not at_path("/tickets/*/", f"{LIST}7/edit/")
    assert not at_path("/*", HOME)  # a varying segment is never an empty one


def test_the_plan_is_the_shortest_chain_of_learned_ends_and_starts_to_the_goals_start():
    skills = _skills()
    known, goal = list(skills.values()), skills["set_status"]
    assert _ids(plan(goal, known, Where(HOME, logged_in=False))) == ["log_in", "open_ticket"]
    assert _ids(plan(goal, known, Where(LOGIN, logged_in=False))) == ["log_in", "open_ticket"]
    assert _ids(plan(goal, known, Where(HOME, logged_in=True))) == ["open_ticket"]
    # not known whether the run is logged in: the goal's word is taken (no log-in run for nothing)
    assert _ids(plan(goal, known, Where(HOME))) == ["open_ticket"]
    assert _ids(plan(goal, known, Where(f"{LIST}3/", logged_in=True))) == []  # on a ticket's page: at its start
    # a start with a varying segment is never opened by address (another record's page: a trap)
    assert _ids(plan(goal, [goal], Where(HOME, logged_in=True))) is None
    # a skill whose end is not known leads nowhere; without a log-in, a staff start is not reached
    no_end = skills["open_ticket"].model_copy(update={"end": None})
    assert _ids(plan(goal, [skills["log_in"], no_end, goal], Where(HOME, logged_in=True))) is None
    assert _ids(plan(goal, [skills["open_ticket"], goal], Where(HOME, logged_in=False))) is None
    # a skill that opens one record whatever it is given (a click on the demonstration's row) does
    # not lead to the goal's record
    fixed = skills["open_ticket"].model_copy(update={"params": []})
    assert _ids(plan(goal, [fixed, goal], Where(HOME, logged_in=True))) is None
    # a form of more values that ends on a ticket's page (a new ticket) is never run to get there
    title = SkillParam(name="title", kind="text")
    new = skills["open_ticket"].model_copy(update={"id": "new_ticket", "params": [title, title.model_copy()]})
    assert _ids(plan(goal, [new, goal], Where(HOME, logged_in=True))) is None
    assert _ids(plan(goal, [new, skills["open_ticket"], goal], Where(HOME, logged_in=True))) == ["open_ticket"]
    # the menu's test: the goal is offered where a plan reaches it
    assert reachable_from(known, Where(HOME, logged_in=False))(goal)
    assert not reachable_from([goal], Where(HOME, logged_in=False))(goal)


def test_the_arguments_on_the_way_come_from_the_goal_by_name_and_the_secrets_never_an_example():
    skills = _skills()
    assert given_arguments(skills["log_in"], {"user": "bo", "status": "closed"}, ["password"]) == (
        {"user": "bo", "password": "<secret:password>"},
        [],
    )
    # no argument of its name and no secret: missing (the example "ada", "14" never used)
    assert given_arguments(skills["log_in"], {}, []) == ({}, ["user", "password"])
    assert given_arguments(skills["open_ticket"], {"status": "closed"}, ["password"]) == ({}, ["number"])


@pytest.mark.asyncio
async def test_a_goal_runs_after_the_skills_its_plan_puts_first_and_a_failed_start_re_plans():
    """Not known to be logged in, the plan opens the ticket list first; the list sends the guest
    to the log-in (open_ticket cannot start): the run is now known logged out, the plan runs
    again from where the run stands (log in, open the ticket), then the goal."""
    skills = _skills()
    site = FakeSite(HOME)
    asked: list[tuple[str, list[str], str]] = []

    async def ask(chain, names, goal):
        asked.append(([s.id for s in chain], names, goal.id))
        return {"number": "7"}

    goal = skills["set_status"]
    went = await run_plan(
        site,
        await site.observe(),
        Offer("set_status", goal, False),
        {"status": "closed", "user": "bo"},
        list(skills.values()),
        None,
        secrets=["password"],
        reveal=lambda v: PASSWORD if v == "<secret:password>" else v,
        ask=ask,
    )
    assert went.run.result.ok, went.run.result.error
    assert site.saved == (f"{LIST}7/", "closed")
    assert [s.id for s in went.ran] == ["log_in", "open_ticket", "set_status"] and went.logged_in is True
    assert "ran first: log_in, open_ticket" in (went.run.result.note or "")
    # one short call for what nothing else gave (not again when the plan ran again)
    assert asked == [(["open_ticket"], ["number"], "set_status")]
    typed = [(op, i, v) for op, i, v in site.done if op in ("TYPE", "SELECT")]
    assert typed == [("TYPE", "2", "bo"), ("TYPE", "3", PASSWORD), ("TYPE", "5", "7"), ("SELECT", "7", "closed")]
    # the first open_ticket could not start: the run went back where it was, then re-planned
    assert [v for op, _, v in site.done if op == "GOTO"] == [LIST, HOME, LOGIN]


@pytest.mark.asyncio
async def test_a_value_the_task_does_not_give_stops_the_plan_before_the_skill_that_needs_it():
    skills = _skills()
    site = FakeSite(HOME, logged_in=True)

    async def ask(chain, names, goal):
        return {n: "" for n in names}  # the task does not say

    went = await run_plan(
        site,
        await site.observe(),
        Offer("set_status", skills["set_status"], False),
        {"status": "closed"},
        list(skills.values()),
        True,
        secrets=[],
        ask=ask,
    )
    assert not went.run.result.ok and site.done == []
    assert (
        went.run.result.error == 'skill "Set status" needs "Open ticket" first, and the task does not give its number'
    )
    # the ticket's number not given: the log-in before it is not run either
    guest = FakeSite(HOME)

    async def ask_user_only(chain, names, goal):
        return {"user": "bo", "number": ""}

    went = await run_plan(
        guest,
        _obs(HOME),
        Offer("set_status", skills["set_status"], False),
        {"status": "closed"},
        list(skills.values()),
        False,
        secrets=["password"],
        ask=ask_user_only,
    )
    assert "does not give its number" in (went.run.result.error or "") and guest.done == []
    # no secret: a log-in on the way is not run, and a password is never asked of the model
    asked: list[list[str]] = []

    async def ask_all(chain, names, goal):
        asked.append(names)
        return {n: "x" for n in names}

    went = await run_plan(
        FakeSite(HOME),
        _obs(HOME),
        Offer("set_status", skills["set_status"], False),
        {"status": "closed"},
        list(skills.values()),
        False,
        secrets=[],
        ask=ask_all,
    )
    assert (
        went.run.result.error == 'skill "Set status" needs "Log in" first, and the run has no secret for its password'
    )
    assert asked == []


def test_a_skill_a_plan_reaches_is_offered_saying_which_skills_run_first():
    skills = _skills()
    # with no password to give, neither the log-in nor what a plan reaches through it is offered
    none = {o.label for o in SkillLifecycle(known=list(skills.values())).offer(_obs(LOGIN), {}, dialog=False)}
    assert not none & {"log_in", "set_status", "open_ticket"}, none
    life = SkillLifecycle(known=list(skills.values()), secrets=["password"])
    offered = life.offer(_obs(LOGIN), {}, dialog=False)
    assert life.logged_in is False  # the page offers a log-in here
    lines = {o.label: o.line() for o in offered}
    assert isinstance(life.offers["set_status"], PlannedOffer)
    assert lines["set_status"].endswith("(runs log_in, open_ticket first)")
    # a stable address the run could open, but logged out: its line says the log-in runs first
    assert lines["open_ticket"].endswith("(runs log_in first)") and "opens" not in lines["open_ticket"]
    life.plan = False  # --no-plan: only what the page offers
    assert "set_status" not in {o.label for o in life.offer(_obs(LOGIN), {}, dialog=False)}


def _goal_model(plan_on: bool, calls: list[str]):
    """A perfect model: with a plan, it names the goal; without, each skill of the chain in turn."""

    def model(messages, params, purpose, context=None):
        calls.append(purpose)
        if purpose == "plan_args":
            return {"user": "bo", "number": "7"}
        offered = set(context.skills)
        page = context.page
        if "Saved" in page or len(calls) > 8:
            return {"action": {"operation": "DONE", "value": ""}}
        if "set_status" in offered and (plan_on or "Status" in page):
            return {"action": {"operation": "SKILL", "element_id": "set_status", "args": {"status": "closed"}}}
        if "open_ticket" in offered and "Number" in page:
            return {"action": {"operation": "SKILL", "element_id": "open_ticket", "args": {"number": "7"}}}
        args = {"user": "bo", "password": "<secret:password>"}
        return {"action": {"operation": "SKILL", "element_id": "log_in", "args": args}}

    return model


@pytest.mark.parametrize("plan_on", [True, False])
@pytest.mark.asyncio
async def test_with_a_plan_the_model_names_the_goal_once_and_the_program_does_the_chain(plan_on):
    """The measure of the design (one goal per step, the chain by the program) against the model
    choosing every skill of the chain itself: model calls and steps on a perfect model."""
    skills = _skills()
    site = FakeSite(LOGIN)
    calls: list[str] = []

    async def saved(n):
        return "Saved" if site.saved else None

    result = await run_agent(
        site,
        fake_client(FunctionBackend(_goal_model(plan_on, calls))),
        "Log in as bo and close ticket 7",
        options=AgentOptions(max_steps=6, screenshots=False, form_check=False, plan=plan_on),
        skills=list(skills.values()),
        secrets={"password": PASSWORD},
        after_step=saved,
    )
    assert site.saved == (f"{LIST}7/", "closed"), result
    # with a plan: 1 step, 2 calls (the goal, the ticket's number); without: 3 steps, 3 calls
    assert (result.steps, len(calls)) == ((1, 2) if plan_on else (3, 3)), calls


@pytest.mark.asyncio
async def test_a_goal_offered_here_that_could_not_start_is_planned_once_the_run_knows_it_is_logged_out():
    skills = _skills()
    site = FakeSite(HOME)

    async def ask(chain, names, goal):
        return {"user": "bo", "number": "7"}

    went = await run_plan(
        site,
        _obs(HOME),
        Offer("set_status", skills["set_status"], True),  # as if the page held its first element
        {"status": "closed"},
        list(skills.values()),
        None,
        secrets=["password"],
        reveal=lambda v: PASSWORD if v == "<secret:password>" else v,
        ask=ask,
    )
    assert went.run.result.ok and site.saved == (f"{LIST}7/", "closed"), went.run.result.error
    assert [s.id for s in went.ran] == ["log_in", "open_ticket", "set_status"]
    # no secret to log in with: the goal's own failure is kept, and why no plan could mend it
    went = await run_plan(
        FakeSite(HOME),
        _obs(HOME),
        Offer("set_status", skills["set_status"], True),
        {"status": "closed"},
        list(skills.values()),
        None,
        secrets=[],
        ask=ask,
    )
    error = went.run.result.error or ""
    assert error.startswith('skill "Set status" stopped at its step 1 of 2'), error
    assert error.endswith('; then skill "Set status" needs "Log in" first, and the run has no secret for its password')


async def test_a_run_known_logged_in_whose_goal_cannot_start_runs_no_log_in():
    """Logged in (a log-in ran), the goal's way could not start for another reason: no log-in
    is run on the way (it would stop at its first field, on a page with no log-in form)."""
    skills = _skills()
    site = FakeSite(HOME)  # (the guest's list sends it to the log-in: the start fails, as it would)

    async def ask(chain, names, goal):
        return {"user": "bo", "number": "7"}

    went = await run_plan(
        site,
        await site.observe(),
        Offer("set_status", skills["set_status"], False),
        {"status": "closed"},
        list(skills.values()),
        True,
        secrets=["password"],
        reveal=lambda v: PASSWORD if v == "<secret:password>" else v,
        ask=ask,
    )
    assert not went.run.result.ok and went.ran == [] and went.logged_in is True
    assert "log_in" not in (went.run.result.note or "") and not [d for d in site.done if d[0] == "TYPE"]


async def test_a_start_page_that_now_sends_the_run_elsewhere_is_not_offered():
    """A skill recorded logged out whose start page sends a logged-in run elsewhere (a public
    form's page redirects staff to their list: the 1.5B's call stopped at its first field) is not
    offered; one recorded logged in whose page sends a logged-out run to the log-in still is, a
    log-in first (``SkillLifecycle.look_ahead``, asked of the site again after a skill runs)."""
    skills = _skills()
    report = _skill(
        "report",
        SkillStart(url=HOME, pattern=url_pattern(HOME), path="/", reachable=True),
        [_step(HOME, "CLICK", "9")],
        end=SkillEnd(url=HOME, path="/"),
    )
    site = {"logged_in": False, "asked": []}

    async def lands_on(url: str) -> str | None:
        site["asked"].append(urlsplit(url).path)
        path = urlsplit(url).path
        if site["logged_in"] and path == "/":
            return LIST
        if not site["logged_in"] and path in STAFF:
            return LOGIN
        return url

    life = SkillLifecycle(known=[*skills.values(), report], secrets=["password"])
    await life.look_ahead(lands_on, LOGIN)
    offered = {o.label: o for o in life.offer(_obs(LOGIN), {}, dialog=False)}
    assert {"report", "open_ticket"} <= set(offered)  # logged out: the form's page opens; the list after a log-in
    assert offered["open_ticket"].line().endswith("(runs log_in first)")
    await life.look_ahead(lands_on, LOGIN)
    assert sorted(site["asked"]) == ["/", "/login/", "/tickets/"]  # each start page asked once
    site["logged_in"] = True
    life.acted(offered["log_in"], True, [], True, 1)  # a skill ran: the pages are asked again
    await life.look_ahead(lands_on, LIST)
    assert "report" not in {o.label for o in life.offer(_obs(LIST), {}, dialog=False)}
    assert len(site["asked"]) == 6
    # a site that does not answer leaves the menu as the recordings say
    quiet = SkillLifecycle(known=[*skills.values(), report], secrets=["password"], logged_in=True)

    async def no_answer(url: str) -> None:
        return None

    await quiet.look_ahead(no_answer, LIST)
    assert "report" in {o.label for o in quiet.offer(_obs(LIST), {}, dialog=False)}


QUEUE = f"{SITE}/queue/"
PAGES["/queue/"] = (  # a staff list linking to two tickets' pages, a form's page the template fits, and another
    '<html><body backend_node_id="1"><a backend_node_id="20" href="/tickets/14/">14. Printer jams</a>'
    '<a backend_node_id="21" href="/tickets/15/">15. VPN drops</a><a backend_node_id="22" href="/about/">About</a>'
    '<a backend_node_id="23" href="/tickets/submit/">New ticket</a></body></html>'
)


def _links(*named: tuple[str, str]) -> dict[str, Control]:
    return {i: Control(i, "CLICK", "link", name) for i, name in named}


def test_a_skill_that_starts_on_a_record_is_shown_one_click_away_on_a_page_linking_to_records():
    """set_status starts on a ticket's page (``/tickets/*/``): never opened by address (the
    recording's ticket) nor offered on a list; the list that links to tickets says which links
    open such a page and that set_status runs there (where no plan reaches it: no skill opens a
    ticket by its number). The model clicks the record it means;
    ``/tickets/submit/`` fits the template but is a word where the recording's was a number."""
    skills = _skills()
    known = [skills["log_in"], skills["set_status"]]  # (no skill opens a ticket by its number: no plan)
    controls = _links(("20", "14. Printer jams"), ("21", "15. VPN drops"), ("22", "About"), ("23", "New ticket"))
    life = SkillLifecycle(known=known, secrets=["password"], logged_in=True)
    offered = {o.label for o in life.offer(_obs(QUEUE), controls, dialog=False)}
    assert "set_status" not in offered
    block = life.block()
    assert (
        '- link "14. Printer jams", link "15. VPN drops" opens a page at /tickets/*/ where these run: set_status (status)'
        in block.splitlines()
    )
    assert "New ticket" not in block and "About" not in block
    # on the ticket's page it is offered as a skill, and nothing is one click away
    offered = {o.label for o in life.offer(_obs(f"{LIST}14/"), {}, dialog=False)}
    assert "set_status" in offered and "One click away" not in life.block()
    # a long list is counted, not named (no name to copy); with the menu lever off, not shown
    rows = "".join(f'<a backend_node_id="{30 + k}" href="/tickets/{k}/">x</a>' for k in range(4))
    obs = _obs(QUEUE).model_copy(update={"raw_html": f'<html><body backend_node_id="1">{rows}</body></html>'})
    life.offer(obs, _links(*((str(30 + k), f"{k}. Ticket") for k in range(4))), dialog=False)
    assert "- any of 4 links above opens a page at /tickets/*/" in life.block()
    off = SkillLifecycle(known=known, secrets=["password"], logged_in=True)
    off.menu_for("close the ticket", menu=False)
    off.offer(_obs(QUEUE), controls, dialog=False)
    assert "One click away" not in off.block()
