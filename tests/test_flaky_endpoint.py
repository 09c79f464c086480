"""A flaky endpoint at 127.0.0.1 (30% of completion calls fail: HTTP 500, 429, dropped
connections, a 200 whose body is not JSON): `ask` and `mind2web eval` finish, retries and
failures are counted, no step is lost, and a resume re-runs only the endpoint-failed steps."""

import json
from pathlib import Path

import pytest

from mind2web.data import load_tasks
from mind2web.methods import expand_variants
from mind2web.rows import read_rows
from mind2web.runner import STEPS_FILE, EvalConfig, run_eval
from webagent.docqa.ask import ask
from webagent.docqa.options import QAOptions
from webagent.llm.client import LLMClient
from webagent.llm.openai_backend import OpenAIBackend
from webagent.llm.testing import FakeOpenAIServer, heuristic_reply

ROOT = Path(__file__).parent.parent
DOC = ROOT / "examples" / "qmsum_remote_control_meeting.txt"
FIXTURES = ROOT / "tests" / "fixtures" / "mind2web"


def purpose_of(prompt: str) -> str:
    if "natural to break reading" in prompt:
        return "pagination"
    if "What should be the next action" in prompt:
        return "action"
    if "I want to look up" in prompt:
        return "lookup"
    if "Please shorten" in prompt:
        return "gist"
    return "answer"


def responder(messages, body):
    reply = heuristic_reply(messages, body, purpose_of(messages[0]["content"]))
    return reply if isinstance(reply, str) else json.dumps(reply)


def client_for(server: FakeOpenAIServer, max_retries: int = 4) -> LLMClient:
    backend = OpenAIBackend(server.base_url, "fake", None, timeout_s=10)
    return LLMClient(backend, concurrency=4, max_retries=max_retries, backoff_s=0.0)


@pytest.fixture
async def flaky():
    async with FakeOpenAIServer(responder=responder, fault_rate=0.3, seed=1) as server:
        yield server


async def test_ask_finishes_on_a_flaky_endpoint_and_counts_the_retries(flaky):
    client = client_for(flaky)
    result = await ask(client, DOC, "What did they decide about safety?", QAOptions(min_words=150, max_words=300))
    await client.close()
    assert result.answer and result.num_pages > 5
    assert sum(flaky.faults.values()) > 5 and all(n > 0 for n in flaky.faults.values())  # every kind happened
    assert result.usage["retries"] == sum(flaky.faults.values()) - result.usage["failures"]
    assert result.usage["failures"] == 0 and result.gist_failures == 0 and result.pagination_fallbacks == 0


async def test_eval_loses_no_step_and_a_resume_reruns_only_endpoint_failures(tmp_path, flaky):
    tasks = load_tasks(str(FIXTURES), split="test_website")
    variants = expand_variants(["bm25", "gistmem", "readagent-p"], top_k=[1], max_lookup=[1])
    planned = sum(len(t.actions) for t in tasks) * len(variants)
    out = tmp_path / "run"
    # First run with one retry only, so some calls fail for good on the endpoint.
    client = client_for(flaky, max_retries=1)
    config = EvalConfig.for_client(
        client,
        data=str(FIXTURES),
        split="test_website",
        depth="auto",
        budget_words=300,
        context_tokens=8192,
        previous_k=5,
        act_on="looked-up",
    )
    first = await run_eval(client, tasks, variants, out, config)
    await client.close()
    rows = read_rows(out / STEPS_FILE)
    assert len({r.key for r in rows}) == planned  # no step lost: each one has a row
    endpoint_failed = {r.key for r in rows if r.endpoint_failed}
    assert first["endpoint_failures"] == len(endpoint_failed) > 0
    kept = {r.key: r for r in rows if not r.endpoint_failed}
    assert client.usage.total.retries > 0 and client.usage.total.failures > 0

    # The resume (normal retries) re-runs exactly the endpoint-failed steps.
    client = client_for(flaky)
    second = await run_eval(client, tasks, variants, out, config)
    await client.close()
    assert second["ran"] == len(endpoint_failed) and second["resumed"] == planned - len(endpoint_failed)
    final = {r.key: r for r in read_rows(out / STEPS_FILE)}  # the last row per step
    assert len(final) == planned and not any(r.endpoint_failed for r in final.values())
    assert all(final[k] == v for k, v in kept.items())  # the other rows are untouched
