"""The rules of `webagent mcp` (webagent.mcp_server.policy) and the runs listing it shares
(webagent.runs_index), without a server: sites narrowed never widened, documents only under
their folders, secrets by name, and run folders listed newest first, a run still going among
them."""

from __future__ import annotations

import json
import os

import pytest

from webagent.errors import UserError
from webagent.mcp_server.policy import Policy, Refused
from webagent.mcp_server.tools import step_lines
from webagent.runs_index import find_run, recent_runs

POLICY = Policy(["example.com", "127.0.0.1:8000"], secrets={"password": "pa55-word!", "token": "t0k3n"}, max_steps=20)


@pytest.mark.parametrize(
    ("narrowed", "kept"),
    [
        (None, ["example.com", "127.0.0.1:8000"]),
        (["shop.example.com"], ["shop.example.com"]),  # a subdomain of an allowed host
        (["example.com:443"], ["example.com:443"]),  # one port of a host allowed on every port
        (["127.0.0.1:8000"], ["127.0.0.1:8000"]),
    ],
)
def test_a_call_may_narrow_the_sites(narrowed, kept):
    assert POLICY.sites_for(None, narrowed) == kept
    assert POLICY.sites_for("https://shop.example.com/a", ["shop.example.com"]) == ["shop.example.com"]


@pytest.mark.parametrize(
    ("url", "narrowed", "why"),
    [
        ("http://127.0.0.1:8000/", ["127.0.0.1"], "never widen"),  # every port of a host allowed on one
        ("http://127.0.0.1:8000/", ["127.0.0.1:9000"], "never widen"),
        ("http://evil.com/", ["com"], "never widen"),
        ("http://example.com.evil.net/", None, "outside the allowed sites"),
        ("http://127.0.0.1:8001/", None, "outside the allowed sites"),
        ("http://shop.example.com/", ["127.0.0.1:8000"], "outside the allowed sites (127.0.0.1:8000)"),
        ("file:///etc/passwd", None, "outside the allowed sites"),
        ("javascript:alert(1)", None, "not an http(s) or file URL"),
    ],
)
def test_a_call_outside_the_sites_is_refused_with_the_reason(url, narrowed, why):
    with pytest.raises(UserError) as refused:
        POLICY.sites_for(url, narrowed)
    assert why in str(refused.value)


def test_secrets_are_named_never_given():
    assert POLICY.chosen_secrets(["Password"]) == {"password": "pa55-word!"}
    with pytest.raises(Refused, match="holds no secret 'pin' \\(it holds: password, token\\)"):
        POLICY.chosen_secrets(["pin"])
    POLICY.check_text("task", "Log in with the password <secret:password> and open the inbox")
    for text in ("use t0k3n here", "log in with the password hunter-22", "password: 'a b c'"):
        with pytest.raises(Refused) as refused:
            POLICY.check_text("task", text)
        assert "t0k3n" not in str(refused.value) and "hunter" not in str(refused.value)
    assert POLICY.mask("typed pa55-word! and t0k3n") == "typed <secret:password> and <secret:token>"


def test_documents_only_under_their_folders(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "spec.md").write_text("# Spec\n")
    (tmp_path / "other.md").write_text("# Other\n")
    policy = Policy(["example.com"], docs_dirs=[docs])
    assert policy.document(str(docs / "spec.md")) == (docs / "spec.md").resolve()
    for path, why in (
        (docs / ".." / "other.md", "not under the document folders"),
        (docs / "none.md", "no such file"),
    ):
        with pytest.raises(Refused, match=why):
            policy.document(str(path))
    link = docs / "link.md"
    link.symlink_to(tmp_path / "other.md")  # a link out of the folder is the file it points to
    with pytest.raises(Refused, match="not under the document folders"):
        policy.document(str(link))


def test_the_step_limit():
    assert POLICY.steps(None) == 20 and POLICY.steps(5) == 5
    with pytest.raises(Refused, match="at most 20 steps"):
        POLICY.steps(21)


def test_runs_newest_first_an_unfinished_one_among_them(tmp_path):
    old = tmp_path / "agent" / "20260101-100000-old"
    old.mkdir(parents=True)
    (old / "run.json").write_text(json.dumps({"task": "old one", "status": "done", "steps": 2, "answer": "42"}))
    (old / "steps.jsonl").write_text(
        json.dumps({"step": 1, "url": "http://x/", "action_text": "CLICK [1] [link] Go", "result_text": "ok"}) + "\n"
    )
    os.utime(old / "run.json", (1_000, 1_000))
    os.utime(old / "steps.jsonl", (1_000, 1_000))
    going = tmp_path / "replay" / "20260102-100000-going"
    going.mkdir(parents=True)
    (going / "steps.jsonl").write_text('{"step": 1}\n{"step": 2}\n')
    (tmp_path / "agent" / "not-a-run").mkdir()

    runs = recent_runs(tmp_path)
    assert [(r.id, r.status) for r in runs] == [
        ("replay/20260102-100000-going", "unfinished"),
        ("agent/20260101-100000-old", "done"),
    ]
    assert recent_runs(tmp_path, limit=1)[0].kind == "replay" and recent_runs(tmp_path / "none") == []
    found = find_run(tmp_path, "agent/20260101-100000-old")
    assert (found.task, found.answer, found.steps, found.report) == ("old one", "42", 2, None)
    assert step_lines(found.folder) == ["1. http://x/  CLICK [1] [link] Go  -> ok"]
    for bad in ("../..", "agent/not-a-run", "agent/none", "."):
        with pytest.raises(UserError):
            find_run(tmp_path, bad)
