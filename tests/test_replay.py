"""Procedural memory on the demo shop: a run by the function-driven fake, then replays with
the model forbidden (0 calls), with parameters (another book, another name), through the
CLI and the workflow store; plus the fingerprint, match and parameter units."""

import asyncio
import json
from urllib.parse import parse_qs, urlsplit

import pytest
from browser_support import requires_chromium
from click.testing import CliRunner
from replay_support import Forbidden, record_demo

from webagent import replay
from webagent.browser import REDACTED
from webagent.demo_site import SITE_DIR, demo_task_done, serve_directory
from webagent.errors import UserError
from webagent.llm.testing import fake_client
from webagent.replay import store
from webagent.trace import params as P
from webagent.trace import workflow
from webagent.trace.fingerprint import Place, describe_element, parse, url_pattern
from webagent.trace.match import find
from webagent.trace.step import RecordedStep


@pytest.fixture(scope="module")
def site():
    base, stop = serve_directory(SITE_DIR)
    yield base
    stop()


def _steps(folder):
    return [json.loads(line) for line in (folder / "steps.jsonl").read_text().splitlines()]


@pytest.mark.browser
@requires_chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_replay_of_the_demo_order_needs_no_model(site, tmp_path):
    run, backend = await record_demo(site, tmp_path / "run")
    assert demo_task_done(run.final_url, site) and backend.requests
    records = _steps(tmp_path / "run")
    assert all(r["target"]["tag"] for r in records if r["action"]["operation"] in ("CLICK", "TYPE", "SELECT"))

    program = workflow.from_trace(tmp_path / "run")
    assert [s.op for s in program.steps] == ["TYPE", "CLICK", "TYPE", "SELECT", "CLICK", "DONE"]
    # Typed values found in the task are parameters, named after their fields.
    assert program.params == {
        "search_books": {"default": "Night Trains", "source": "task"},
        "name": {"default": "Ada Lovelace", "source": "task"},
    }

    forbidden = Forbidden()
    again = await replay(
        tmp_path / "run", url=site + "index.html", llm=fake_client(forbidden), trace_dir=tmp_path / "replay"
    )
    assert (again.status, again.error) == ("done", None)
    assert forbidden.requests == [] and again.model_calls == 0
    assert demo_task_done(again.final_url, site)  # the shop confirmed the order
    assert (again.replayed, again.repaired, again.steps) == (6, 0, 6)
    assert again.answer == run.answer

    folder = tmp_path / "replay"
    steps = _steps(folder)
    assert [s["replay"] for s in steps] == ["replayed"] * 6
    assert all(s["match"]["score"] >= 0.9 for s in steps if s["match"])
    assert all((folder / s["screenshot"]).is_file() for s in steps)
    summary = json.loads((folder / "run.json").read_text())
    assert summary["status"] == "done" and summary["replay"]["model_calls"] == 0
    assert summary["replay"]["replayed"] == 6 and summary["wall_s"] > 0
    html = (folder / "report.html").read_text()
    assert "webagent replay: done" in html and html.count('class="mark replayed"') >= 12
    assert (folder / "workflow.json").is_file()


@pytest.mark.browser
@requires_chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_parameterised_replay_orders_another_book_for_another_name(site, tmp_path):
    await record_demo(site, tmp_path / "run", save_as="order-book")
    assert store.exists("order-book")
    forbidden = Forbidden()
    again = await replay(
        "order-book",
        {"search_books": "Tea Gardens of Assam", "name": "Grace Hopper"},
        url=site + "index.html",
        llm=fake_client(forbidden),
        trace_dir=tmp_path / "replay",
    )
    assert again.status == "done" and forbidden.requests == []
    final = parse_qs(urlsplit(again.final_url).query)
    assert again.final_url.startswith(site + "confirm.html")
    assert (final["item"], final["name"], final["shipping"]) == (["b5"], ["Grace Hopper"], ["express"])
    assert again.answer == "Tea Gardens of Assam"  # the recorded answer, with the new value
    steps = _steps(tmp_path / "replay")
    assert steps[0]["action"]["value"] == "Tea Gardens of Assam" and steps[0]["param"] == "search_books"
    assert steps[1]["element"].endswith("Tea Gardens of Assam")  # the link named after the parameter
    summary = json.loads((tmp_path / "replay" / "run.json").read_text())
    assert summary["replay"]["params"] == {"search_books": "Tea Gardens of Assam", "name": "Grace Hopper"}

    with pytest.raises(UserError, match="unknown --param"):
        await replay("order-book", {"colour": "red"}, url=site + "index.html", llm=fake_client(forbidden))


