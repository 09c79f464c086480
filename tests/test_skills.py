"""Skills learned from recordings (issue 34, item 2): a recording is cut at form and page
boundaries into skills with typed parameters; agreeing skills merge, the values that differed
becoming parameters; skills are kept per site, listed, shown, removed, exported and imported;
a bad skills file is one line and loses nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browser_support import requires_chromium
from click.testing import CliRunner

from webagent.cli import main
from webagent.skills import store
from webagent.skills.learn import cut, from_recording, merge, skill_of
from webagent.trace.step import RecordedStep

SITE = Path(__file__).parent / "fixtures" / "teach_site"


def _step(op, name, *, tag="input", value="", page="/login", kind="text", form=True, param=None, enter=False):
    attrs = {"type": kind, "name": name.lower().replace(" ", "_")}
    target = {"tag": tag, "role": "", "name": name, "attrs": attrs, "form": {"action": page} if form else {}}
    return RecordedStep.model_validate(
        {
            "op": op,
            "value": value,
            "press_enter": enter,
            "param": param,
            "target": target,
            "page": {"url": f"http://127.0.0.1:8000{page}", "pattern": page, "title": page.strip("/").title()},
            "text": f"{op} {name}",
        }
    )


LOGIN = [
    _step("TYPE", "Username", value="alice", param="username"),
    _step("TYPE", "Password", value="********", kind="password", param="password"),
    _step("CLICK", "Log in", tag="button", kind="submit"),
]
NEW_ISSUE = [
    _step("CLICK", "New issue", tag="a", page="/issues", form=False),
    _step("TYPE", "Title", value="Crash on save", page="/issues/new", param="title"),
    _step("SELECT", "Priority", tag="select", value="urgent", page="/issues/new"),
    _step("CLICK", "Create", tag="button", kind="submit", page="/issues/new"),
]
PARAMS = {
    "username": {"default": "alice", "source": "task"},
    "password": {"default": None, "source": "password"},
    "title": {"default": "Crash on save", "source": "task"},
}


def test_a_recording_is_cut_at_forms_sent_and_a_lone_link_leads_into_its_form():
    browse = [_step("CLICK", "Home", tag="a", page="/", form=False)]
    pieces = cut(LOGIN + browse + NEW_ISSUE + [RecordedStep.model_validate({"op": "DONE", "page": {"pattern": "/"}})])
    assert [[s.target.name for s in p if s.target] for p in pieces] == [
        ["Username", "Password", "Log in"],
        ["New issue", "Title", "Priority", "Create"],  # the link clicked on the way there left out
    ]
    only = cut(LOGIN + NEW_ISSUE)
    assert [len(p) for p in only] == [3, 4] and only[1][0].target and only[1][0].target.name == "New issue"


def test_a_skill_has_a_name_a_description_typed_parameters_and_its_start():
    skill = skill_of(LOGIN, PARAMS, "trace-a", "demonstration")
    assert skill.name == "Log in" and skill.id == "log_in"
    assert [(p.name, p.kind, p.example) for p in skill.params] == [
        ("username", "text", "alice"),
        ("password", "secret", None),
    ]
    assert skill.start.pattern == "/login" and skill.start.reachable and skill.site == "127.0.0.1:8000"
    assert (
        skill.line("S1")
        == '[S1] skill "Log in" (username, password): Username=<username>, Password=<password>, clicks "Log in"'
    )
    issue = skill_of(cut(NEW_ISSUE)[0], PARAMS, "trace-a", "demonstration")
    assert [(p.name, p.kind) for p in issue.params] == [("title", "text")]  # urgent: not in the task, a constant


def test_two_recordings_of_one_form_merge_and_what_differed_becomes_a_parameter():
    first = skill_of(cut(NEW_ISSUE)[0], PARAMS, "trace-a", "demonstration")
    other = [s.model_copy(deep=True) for s in NEW_ISSUE]
    other[1].value = "Typo in footer"
    other[2].value = "bug"
    second = skill_of(cut(other)[0], {"title": {"default": "Typo in footer", "source": "task"}}, "trace-b", "run")
    (one,) = merge([first, second])
    assert [(p.name, p.kind, p.source) for p in one.params] == [
        ("title", "text", "task"),
        ("priority", "select", "differed"),
    ]
    assert one.sources == ["trace-a", "trace-b"] and one.learned_from == ["demonstration", "run"]
    login = skill_of(LOGIN, PARAMS, "trace-a", "demonstration")
    assert len(merge([first, login, second])) == 2


def test_one_form_met_on_two_pages_is_one_skill_started_at_the_plainer_address():
    def search(page: str, url: str, value: str) -> list[RecordedStep]:
        steps = [
            _step("TYPE", "Search", value=value, page=page, param="query"),
            _step("CLICK", "Go", tag="button", kind="submit", page=page),
        ]
        for step in steps:  # the search box sends to /search/ from every page it is on
            assert step.target is not None
            step.target.form = {"action": "/search/"}
            step.page.url = f"http://127.0.0.1:8000{url}"
        return steps

    params = {"query": {"default": "x", "source": "task"}}
    after_login = skill_of(search("/?@ok_message", "/?@ok_message=Welcome+alice", "x"), params, "a", "demonstration")
    profile = skill_of(search("/profile/", "/profile/", "y"), params, "b", "demonstration")
    home = skill_of(search("/", "/", "z"), params, "c", "demonstration")
    (one,) = merge([after_login, profile, home])
    assert one.sources == ["a", "b", "c"] and one.start.url == "http://127.0.0.1:8000/"
    other_form = [s.model_copy(deep=True) for s in search("/", "/", "q")]
    for step in other_form:
        assert step.target is not None
        step.target.form = {"action": "/issues/"}
    assert len(merge([one, skill_of(other_form, params, "d", "run")])) == 2  # another form: another skill


def test_the_store_keeps_lists_removes_exports_and_imports(tmp_path):
    runner = CliRunner()
    store.add([skill_of(LOGIN, PARAMS, "trace-a", "demonstration"), skill_of(cut(NEW_ISSUE)[0], PARAMS, "t", "run")])
    listed = runner.invoke(main, ["skills", "list"])
    assert listed.exit_code == 0 and '[log_in] skill "Log in" (username, password)' in listed.output
    shown = runner.invoke(main, ["skills", "show", "127.0.0.1:8000", "create"])
    assert shown.exit_code == 0 and "param title (text, from task)" in shown.output
    exported = tmp_path / "skills.json"
    assert runner.invoke(main, ["skills", "export", "127.0.0.1:8000", str(exported)]).exit_code == 0
    assert runner.invoke(main, ["skills", "remove", "127.0.0.1:8000", "log_in"]).exit_code == 0
    assert [s.id for s in store.load("127.0.0.1:8000")] == ["create"]
    assert runner.invoke(main, ["skills", "import", str(exported)]).exit_code == 0
    assert sorted(s.id for s in store.load("127.0.0.1:8000")) == ["create", "log_in"]  # merged, not doubled


def test_a_skills_file_of_another_version_is_one_line_and_loses_nothing(tmp_path):
    store.add([skill_of(LOGIN, PARAMS, "trace-a", "demonstration")])
    before = (store.root() / "127.0.0.1_8000.json").read_text()
    bad = tmp_path / "old.json"
    bad.write_text(json.dumps({"version": 99, "skills": []}))
    result = CliRunner().invoke(main, ["skills", "import", str(bad)])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "version 99" in result.output and str(bad) in result.output
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"version": 1, "skills": [{"id": "x", "name": "X"}]}))
    result = CliRunner().invoke(main, ["skills", "import", str(broken)])
    assert result.exit_code != 0 and "record x" in result.output
    assert (store.root() / "127.0.0.1_8000.json").read_text() == before


@pytest.mark.browser
@requires_chromium
@pytest.mark.asyncio
async def test_skills_are_learned_from_a_demonstration_recorded_with_teach(tmp_path):
    from webagent.agent.teach import Teach
    from webagent.demo_site import serve_directory

    base, stop = serve_directory(SITE)
    try:
        task = "Log in as ada and save a note titled Milk"
        async with Teach(base + "index.html", task, tmp_path / "taught", headed=False) as teach:
            page = teach.page
            await page.get_by_role("textbox", name="User name").fill("ada")
            await page.get_by_label("Password").fill("s3cret-pw")
            await page.get_by_role("button", name="Log in").click()
            await page.wait_for_url("**/notes.html*")
            await page.get_by_role("textbox", name="Title").fill("Milk")
            await page.get_by_role("button", name="Save note").click()
            await page.wait_for_function("document.title.startsWith('Saved')")
            folder = await teach.finish()
    finally:
        stop()
    login, note = from_recording(folder)
    assert (login.name, [p.name for p in login.params]) == ("Log in", ["user", "password"])
    assert (note.name, [p.name for p in note.params]) == ("Save note", ["title"])
    assert login.learned_from == ["demonstration"]
    assert all(s.target for s in login.steps + note.steps)
    assert not any("s3cret-pw" in json.dumps(s.model_dump()) for s in (login, note))


def test_the_skill_example_is_shown_only_where_skills_are_offered():
    from webagent.web.live_action import live_messages, step_message

    kwargs = dict(context='[1] button "Go"', task="Go", history=[], url="http://x/", title="X")
    plain, with_skills = live_messages(**kwargs), live_messages(**kwargs, skills=True)
    assert not any('"operation": "SKILL"' in str(m["content"]) for m in plain)
    calls = [m for m in with_skills if m["role"] == "assistant" and '"operation": "SKILL"' in str(m["content"])]
    assert len(calls) == 1  # the worked call
    assert plain[: len(plain) - 1] == with_skills[: len(plain) - 1]  # the shared prefix stays first (prompt cache)
    assert step_message(with_skills) == step_message(plain) and step_message(plain).startswith("Previous actions")


def test_a_select_the_task_names_in_its_own_words_is_a_parameter():
    from webagent.skills.learn import _named_in

    assert _named_in("4. Low", "Open a Facilities ticket, priority Low")
    assert _named_in("IT Support", "an IT Support issue") and _named_in("Yellow", "a yellow note")
    assert not _named_in("2. High", "priority Low") and not _named_in("Customer Support", "a support ticket")


def test_a_skill_line_says_where_each_argument_goes_and_same_named_skills_get_telling_ids():
    login = skill_of(LOGIN, PARAMS, "trace-a", "demonstration")
    assert login.description == 'Username=<username>, Password=<password>, clicks "Log in"'
    issue = skill_of(cut(NEW_ISSUE)[0], PARAMS, "trace-a", "demonstration")
    # a value that is not a parameter is shown as the constant it is
    assert "=<title>" in issue.description and '"urgent"' in issue.description
    other = issue.model_copy(update={"name": "Log in", "id": "log_in", "start": issue.start})
    ids = [s.id for s in merge([login, other])]
    assert ids == ["log_in_username_password", "log_in_new_issue_title"]  # told apart by what each does


def test_an_option_may_be_named_without_its_list_number():
    from webagent.web.agent_view import matching_option, option_names

    options = ("1. Critical", "2. High", "3. Normal")
    assert matching_option(options, "High") == "2. High"
    assert option_names(options) == [*options, "Critical", "High", "Normal"]
    # a bare text two options share names neither
    assert (
        option_names(("1. Low", "2. Low")) == ["1. Low", "2. Low"]
        and matching_option(("1. Low", "2. Low"), "Low") is None
    )
