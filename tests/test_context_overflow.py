"""A context overflow is a kind, not prose (issue 46, item 5): the client reads the endpoint's
words once and raises ``ContextOverflow``; the outcome carries the problem kind
"context_overflow"; the callers that shorten the prompt test the kind. A problem whose text
merely mentions "too long" (the model's own words, echoed back) is no overflow."""

from __future__ import annotations

import pytest

from mind2web.methods import StepInput, Variant, predict
from webagent.agent.decide import DecideContext, decide
from webagent.agent.options import AgentOptions
from webagent.html import Snippet
from webagent.llm.client import ContextOverflow, ModelCallError
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.problems import CALL_FAILED, REFUSED
from webagent.web.action import ActionOutcome, predict_action
from webagent.web.agent_view import view_snippets
from webagent.web.live_action import Choices, LiveOutcome, predict_live_action
from webagent.web.web_memory import act_on_memory, build_web_memory

LLAMA_CPP = "request (431 tokens) exceeds the available context size (256 tokens), try increasing it"
FORM = (
    '<html><body><form><label>Search <input type="text" backend_node_id="3" name="q"></label>'
    '<select backend_node_id="4"><option>Price</option><option>Date</option></select>'
    '<button backend_node_id="5">Go</button></form></body></html>'
)


def refusing(message: str):
    def fn(messages, params, purpose):
        raise ModelCallError(f"http://x refused the request: HTTP 400: {message}")

    return fn


async def test_the_client_raises_the_kind_with_the_endpoints_words_and_does_not_retry():
    backend = FunctionBackend(refusing(LLAMA_CPP))
    client = fake_client(backend, backoff_s=0.0)
    with pytest.raises(ContextOverflow) as err:
        await client.complete("word " * 400, purpose="answer")
    assert str(err.value) == f"http://x refused the request: HTTP 400: {LLAMA_CPP}"  # the message as before
    assert len(backend.requests) == 1 and client.usage.total.failures == 1 and client.usage.total.retries == 0
    with pytest.raises(ModelCallError) as other:  # another refusal stays what it was
        await fake_client(FunctionBackend(refusing("invalid api key"))).complete("hi", purpose="answer")
    assert type(other.value) is ModelCallError


async def test_an_overflow_reaches_the_outcome_as_its_kind():
    action = await predict_action(
        fake_client(FunctionBackend(refusing(LLAMA_CPP))),
        context="<a id=1> Home </a>",
        task="t",
        previous_actions=[],
        allowed_ids=["1"],
    )
    assert action.action is None and action.problem_kind == "context_overflow" and LLAMA_CPP in (action.problem or "")
    snippets, view = view_snippets(FORM)
    live = await predict_live_action(
        fake_client(FunctionBackend(refusing(LLAMA_CPP))),
        context=snippets[0].text,
        task="t",
        history=[],
        choices=Choices(view.controls),
    )
    assert live.action is None and live.problem_kind == "context_overflow"
    down = await predict_live_action(
        fake_client(FunctionBackend(refusing("invalid api key"))),
        context=snippets[0].text,
        task="t",
        history=[],
        choices=Choices(view.controls),
    )
    assert down.problem_kind == "endpoint"  # any other failed call: as before


def test_an_overflow_is_a_failed_call_not_a_refused_reply():
    from webagent.apps.episode import ending

    assert "context_overflow" in CALL_FAILED and "context_overflow" not in REFUSED
    assert ending("error", False, [_step("context_overflow")]) == "model_error"  # as when it counted as "endpoint"


def _step(kind):
    from webagent.trace.record import step_record

    return step_record(1, None, url="http://x/", title="t", result_text="", ok=False, problem="p", problem_kind=kind)


async def test_the_raw_page_is_not_cut_for_a_problem_that_only_says_too_long():
    """The model names an id that is not on the page, "too long": the problem quotes it. Before,
    its words read as an overflow and the page was cut and asked again, four times over."""
    prompts = []

    def fn(messages, params, purpose):
        prompts.append(messages[-1]["content"])
        return {"element_id": "too long", "operation": "CLICK", "value": ""}

    html = "<html><body>" + "".join(f"<a backend_node_id={i}>link {i}</a>" for i in range(1, 40)) + "</body></html>"
    step = StepInput("open link 3", [], [Snippet(0, ["1"], html, 80)], html)
    pred = await predict(fake_client(FunctionBackend(fn)), Variant("raw"), step, context_tokens=1024)
    assert pred.element_id is None and "too long" in (pred.problem or "")
    assert len(prompts) == 2  # the call and its re-ask, on one cut of the page


async def test_expanded_snippets_stay_for_a_problem_that_only_says_too_long():
    big = [Snippet(index=i, ids=[str(i)], text=f"<div id={i}> page {i} </div>", words=4) for i in range(3)]
    client = fake_client(FunctionBackend(lambda messages, params, purpose: "a gist"))
    memory = await build_web_memory(client, big)

    async def act(kind):
        async def predict(context, allowed, hint):
            return ActionOutcome(problem="the value 'x' is too long for the field", problem_kind=kind)

        return await act_on_memory(
            client,
            memory,
            looked_up=[0, 1, 2],
            task="t",
            previous_actions=[],
            valid_ids={"0", "1", "2"},
            context_tokens=100_000,
            predict=predict,
        )

    kept = await act(None)
    assert kept.expanded == [0, 1, 2] and kept.dropped_for_context == []
    dropped = await act("context_overflow")
    assert dropped.expanded == [] and dropped.dropped_for_context == [2, 1, 0]  # the kind: one back each time


def live_model(overflow_on_whole_page: bool, value: str = "Date"):
    """The whole page (its first action call) overflows, or answers SELECT ``value``; on the
    gists every action call answers CLICK [5]."""
    state = {"actions": 0}

    def fn(messages, params, purpose):
        if purpose == "gist":
            return "a search form"
        if purpose == "lookup":
            return {"pages": [0], "reason": "the form"}
        state["actions"] += 1
        if state["actions"] == 1 and overflow_on_whole_page:
            return ModelCallError(f"http://x refused the request: HTTP 400: {LLAMA_CPP}")
        if state["actions"] <= 2 and not overflow_on_whole_page:
            return {"action": {"operation": "SELECT", "element_id": "4", "value": value}}
        return {"action": {"operation": "CLICK", "element_id": "5"}}

    return FunctionBackend(fn)


async def _decide(backend):
    snippets, view = view_snippets(FORM)
    options = AgentOptions(lookup="auto", context_tokens=8192)
    ctx = DecideContext(snippets=snippets, controls=view.controls, task="t", history=[], options=options)
    return await decide(fake_client(backend), ctx)


async def test_a_whole_page_that_overflows_is_read_again_through_its_gists():
    backend = live_model(overflow_on_whole_page=True)
    decision = await _decide(backend)
    assert decision.lookup_skipped is None and decision.gists == ["a search form"]
    assert isinstance(decision.outcome, LiveOutcome) and decision.outcome.action is not None
    assert decision.outcome.action.element_id == "5"
    assert [r["purpose"] for r in backend.requests] == ["action", "gist", "lookup", "action"]


async def test_a_refused_value_that_says_too_long_keeps_the_whole_page():
    backend = live_model(overflow_on_whole_page=False, value="too long")
    decision = await _decide(backend)
    assert decision.outcome.problem_kind == "bad_value" and "too long" in (decision.outcome.problem or "")
    assert decision.lookup_skipped and [r["purpose"] for r in backend.requests] == ["action", "action"]
