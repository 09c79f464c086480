"""The web gist memory shared by Mind2Web and the live agent (webagent/web/web_memory.py)."""

import json
import re
from pathlib import Path

from mind2web.methods import StepInput, Variant, predict
from webagent.html import Snippet
from webagent.llm.client import TransientError
from webagent.llm.testing import FunctionBackend, fake_client, heuristic_reply
from webagent.web.web_memory import GistReuse, act_on_memory, build_web_memory, estimate_tokens

GOLDEN = Path(__file__).parent / "fixtures" / "mind2web_golden"


def snippets() -> list[Snippet]:
    texts = [
        "<div id=1> <a id=2> Home </a> <a id=3> Deals </a> </div>",
        "<form id=10> <input id=11 from /> <input id=12 to /> <button id=13> Search </button> </form>",
        "<footer id=20> <a id=21> Careers </a> </footer>",
    ]
    return [Snippet(index=i, ids=re.findall(r"id=(\d+)", t), text=t, words=len(t.split())) for i, t in enumerate(texts)]


def step() -> StepInput:
    s = snippets()
    return StepInput("Search flights to Boston", ["[link] Deals -> CLICK"], s, "<html></html>")


async def test_moving_the_web_memory_changed_no_prediction():
    """The same predictions as the code before the move (golden file made at commit 7a5bfb5)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_golden", GOLDEN / "make_golden.py")
    make_golden = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_golden)
    expected = [json.loads(line) for line in (GOLDEN / "heuristic_predictions.jsonl").read_text().splitlines()]
    actual = await make_golden.predictions(act_on="context")
    key = lambda r: (r["variant"], r["annotation_id"], r["action_uid"])  # noqa: E731
    assert sorted(actual, key=key) == sorted(expected, key=key)
    assert len(expected) == 168


def scripted(lookup_pages, action_id):
    """Gists name the ids of their snippet; the look-up picks `lookup_pages`; the action
    answers `action_id` first, then (re-asked) the first allowed id."""
    state = {"actions": 0}

    def fn(messages, params, purpose):
        prompt = messages[0]["content"]
        if purpose == "gist":
            return "gist of " + " ".join(f"id={i}" for i in re.findall(r"id=(\d+)", prompt.split("Snippet:")[1]))
        if purpose == "lookup":
            return {"pages": lookup_pages, "reason": "to find the form"}
        state["actions"] += 1
        if state["actions"] == 1:
            return {"element_id": action_id, "operation": "CLICK", "value": ""}
        enum = params["response_format"]["json_schema"]["schema"]["properties"]["element_id"]["enum"]
        return {"element_id": enum[0], "operation": "CLICK", "value": ""}

    return FunctionBackend(fn)


async def test_after_a_lookup_the_action_may_only_pick_ids_of_the_looked_up_snippets():
    backend = scripted([1], action_id="21")  # 21 is only in a gist (snippet 2): not allowed
    pred = await predict(fake_client(backend), Variant("readagent-p", 1), step())
    action_requests = [r for r in backend.requests if r["purpose"] == "action"]
    schema = action_requests[0]["params"]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["element_id"]["enum"] == ["10", "11", "12", "13"]
    assert '"gist of id=20 id=21"' in action_requests[0]["messages"][0]["content"]  # gists kept for orientation
    assert pred.element_id == "10" and pred.act_on == "looked-up" and pred.lookups == [1]
    assert len(action_requests) == 2 and pred.failures == 0  # 21 was re-asked, not accepted


async def test_act_on_context_keeps_the_old_behaviour_and_gistmem_acts_on_gist_ids():
    backend = scripted([1], action_id="21")
    pred = await predict(fake_client(backend), Variant("readagent-p", 1), step(), act_on="context")
    assert pred.element_id == "21" and pred.act_on == "context"
    pred = await predict(fake_client(scripted([1], action_id="21")), Variant("gistmem"), step())
    assert pred.element_id == "21" and pred.lookups == []


async def test_an_empty_lookup_is_a_counted_lookup_failure_in_the_step():
    def fn(messages, params, purpose):
        if purpose == "lookup":
            return {"pages": [], "reason": "nothing"}
        return heuristic_reply(messages, params, purpose)

    pred = await predict(fake_client(fn), Variant("readagent-p", 1), step())
    assert pred.lookups == [] and pred.lookup_failures == 1 and pred.failures >= 1


async def test_an_endpoint_that_stays_down_marks_the_step_for_a_rerun():
    def fn(messages, params, purpose):
        if purpose == "action":
            return TransientError("HTTP 503")
        return heuristic_reply(messages, params, purpose)

    pred = await predict(fake_client(fn, max_retries=1), Variant("bm25", 1), step())
    assert pred.element_id is None and pred.endpoint_failed and pred.failures == 1
    bad_reply = await predict(fake_client(lambda m, p, purpose: "no idea"), Variant("bm25", 1), step())
    assert bad_reply.element_id is None and not bad_reply.endpoint_failed


async def test_looked_up_snippets_that_would_overflow_go_back_to_gists_last_first():
    big = [
        Snippet(index=i, ids=[str(i)], text=f"<div id={i}> " + "word " * 2000 + "</div>", words=2002) for i in range(3)
    ]
    client = fake_client(scripted([0, 1, 2], action_id="0"))
    memory = await build_web_memory(client, big)
    budget = estimate_tokens(memory.render_indexed(expanded=[0, 1])) + 1
    decision = await act_on_memory(
        client,
        memory,
        looked_up=[0, 1, 2],
        task="t",
        previous_actions=[],
        valid_ids={"0", "1", "2"},
        context_tokens=budget,
    )
    assert decision.expanded == [0, 1] and decision.dropped_for_context == [2]
    assert decision.allowed == ["0", "1"] and decision.action.element_id == "0"


async def test_unchanged_snippets_reuse_their_gists_across_steps():
    reuse = GistReuse()
    backend = scripted([0], action_id="2")
    client = fake_client(backend)  # no persistent cache: the reuse is in-process
    await build_web_memory(client, snippets(), reuse=reuse)
    changed = snippets()
    changed[1] = Snippet(
        index=1, ids=changed[1].ids, text=changed[1].text.replace("Search", "Search now"), words=changed[1].words + 1
    )
    await build_web_memory(client, changed, reuse=reuse)
    gist_calls = [r for r in backend.requests if r["purpose"] == "gist"]
    assert len(gist_calls) == 3 + 1 and reuse.reused == 2
