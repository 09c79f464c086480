"""One typed step record (``webagent.trace.record``): traces written before it had a version
still read, with every key kept; a later version is refused with one line; the one builder
redacts, describes and fingerprints a step the same way for every writer; a SKILL's or FILL's
inner steps read back as steps of the run."""

import json

import pytest

from webagent.browser import REDACTED, Action, ActionResult
from webagent.browser.models import ElementRef, Observation
from webagent.errors import UserError
from webagent.trace.fingerprint import Fingerprint
from webagent.trace.record import VERSION, InnerStep, StepRecord, read_steps, step_record
from webagent.trace.writer import TraceWriter
from webagent.web.live_action import FillField, LiveAction

# a line as the live loop wrote it before records had a version (one key no version names)
OLD = {
    "step": 2,
    "url": "http://127.0.0.1:8000/login.html",
    "title": "Log in",
    "page": "abc",
    "snippets": 1,
    "raw_words": 40,
    "controls": 3,
    "frame_errors": [],
    "truncated": False,
    "context_words": 40,
    "lookup_skipped": "the page fits",
    "gists": [],
    "gist_fallbacks": [],
    "gists_reused": 0,
    "lookup": None,
    "expanded": [],
    "dropped_for_context": [],
    "replies": ['{"operation": "TYPE"}'],
    "failures": 0,
    "action": {"operation": "TYPE", "element_id": "7", "value": "ada", "press_enter": False},
    "action_text": 'TYPE [7] "ada" [text field]  User name',
    "element": "[text field]  User name",
    "problem": None,
    "result": {"ok": True, "action": {"op": "TYPE", "element_id": "7", "value": "ada"}},
    "result_text": "ok",
    "ok": True,
    "changed": True,
    "warning": None,
    "dry_run": False,
    "calls": [],
    "usage": {"calls": 1},
    "times": {"action_s": 0.5},
    "target": {"tag": "input", "name": "User name"},
    "screenshot": "step_02.png",
    "a_key_from_an_older_webagent": [1, 2],
}


def _obs() -> Observation:
    html = (
        '<html><body backend_node_id="1"><form backend_node_id="2">'
        '<input backend_node_id="7" name="user" aria-label="User name">'
        '<input backend_node_id="8" type="password" name="pw" aria-label="Password">'
        '<button backend_node_id="9">Log in</button></form></body></html>'
    )
    tags = {"1": "body", "2": "form", "7": "input", "8": "input", "9": "button"}
    elements = {
        i: ElementRef(target="page", backend_node_id=int(i), tag=t, is_password=i == "8") for i, t in tags.items()
    }
    return Observation(
        url="http://127.0.0.1/login", title="Log in", raw_html=html, cleaned_html=html, elements=elements
    )


def test_a_record_written_before_the_version_reads_and_keeps_every_key(tmp_path):
    path = tmp_path / "steps.jsonl"
    path.write_text(json.dumps(OLD) + "\n")
    [record] = read_steps(path)
    assert record.version == VERSION and record.step == 2 and record.ok
    assert record.action is not None and record.action.operation == "TYPE" and record.action.value == "ada"
    assert record.target == Fingerprint(tag="input", name="User name")
    assert record.to_json() == {"version": VERSION, **OLD}


def test_a_record_of_a_later_version_is_one_line(tmp_path):
    path = tmp_path / "steps.jsonl"
    path.write_text(json.dumps(OLD) + "\n" + json.dumps({**OLD, "version": VERSION + 1}) + "\n")
    with pytest.raises(UserError) as caught:
        read_steps(path)
    assert str(caught.value) == f"{path}, line 2: a step record of version {VERSION + 1}; this webagent reads {VERSION}"


def test_the_builder_takes_only_the_record_s_own_fields():
    with pytest.raises(TypeError, match="no field chnaged"):
        step_record(1, None, url="u", title="t", result_text="failed", ok=False, chnaged=True)


