"""The public Python API alone (``from webagent import Agent, replay``): run the demo order,
save it, replay it without the model; and ``import webagent`` stays light."""

import asyncio
import subprocess
import sys

import pytest
from browser_support import requires_chromium
from replay_support import Forbidden, demo_policy

from webagent import Agent, RunResult, replay


@pytest.mark.browser
@requires_chromium
def test_run_then_replay_through_the_public_api(tmp_path):
    from webagent.llm.testing import FunctionBackend, fake_client  # the fakes that ship with the package

    backend = FunctionBackend(demo_policy)
    agent = Agent(
        'Buy the book "Night Trains" for Ada Lovelace with express shipping.',
        demo=True,
        llm=fake_client(backend),
        max_steps=8,
        save_as="night-trains",
        trace_dir=tmp_path / "run",
    )
    result = agent.run_sync()
    assert isinstance(result, RunResult) and result.ok, result.error
    # The shop's confirmation ends the run (the site's word), before the model's DONE.
    assert result.answer == "the shop confirmed the order" and result.demo_order_placed
    assert "/confirm.html?" in result.final_url and result.steps == 5
    assert result.usage["calls"] == len(backend.requests) and result.trace_dir == tmp_path / "run"
    assert result.saved_as == "night-trains" and (result.trace_dir / "report.html").is_file()

    forbidden = Forbidden()
    again = asyncio.run(replay("night-trains", demo=True, llm=fake_client(forbidden), trace_dir=tmp_path / "replay"))
    assert again.ok and again.demo_order_placed and again.model_calls == 0 and forbidden.requests == []
    assert (again.replayed, again.repaired) == (6, 0)  # five actions, then the confirmation page checked
    other = asyncio.run(
        replay(
            "night-trains",
            {"name": "Grace Hopper"},
            demo=True,
            llm=fake_client(forbidden),
            trace_dir=tmp_path / "other",
        )
    )
    assert other.ok and "name=Grace+Hopper" in other.final_url and not other.demo_order_placed


def test_import_is_light():
    code = (
        "import sys, webagent; heavy = [m for m in ('playwright', 'pydantic', 'lxml', 'openai', 'click', "
        "'asyncio', 'webagent.agent', 'webagent.llm') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("url", ["ftp://example.test/", "http://", "javascript:alert(1)"])
def test_a_run_refused_before_it_starts_leaves_no_trace_folder(tmp_path, monkeypatch, url):
    from webagent.errors import UserError

    monkeypatch.chdir(tmp_path)  # the default trace folder is runs/agent/<time>-<task> under the cwd
    for trace_dir in (None, tmp_path / "t"):
        with pytest.raises(UserError, match="not an http"):
            Agent("x", url=url, model="fake:heuristic", params={"name": "Ada"}, trace_dir=trace_dir).run_sync()
    with pytest.raises(UserError, match="workflow name"):
        Agent("x", url="http://127.0.0.1:9/", model="fake:heuristic", save_as="../bad name").run_sync()
    assert list(tmp_path.iterdir()) == []
