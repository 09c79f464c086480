"""Where a skill starts and what it leaves, learned from recordings (issue 47, items 1 and 3): a
path segment varies only where recordings or the site's own links of one list show it varying
(never for a digit); a skill learned on one project is offered on another's page, never as a
trap that opens the first; a delete confirmed on the same element is one skill; the menu takes
a select's recorded options from another page, ranks by the task and caps; a skills file of
d4c3473 still reads."""

from __future__ import annotations

import json
from pathlib import Path

from webagent.browser.models import ElementRef, Observation
from webagent.html import clean_html
from webagent.skills.learn import Recording, cut, from_recording, merge, skill_of, varied
from webagent.skills.model import Skill, SkillParam, at_path
from webagent.skills.offer import MAX_OFFERS, offers
from webagent.trace.fingerprint import Fingerprint, PageRef, url_pattern
from webagent.trace.pages import facts_of, write_pages
from webagent.trace.step import RecordedStep

HOST = "http://127.0.0.1:8000"


def _step(
    op: str, name: str, page: str, *, tag: str = "input", value: str = "", form: str = "", **attrs
) -> RecordedStep:
    target = Fingerprint(
        tag=tag, name=name, attrs={"name": name.lower(), **attrs}, form={"action": form} if form else {}
    )
    return RecordedStep(
        op=op,  # type: ignore[arg-type]
        value=value,
        target=target,
        page=PageRef(url=HOST + page, pattern=url_pattern(HOST + page), title=page),
    )


def _book(event: str) -> list[RecordedStep]:
    page = f"/events/{event}/book"
    return [
        _step("TYPE", "Seats", page, value="2", form=page),
        _step("CLICK", "Book", page, tag="button", type="submit", form=page),
    ]


def test_a_slug_two_recordings_show_varying_is_a_template_and_not_reachable_by_goto():
    (one,) = merge([skill_of(_book("jazz27"), {}, "a", "demonstration"), skill_of(_book("pycon27"), {}, "b", "run")])
    assert one.start.path == "/events/*/book" and not one.start.reachable
    assert at_path(one.start.path, HOST + "/events/rust3/book") and not at_path(one.start.path, "/events/x/pay")
    # the site's own links of one list show it too (jazz27 and pycon27 linked from the events list)
    assert varied("/events/jazz27/book", [["/events/jazz27/", "/events/pycon27/"]]) == "/events/*/book"
    assert varied("/issue28", [["/issue27", "/issue28", "/issue3"]]) == "/issue*"


def test_a_digit_slug_in_one_recording_stays_literal():
    rec = Recording(groups=[["/events/", "/about/"], ["/events/jazz27/", "/help/"]])  # no list shows it vary
    skill = skill_of(_book("jazz27"), {}, "a", "demonstration", rec=rec)
    assert skill.start.path == "/events/jazz27/book" and skill.start.reachable
    assert not at_path(skill.start.path, "/events/jazz28/book")
    assert varied("/tickets/28/", []) == "/tickets/28/"


def _obs(url: str, body: str) -> Observation:
    html = f'<html><body backend_node_id="1">{body}</body></html>'
    ids = [part.split('"')[0] for part in html.split('backend_node_id="')[1:]]
    tags = [part.split()[0].strip("<>") for part in html.split("<")[1:] if not part.startswith("/")]
    elements = {i: ElementRef(target="page", backend_node_id=int(i), tag=t) for i, t in zip(ids, tags)}
    return Observation(url=url, title="", raw_html=html, cleaned_html=clean_html(html), elements=elements)


NEW_TASK = (
    '<form backend_node_id="2" action="new"><input backend_node_id="3" type="text" name="title">'
    '<button backend_node_id="4" type="submit" name="add">Add</button></form>'
)


def _add_task(project: str) -> list[RecordedStep]:
    page = f"/projects/{project}/tasks/new"
    return [
        _step("TYPE", "Title", page, value="Buy tickets", form="new"),
        _step("CLICK", "Add", page, tag="button", type="submit", form="new"),
    ]


