"""Reasons as codes (issue 35, item 2): a reply the agent cannot use carries a kind beside its
message; the step record keeps the kind and the apps report counts refusals and model errors
by kind, never by the message's words (rewording a message changes no count)."""

from __future__ import annotations

import json

import pytest

from webagent.apps.episode import failure_cause
from webagent.llm.client import Reply
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.problems import PROBLEM_KINDS, REFUSED, Problem
from webagent.trace.record import step_record
from webagent.web.agent_view import Control
from webagent.web.live_action import Choices, parse_live_action, predict_live_action

CONTROLS = {
    "3": Control("3", "TYPE", "search field", "Search", form="f1"),
    "4": Control("4", "SELECT", "select", "Sort", ("Price", "Date"), "Price", form="f1"),
    "5": Control("5", "CLICK", "submit button", "Go", form="f1"),
}


def _record(kind, message="it does not fit"):
    return step_record(
        1, None, url="http://x/", title="t", result_text="", ok=False, problem=message, problem_kind=kind
    )


def test_every_refusal_kind_counts_and_unreadable_or_endpoint_do_not():
    assert REFUSED == set(PROBLEM_KINDS) - {"unreadable", "endpoint", "context_overflow", "nothing_to_act_on"}
    for kind in REFUSED:
        assert failure_cause("stuck", False, [_record(kind)]) == "stuck (after refusals)"
    assert failure_cause("stuck", False, [_record("unreadable")]) == "stuck"
    # the words of the message play no part: an old refusal's wording without its kind is no refusal
    assert failure_cause("max_steps", False, [_record(None, "'x' is not an option of [4]")]) == "step limit"


def test_a_model_error_is_told_by_its_kind():
    assert failure_cause("error", False, [_record("endpoint", "timed out")]) == "model error"
    assert failure_cause("error", False, [_record("context_overflow", "prompt too long")]) == "model error"
    assert failure_cause("error", False, [_record("unreadable", "the endpoint said no")]) == "error"


def test_a_problem_said_of_a_part_keeps_its_kind():
    part = Problem("bad_value", "'x' is not an option of [4]").within("field 2 ([4])")
    assert (part.kind, str(part)) == ("bad_value", "field 2 ([4]): 'x' is not an option of [4]")


@pytest.mark.asyncio
async def test_the_outcome_and_the_record_carry_the_last_replys_kind():
    choices = Choices(CONTROLS)
    bad = {"action": {"operation": "SELECT", "element_id": "4", "value": "Colour"}}
    action, problem = parse_live_action(Reply(text=json.dumps(bad), data=bad), choices)
    assert action is None and problem is not None and problem.kind == "bad_value"

    outcome = await predict_live_action(
        fake_client(FunctionBackend(lambda messages, params, purpose: bad)),
        context="\n".join(c.describe() for c in CONTROLS.values()),
        task="sort by colour",
        history=[],
        choices=choices,
    )
    assert outcome.action is None and outcome.failures == 1 and outcome.calls == 2  # re-asked once
    assert outcome.problem_kind == "bad_value" and "not an option" in (outcome.problem or "")
    record = _record(outcome.problem_kind, outcome.problem or "")
    assert record.problem_kind == "bad_value"
    assert failure_cause("stuck", False, [record]) == "stuck (after refusals)"


def test_how_a_run_ended_is_a_kind_and_the_cause_its_words():
    from webagent.apps.episode import ENDINGS, ending

    assert ending("done", True, []) == "site_confirmed" and failure_cause("done", True, []) is None
    assert ending("done", False, []) == "said_done"
    assert ending("max_steps", False, [_record("bad_value")]) == "step_limit"
    assert failure_cause("max_steps", False, [_record("bad_value")]) == "step limit (after refusals)"
    assert ending("error", False, [_record("endpoint")]) == "model_error"
    assert ending("interrupted", False, []) == "interrupted"
    assert set(ENDINGS) == {"site_confirmed", "said_done", "stuck", "step_limit", "model_error", "error", "interrupted"}


def test_the_ceilings_losses_are_counted_by_their_kind():
    from webagent.apps.episode import AppsRow
    from webagent.apps.report import _cause_kind

    lost = {"cause": "gold step 3 (click button 'Save'): no line shows button 'Save'", "loss": "not_offered"}
    assert _cause_kind(AppsRow.model_construct(**lost)) == "not offered"
    # the words play no part: the same message with another kind counts as that kind
    assert _cause_kind(AppsRow.model_construct(**{**lost, "loss": "refused"})) == "refused"
    assert _cause_kind(AppsRow.model_construct(cause="stuck")) == "stuck"