@pytest.mark.browser
@requires_chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_cli_run_save_as_replay_and_workflows(site, tmp_path, monkeypatch):
    from webagent.cli import main

    await record_demo(site, tmp_path / "run", save_as="shop", params={"ship": "Express (1 day)"})
    runner = CliRunner()
    invoke = lambda args: asyncio.to_thread(runner.invoke, main, args)  # noqa: E731

    out = await invoke(["workflows", "list"])
    assert out.exit_code == 0 and "shop" in out.output and "ship" in out.output
    out = await invoke(["workflows", "show", "shop"])
    assert out.exit_code == 0, out.output
    assert "param ship = 'Express (1 day)'  [declared]" in out.output
    assert 'SELECT "Express (1 day)" {ship} in [combobox] "Shipping"' in out.output

    out = await invoke(
        [
            "replay",
            "shop",
            "--url",
            site + "index.html",
            "--no-model",
            "--param",
            "ship=Pick up in store",
            "--trace-dir",
            str(tmp_path / "cli-replay"),
            "--json",
        ]
    )
    assert out.exit_code == 0, out.output
    result = json.loads(out.output.strip().splitlines()[-1])
    assert result["status"] == "done" and result["model_calls"] == 0 and result["replayed"] == 6
    assert parse_qs(urlsplit(result["final_url"]).query)["shipping"] == ["pickup"]

    out = await invoke(["replay", str(tmp_path / "nowhere")])
    assert out.exit_code != 0 and "neither a trace folder nor a saved workflow" in out.output
    out = await invoke(["workflows", "rm", "shop"])
    assert out.exit_code == 0 and not store.exists("shop")


# --- units: no browser -----------------------------------------------------------------

PAGE = """<html><body><header><h1>Order</h1></header>
<form action="confirm.html" id="order" backend_node_id="1">
<label backend_node_id="2">Your name <input type="text" name="name" id="name" backend_node_id="3"/></label>
<label backend_node_id="4">Shipping <select name="shipping" backend_node_id="5"><option backend_node_id="6">Express</option></select></label>
<button type="submit" backend_node_id="7">Add to cart</button><button type="submit" backend_node_id="8">Add to cart</button>
</form></body></html>"""


def test_fingerprint_reads_name_label_form_and_heading():
    el = parse(PAGE).xpath("//*[@backend_node_id='5']")[0]
    fp = describe_element(el)
    assert (fp.tag, fp.role, fp.name, fp.label) == ("select", "combobox", "Shipping", "Shipping")
    assert fp.attrs == {"name": "shipping"} and fp.form == {"action": "confirm.html", "id": "order"}
    assert fp.heading == "Order" and fp.landmarks == ["form"]
    assert url_pattern("http://127.0.0.1:5/results.html?q=x&b=2") == "/results.html?b&q"


def test_match_is_unique_or_says_why():
    field = describe_element(parse(PAGE).xpath("//*[@backend_node_id='3']")[0])
    moved = PAGE.replace('id="name" ', 'id="customer" ').replace('backend_node_id="3"', 'backend_node_id="33"')
    assert find(field, moved).element_id == "33"
    button = describe_element(parse(PAGE).xpath("//*[@backend_node_id='8']")[0])
    button.nth = Place(of_name=[1, 2])
    assert find(button, PAGE).element_id == "8"  # told apart by position
    button.nth = Place()
    miss = find(button, PAGE)
    assert not miss.found and "not found uniquely" in miss.why
    relabelled = PAGE.replace("Add to cart</button><button", "Buy</button><button").replace(
        ">Add to cart<", ">Buy now<"
    )
    gone = find(button, relabelled)
    assert not gone.found and "none shares its name" in gone.why


def test_params_infer_declare_and_never_store_passwords():
    steps = [
        RecordedStep.model_validate(step)
        for step in (
            {"op": "TYPE", "value": "Night Trains", "target": {"attrs": {"name": "q"}, "label": "Search books"}},
            {"op": "TYPE", "value": "ada", "target": {"attrs": {"name": "user"}}},
            {"op": "TYPE", "value": REDACTED, "secret": True, "target": {"attrs": {"name": "pw"}}},
            {"op": "SELECT", "value": "Express (1 day)", "target": {"attrs": {"name": "shipping"}}},
        )
    ]
    params = P.assign(steps, 'Buy "Night Trains" as ada', {"ship": "Express (1 day)"})
    assert params["search_books"] == {"default": "Night Trains", "source": "task"}
    assert params["user"]["default"] == "ada" and params["ship"]["source"] == "declared"
    assert params["password"]["default"] is None and steps[2].param == "password"
    with pytest.raises(UserError, match="--param password="):
        P.resolve(params, {})
    values = P.resolve(params, {"password": "s3cret", "search_books": "Tea"})
    mapping = P.substitution(params, values)
    assert P.step_value(steps[2], values, mapping) == "s3cret"
    assert P.step_value(steps[0], values, mapping) == "Tea" and P.apply("Order Night Trains", mapping) == "Order Tea"
    assert P.parse_params(["name=Ada Lovelace", "x=a=b"]) == {"name": "Ada Lovelace", "x": "a=b"}
    with pytest.raises(UserError):
        P.parse_params(["novalue"])