def test_a_project_skill_is_offered_on_another_projects_page_and_never_as_a_trap():
    rec = Recording(groups=[["/projects/lisbon-trip/", "/projects/tokyo/"]])  # the projects list
    skill = skill_of(_add_task("lisbon-trip"), {}, "a", "demonstration", rec=rec)
    assert skill.start.path == "/projects/*/tasks/new"
    on_tokyo = offers([skill], _obs(HOST + "/projects/tokyo/tasks/new", NEW_TASK), {})
    assert [(o.skill.id, o.here) for o in on_tokyo] == [("add", True)]
    elsewhere = offers([skill], _obs(HOST + "/projects/tokyo/", '<h1 backend_node_id="2">Tokyo</h1>'), {})
    assert elsewhere == []  # not "(opens /projects/lisbon-trip/tasks/new first)"
    # as skills were matched before: a path with no digit was a stable address, the trap
    trap = offers([skill], _obs(HOST + "/projects/tokyo/", "<p>x</p>"), {}, skill_states=False)
    assert [o.line().endswith("(opens /projects/lisbon-trip/tasks/new first)") for o in trap] == [True]


def test_a_select_parameter_takes_its_recorded_options_as_its_enum_from_another_page():
    steps = [
        _step("SELECT", "Priority", "/tickets/new", tag="select", value="High", form="/tickets/new"),
        _step("CLICK", "Create", "/tickets/new", tag="button", type="submit", form="/tickets/new"),
    ]
    steps[0].param = "priority"
    facts = facts_of(
        1,
        HOST + "/tickets/new",
        "New",
        '<html><body><form><select name="priority"><option>Low</option><option>High</option></select></form></body></html>',
    )
    rec = Recording(before=[facts, None], groups=[["/tickets/", "/help/"]])
    skill = skill_of(steps, {"priority": {"default": "High", "source": "task"}}, "a", "demonstration", rec=rec)
    assert skill.params == [
        SkillParam(name="priority", kind="select", example="High", source="task", options=["Low", "High"])
    ]
    (offer,) = offers([skill], _obs(HOST + "/", "<p>home</p>"), {})
    assert not offer.here and offer.options == {"priority": ("Low", "High")}
    (plain,) = offers([skill], _obs(HOST + "/", "<p>home</p>"), {}, menu=False)
    assert plain.options == {}  # the menu lever off: as before, free text


def test_a_delete_that_asks_are_you_sure_on_the_same_element_is_one_skill():
    page = "/items/5/"
    delete = _step("CLICK", "Delete", page, tag="button", type="submit", form="/items/5/delete", id="del")
    sure = _step("CLICK", "Are you sure?", page, tag="button", type="submit", form="/items/5/delete", id="del")
    assert sure.target is not None
    sure.target.attrs["name"] = "delete"  # the same button: only its text changed
    (piece,) = cut([delete, sure, RecordedStep(op="DONE")])
    assert [s.target.name for s in piece if s.target] == ["Delete", "Are you sure?"]
    assert skill_of(piece, {}, "a", "demonstration").name == "Delete"
    other = _step("CLICK", "Archive", page, tag="button", type="submit", form="/items/5/archive", id="arc")
    assert cut([delete, other, RecordedStep(op="DONE")]) == []  # two forms sent: two lone clicks, no skill


def test_the_menu_ranks_by_the_task_and_caps():
    def reachable(name: str, n: int) -> Skill:
        steps = [
            _step("TYPE", "Field", f"/page-{chr(97 + n)}", value="x", form=f"/page-{chr(97 + n)}"),
            _step("CLICK", name, f"/page-{chr(97 + n)}", tag="button", type="submit", form=f"/page-{chr(97 + n)}"),
        ]
        return skill_of(steps, {}, str(n), "demonstration")

    names = [f"Save setting {n}" for n in range(MAX_OFFERS + 3)] + ["Delete ticket"]
    skills = [reachable(name, n) for n, name in enumerate(names)]
    got = offers(skills, _obs(HOST + "/", "<p>home</p>"), {}, "delete the ticket about the printer")
    assert len(got) == MAX_OFFERS and "Delete ticket" in [o.skill.name for o in got]
    unranked = offers(skills, _obs(HOST + "/", "<p>home</p>"), {}, "delete the ticket", menu=False)
    assert "Delete ticket" not in [o.skill.name for o in unranked]


def test_a_skills_file_of_d4c3473_still_reads_its_new_fields_defaulted():
    old = {
        "version": 1,
        "id": "submit_changes_note",
        "name": "Submit changes",
        "description": "note=<note>",
        "site": "127.0.0.1:8000",
        "start": {"url": HOST + "/issue30", "pattern": "/issue30", "title": "", "form": {}, "reachable": False},
        "params": [{"name": "note", "kind": "text", "example": "x", "source": "task"}],
        "steps": [_step("TYPE", "Note", "/issue30", value="x").model_dump()],
        "sources": ["a"],
        "learned_from": ["demonstration"],
    }
    skill = Skill.model_validate(old)
    assert skill.end is None and skill.start.landmarks == [] and not skill.start.logged_in
    assert skill.start.path == "/issue*" and at_path(skill.start.path, "/issue31")  # as it was matched then