def test_the_builder_hides_a_password_and_fingerprints_only_a_step_that_worked():
    obs = _obs()
    typed = LiveAction(operation="TYPE", element_id="8", value="hunter2")
    done = ActionResult(ok=True, action=Action(op="TYPE", element_id="8", value=REDACTED))
    record = step_record(
        3, typed, url=obs.url, title=obs.title, obs=obs, executed=done, result_text="ok", ok=True, secret=True
    )
    assert record.action is not None and record.action.value == REDACTED
    assert record.action_text == f'TYPE [8] "{REDACTED}"' and "hunter2" not in json.dumps(record.to_json())
    assert record.target is not None and record.target.tag == "input"
    failed = step_record(
        4, typed, url=obs.url, title=obs.title, obs=obs, result_text="failed: x", ok=False, secret=True
    )
    assert failed.target is None
    dry = step_record(
        5, typed, url=obs.url, title=obs.title, obs=obs, result_text="not executed", ok=True, dry_run=True
    )
    assert dry.target is None
    nothing = step_record(6, None, url=obs.url, title=obs.title, problem="no JSON", result_text="failed", ok=False)
    assert nothing.action is None and nothing.action_text == "no usable action (no JSON)"


def test_a_fill_reads_as_the_steps_it_did():
    obs = _obs()
    fill = LiveAction(
        operation="FILL",
        element_id="9",
        fields=[FillField(element_id="7", value="ada"), FillField(element_id="8", value="hunter2")],
    )
    ok = ActionResult(ok=True, action=Action(op="CLICK", element_id="9"))
    parts = [
        InnerStep(op="TYPE", ok=True, url=obs.url, title=obs.title, element_id="7", value="ada"),
        InnerStep(op="TYPE", ok=True, url=obs.url, title=obs.title, element_id="8", value=REDACTED),
        InnerStep(op="CLICK", ok=True, url=obs.url, title=obs.title, element_id="9"),
    ]
    record = step_record(
        1,
        fill,
        url=obs.url,
        title=obs.title,
        obs=obs,
        executed=ok,
        result_text="ok",
        ok=True,
        hidden={"8"},
        fill_steps=parts,
    )
    assert record.action is not None and [f.value for f in record.action.fields] == ["ada", REDACTED]
    assert record.action_text == f'FILL [7]="ada" [8]="{REDACTED}" then CLICK [9]'
    done = record.as_done()
    assert [(d.step, d.operation, d.action.value if d.action else None) for d in done] == [
        (1, "TYPE", "ada"),
        (1, "TYPE", REDACTED),
        (1, "CLICK", ""),
    ]
    assert all(d.url == obs.url and d.ok for d in done)


def test_a_secret_learnt_later_is_scrubbed_from_the_lines_already_written(tmp_path):
    trace = TraceWriter(tmp_path / "trace")
    trace.write_step(StepRecord.model_validate({**OLD, "action_text": "TYPE [7] 'ada-pw'"}))
    trace.secrets.add("ada-pw")
    trace.write_step(StepRecord.model_validate({**OLD, "step": 3}))
    first = json.loads((tmp_path / "trace" / "steps.jsonl").read_text().splitlines()[0])
    assert first["action_text"] == f"TYPE [7] '{REDACTED}'"
    assert first["a_key_from_an_older_webagent"] == [1, 2]  # rewriting a line loses nothing


def test_a_short_secret_is_scrubbed_where_it_stands_alone_a_longer_one_everywhere():
    from webagent.trace.writer import scrub

    # The 1.5B typed "4" as a made-up password: replaced inside numbers, it garbled every port,
    # id and answer with a 4 in it, its own history too. Alone, it is still replaced.
    seen = {"url": "http://127.0.0.1:51849/issue14", "lines": ["Password: 4", "4, then 4."]}
    assert scrub(seen, {"4"}) == {
        "url": "http://127.0.0.1:51849/issue14",
        "lines": [f"Password: {REDACTED}", f"{REDACTED}, then {REDACTED}."],
    }
    # A secret of four characters or more is replaced wherever it is, inside a word too (a URL's
    # query, a form's body); the longest first, so one that holds another goes whole.
    text = "login?user=ada&pw=s3cret!x and s3cret! and pin 2468"
    assert scrub(text, {"s3cret!", "s3cret!x", "2468", ""}) == (
        f"login?user=ada&pw={REDACTED} and {REDACTED} and pin {REDACTED}"
    )
    assert scrub(["x"], set()) == ["x"]
