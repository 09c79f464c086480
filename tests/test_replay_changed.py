"""Repair, not restart: the demo order recorded on the shop, replayed on a changed copy
(tests/fixtures/demo_site_changed: other element ids, another order of books, wrapper
markup, the order button relabelled "Confirm purchase"; the same flow). Only the step
whose element cannot be matched goes to the model; the repaired trace and the updated
saved workflow then replay with 0 model calls; --no-model stops at that step and says why."""

import json

import pytest
from browser_support import requires_chromium
from replay_support import CHANGED_SITE, Forbidden, confirm_button_policy, record_demo

from webagent import replay
from webagent.demo_site import SITE_DIR, demo_task_done, serve_directory
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.replay import store

pytestmark = [pytest.mark.browser, requires_chromium, pytest.mark.asyncio(loop_scope="module")]


@pytest.fixture(scope="module")
def sites():
    base, stop = serve_directory(SITE_DIR)
    changed, stop_changed = serve_directory(CHANGED_SITE)
    yield base, changed
    stop()
    stop_changed()


async def test_changed_shop_is_repaired_only_where_the_element_changed(sites, tmp_path):
    site, changed = sites
    await record_demo(site, tmp_path / "run", save_as="shop")

    # Without the model the replay stops at the relabelled button, and says so.
    forbidden = Forbidden()
    stopped = await replay(
        "shop", url=changed + "index.html", llm=fake_client(forbidden), no_model=True, trace_dir=tmp_path / "no-model"
    )
    assert stopped.status == "error" and forbidden.requests == []
    assert stopped.error.startswith('step 5 (CLICK [button] "Place order"): no <button> on the page like')
    assert "--no-model" in stopped.error and stopped.replayed == 4

    # With it: the four steps whose elements are found again are replayed, step 5 alone is repaired.
    backend = FunctionBackend(confirm_button_policy)
    result = await replay("shop", url=changed + "index.html", llm=fake_client(backend), trace_dir=tmp_path / "repaired")
    assert (result.status, result.error) == ("done", None)
    assert demo_task_done(result.final_url, changed)  # the changed shop confirmed the order
    assert (result.replayed, result.repaired) == (5, 1)
    assert [m["step"] for m in result.misses] == [5] and result.misses[0]["repaired"]
    assert result.model_calls == len(backend.requests) == 1
    steps = [json.loads(line) for line in (tmp_path / "repaired" / "steps.jsonl").read_text().splitlines()]
    assert [s["replay"] for s in steps] == ["replayed"] * 4 + ["repaired", "replayed"]
    assert steps[4]["hint"] == 'last time: CLICK [button] "Place order"'
    assert steps[4]["usage"]["calls"] == 1 and steps[4]["target"]["name"] == "Confirm purchase"
    assert all(s["usage"].get("calls", 0) == 0 for s in steps if s["replay"] == "replayed")
    assert steps[1]["match"]["shared"] and "name" in steps[1]["match"]["shared"]  # the book, moved in the list
    program = json.loads((tmp_path / "repaired" / "workflow.json").read_text())
    assert program["steps"][4]["repaired"] and program["steps"][4]["target"]["name"] == "Confirm purchase"
    assert result.saved_as == "shop"  # the store keeps the repaired program
    assert (target := store.load("shop").steps[4].target) is not None and target.name == "Confirm purchase"
    assert 'class="mark repaired"' in (tmp_path / "repaired" / "report.html").read_text()

    # The next replays are model-free again: from the repaired trace folder, and by name.
    for source in (tmp_path / "repaired", "shop"):
        forbidden = Forbidden()
        again = await replay(
            source,
            url=changed + "index.html",
            llm=fake_client(forbidden),
            trace_dir=tmp_path / f"again-{len(str(source))}",
        )
        assert (again.status, again.model_calls, again.repaired) == ("done", 0, 0), again.error
        assert forbidden.requests == [] and demo_task_done(again.final_url, changed)