def _record(n: int, op: str, url: str, target: Fingerprint | None, value: str = "") -> dict:
    return {
        "version": 1,
        "step": n,
        "url": url,
        "title": "",
        "action": {"operation": op, "element_id": str(n), "value": value},
        "ok": True,
        "target": target.model_dump() if target else None,
        "taught": True,
    }


def test_a_recording_learns_its_start_landmarks_log_in_and_end(tmp_path: Path):
    """A teach trace with its pages: the log-in form, then a ticket's comment form reached from
    the tickets list (whose links show the ticket number varying)."""
    folder = tmp_path / "trace"
    folder.mkdir()
    login, ticket = HOST + "/login/", HOST + "/tickets/28/"
    user = Fingerprint(tag="input", name="User", attrs={"name": "user"}, form={"action": "/login/"})
    pw = Fingerprint(tag="input", name="Password", attrs={"name": "pw", "type": "password"}, form={"action": "/login/"})
    go = Fingerprint(tag="button", name="Log in", attrs={"type": "submit"}, form={"action": "/login/"})
    link = Fingerprint(tag="a", role="link", name="Printer jams", attrs={"href": "/tickets/28/"})
    note = Fingerprint(tag="textarea", name="Comment", attrs={"name": "comment"}, form={"action": "/tickets/28/"})
    save = Fingerprint(tag="button", name="Save", attrs={"type": "submit"}, form={"action": "/tickets/28/"})
    records = [
        _record(1, "TYPE", login, user, "ada"),
        _record(2, "TYPE", login, pw, "********"),
        _record(3, "CLICK", login, go),
        _record(4, "CLICK", HOST + "/tickets/", link),
        _record(5, "TYPE", ticket, note, "Toner replaced"),
        _record(6, "CLICK", ticket, save),
    ]
    (folder / "steps.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "run.json").write_text(
        json.dumps({"task": "Comment Toner replaced", "status": "done", "taught": True, "final_url": ticket})
    )
    rows = '<table><tr><td><a href="/tickets/27/">Paper</a></td></tr><tr><td><a href="/tickets/28/">Printer jams</a></td></tr></table>'
    pages = {
        4: ("/tickets/", f"<h1>Tickets</h1>{rows}"),
        5: ("/tickets/28/", "<h1>Printer jams 28</h1><h2>Comments</h2><p>No comments yet</p>"),
        6: ("/tickets/28/", "<h1>Printer jams 28</h1><h2>Comments</h2><p>No comments yet</p>"),
        7: ("/tickets/28/", '<h1>Printer jams 28</h1><div role="status">Comment added</div><p>Toner replaced</p>'),
    }
    write_pages(folder, [facts_of(n, HOST + p, "", f"<html><body>{b}</body></html>") for n, (p, b) in pages.items()])
    log_in, comment = from_recording(folder)
    assert not log_in.start.logged_in and log_in.start.reachable
    assert comment.start.path == "/tickets/*/" and not comment.start.reachable and comment.start.logged_in
    assert comment.steps[0].op == "TYPE"  # the link to one ticket is not the way to every ticket's form
    assert comment.start.landmarks == ["Comments"]  # "Printer jams 28" names one ticket
    assert comment.end is not None and comment.end.path == "/tickets/*/"
    assert comment.end.appears[:2] == ["Comment added", "Toner replaced"]


def test_the_sites_menus_are_not_a_list_of_records():
    html = (
        '<html><body><ul class="nav nav-list"><li><a href="/accounts/profile/">Profile</a></li>'
        '<li><a href="/accounts/addresses/">Addresses</a></li></ul>'
        '<table><tr><td><a href="/accounts/addresses/4/">Home</a></td></tr>'
        '<tr><td><a href="/accounts/addresses/9/">Work</a></td></tr></table></body></html>'
    )
    facts = facts_of(1, HOST + "/accounts/profile/", "", html)
    assert facts.links == [["/accounts/addresses/4/", "/accounts/addresses/9/"]]
    assert varied("/accounts/profile/edit/", facts.links) == "/accounts/profile/edit/"
    assert varied("/accounts/addresses/4/", facts.links) == "/accounts/addresses/*/"
