"""The Mind2Web-layout fixtures are well-formed and honest to their raw pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lxml import etree

from webagent.html import clean_html, parse_cleaned

M2W = Path(__file__).parent / "fixtures" / "mind2web"
RAW = Path(__file__).parent / "fixtures" / "html"
TASK_KEYS = {"annotation_id", "website", "domain", "subdomain", "confirmed_task", "action_reprs", "actions"}
ACTION_KEYS = {"action_uid", "raw_html", "cleaned_html", "operation", "pos_candidates", "neg_candidates"}
CANDIDATE_KEYS = {"tag", "backend_node_id", "attributes", "is_original_target", "is_top_level_target"}
FILES = sorted(M2W.glob("*/*.json"))
# page each website's raw file, to check cleaned_html really is clean_html(raw)
RAW_OF = {
    "aa": "aa_find_flights.html",
    "alaskaair": "alaska_search.html",
    "nodejs": "nodejs_os.html",
    "browsergym-form": "browsergym_simple_form.html",
}


def _tasks():
    return [(path, task) for path in FILES for task in json.loads(path.read_text("utf-8"))]


def test_official_split_layout():
    assert {p.parent.name for p in FILES} == {"test_task", "test_website", "test_domain"}
    tasks = _tasks()
    assert 6 <= len(tasks) <= 10
    ops = [a["operation"]["op"] for _, t in tasks for a in t["actions"]]
    assert ops.count("SELECT") >= 2 and "TYPE" in ops and "CLICK" in ops
    assert sum(p.stat().st_size for p in M2W.rglob("*")) < 3_000_000
    assert max(len(a["cleaned_html"].encode()) for _, t in tasks for a in t["actions"]) > 100_000


@pytest.mark.parametrize("path,task", _tasks(), ids=lambda v: getattr(v, "name", None) or v["annotation_id"][:8])
def test_task_records(path, task):
    assert set(task) == TASK_KEYS
    assert 2 <= len(task["actions"]) <= 4
    assert len(task["action_reprs"]) == len(task["actions"])
    raw_page = clean_html((RAW / RAW_OF[task["website"]]).read_text("utf-8"))
    assert task["actions"][0]["cleaned_html"] == raw_page  # cleaned_html = clean_html(raw page)
    for action, action_repr in zip(task["actions"], task["action_reprs"]):
        assert set(action) == ACTION_KEYS
        op = action["operation"]
        assert op["op"] in {"CLICK", "TYPE", "SELECT"} and op["original_op"]
        assert action_repr.startswith("[") and action_repr.endswith(
            "CLICK" if op["op"] == "CLICK" else f"{op['op']}: {op['value']}"
        )
        cleaned = action["cleaned_html"]
        assert clean_html(cleaned) == cleaned
        if action["raw_html"]:
            assert clean_html(action["raw_html"]) == cleaned
        root = parse_cleaned(cleaned)
        by_id = {el.get("backend_node_id"): el for el in root.iter()}
        (pos,) = action["pos_candidates"]
        for cand in [pos, *action["neg_candidates"]]:
            assert set(cand) == CANDIDATE_KEYS
            attrs = json.loads(cand["attributes"])
            assert attrs["backend_node_id"] == cand["backend_node_id"]
            assert by_id[cand["backend_node_id"]].tag == cand["tag"]
        assert pos["is_original_target"] and pos["is_top_level_target"]
        assert pos["backend_node_id"] not in {c["backend_node_id"] for c in action["neg_candidates"]}
        if op["op"] == "SELECT":
            target = by_id[pos["backend_node_id"]]
            assert target.tag == "select"
            assert op["value"] in [" ".join("".join(o.itertext()).split()) for o in target.iter("option")]
        if op["op"] == "TYPE":
            assert by_id[pos["backend_node_id"]].tag in {"input", "textarea"}
    etree.fromstring(task["actions"][-1]["cleaned_html"])  # XML, like the real dataset
