"""Issue 47's guards in live runs with fake models on local pages: a loop broken in code (the
repeated action out of the next step's schema, the model told what the page already shows,
the run going on), DONE grounded in what the run saw (an answer no page showed refused once
with the nearest spans; an empty DONE with nothing changed refused once, naming the form left
unsent), and the short reason before the action (in the schema first, in the trace and the
report, never executed)."""

import time
from pathlib import Path

import pytest
import pytest_asyncio
from agent_support import trace_lines
from browser_support import requires_chromium

from webagent.agent import AgentOptions, run_agent
from webagent.agent.grounding import Grounds, row_counts
from webagent.agent.report import write_report
from webagent.browser import BrowserSession
from webagent.demo_site import serve_directory
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.problems import REFUSED
from webagent.trace.writer import TraceWriter
from webagent.web.live_action import REASON_CHARS

pytestmark = [pytest.mark.browser, requires_chromium, pytest.mark.asyncio(loop_scope="module")]
FIXTURES = Path(__file__).parent / "fixtures"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser():
    async with BrowserSession() as browser:
        yield browser


@pytest.fixture(scope="module")
def site():
    guards, stop = serve_directory(FIXTURES / "guard_pages")
    pages, stop_pages = serve_directory(FIXTURES / "agent_pages")
    yield {"guards": guards, "pages": pages}
    stop()
    stop_pages()


async def _run(browser, url, policy, tmp_path, task="Find a tea", **options):
    browser.guard = None
    assert (await browser.open(url)).ok
    backend = FunctionBackend(policy)
    trace = TraceWriter(tmp_path / "trace")
    result = await run_agent(
        browser,
        fake_client(backend),
        task,
        options=AgentOptions(screenshots=False, form_check=False, **options),
        trace=trace,
    )
    write_report(trace.folder)
    return result, backend, trace_lines(trace)


def _schema(request) -> dict:
    return request["params"]["response_format"]["json_schema"]["schema"]


def _clickable(request) -> list[str]:
    """The ids a step's schema lets the model CLICK."""
    branches = _schema(request)["properties"]["action"]["anyOf"]
    return [
        i
        for b in branches
        if b["properties"]["operation"]["enum"] == ["CLICK"]
        for i in b["properties"]["element_id"]["enum"]
    ]


def _actions(backend) -> list[dict]:
    return [r for r in backend.requests if r["purpose"] == "action"]


async def test_a_search_repeated_with_no_change_leaves_the_next_schema(browser, site, tmp_path):
    """Searched, then the same search clicked again on its own results: it changed nothing, so
    the next step's schema no longer offers it, and the model is told what the page shows (the
    results), without a word toward DONE; the run goes on (here to an answer the page shows)."""

    def policy(messages, params, purpose, context):
        search = context.control_id("button", "Search")
        if not context.history:
            return {"operation": "TYPE", "element_id": context.control_id("text field", "Search"), "value": "tea"}
        if search in _clickable({"params": params}):
            return {"operation": "CLICK", "element_id": search}
        return {"operation": "DONE", "value": "Mint tea"}  # (the page shows it)

    result, backend, steps = await _run(browser, site["guards"] + "search.html", policy, tmp_path, max_steps=4)
    results = [s["result_text"].split(";")[0] for s in steps]
    assert results[:3] == ["ok", "ok, now on " + site["guards"] + "search.html?q=tea", "no visible change"]
    calls = _actions(backend)
    search = steps[2]["action"]["element_id"]
    assert search in _clickable(calls[2]) and search not in _clickable(calls[3])
    told = str(calls[3]["messages"][-1]["content"])
    assert "changed nothing on this page; it is not offered here again" in told
    assert 'The page already shows: "3 results for tea"; "Green tea"; "$4.00"; "Black tea"' in told
    assert "DONE" not in steps[3]["warning"] and steps[3]["warning"] in told
    assert (result.status, result.answer, result.steps) == ("done", "Mint tea", 4)


async def test_a_repeat_the_schema_cannot_exclude_is_refused_and_the_run_ends_only_when_nothing_else_comes(
    browser, site, tmp_path
):
    """The same search typed with Enter (free text: no enum can leave it out) is refused after
    the reply, with what the page shows, and re-asked; the run is not stuck at the third repeat
    but asks afresh, and ends as stuck only when the model gives nothing but that search three
    times."""

    def policy(messages, params, purpose, context):
        field = context.control_id("text field", "Search")
        return {"operation": "TYPE", "element_id": field, "value": "tea", "press_enter": True}

    result, backend, steps = await _run(browser, site["guards"] + "search.html", policy, tmp_path, max_steps=8)
    assert [s["result_text"].split(";")[0].split(",")[0] for s in steps[:2]] == ["ok", "no visible change"]
    third = steps[2]
    assert third["action"] is None and third["problem_kind"] == "repeated" and "repeated" in REFUSED
    assert "it is not offered here again. The page already shows:" in third["problem"]
    assert '"3 results for tea"' in third["problem"]
    reask = str(_actions(backend)[3]["messages"][-1]["content"])
    assert reask.startswith("Your reply could not be used:") and "not offered here again" in reask
    assert (result.status, result.steps) == ("stuck", 5), result
    assert result.error == "the model gave only actions already repeated on this page, 3 times"
    # without the loop breaker, the old rule: the same action on the same page three times
    old, _, _ = await _run(browser, site["guards"] + "search.html", policy, tmp_path / "off", loop_breaker=False)
    assert (old.status, old.steps) == ("stuck", 4) and "3 times" in (old.error or "")


async def test_the_same_click_three_times_in_a_row_each_changing_the_page_re_plans_and_stays_offered(
    browser, site, tmp_path
):
    """A counter's "Add one", clicked again and again: each click changes the page (a new page
    state each time, so no ban applies). The third time in a row, the run re-plans (the model's
    conversation restarted) and the model is told it; the click stays offered (it may be meant)."""

    def policy(messages, params, purpose, context):
        if len(context.history) < 4:
            return {"operation": "CLICK", "element_id": context.control_id("button", "Add one")}
        return {"operation": "DONE", "value": ""}

    result, backend, steps = await _run(browser, site["pages"] + "counter.html", policy, tmp_path, task="Add four")
    assert [s["ok"] and s["changed"] for s in steps[:4]] == [True] * 4
    assert not steps[1].get("warning") and not steps[2].get("warning")
    calls = _actions(backend)
    told = steps[3]["warning"]
    assert told == (
        "CLICK [button]  Add one was done 3 times in a row (steps 1 to 3), the page changing each time."
        ' The page now shows: "3"'
    )
    assert "DONE" not in told and told in str(calls[3]["messages"][-1]["content"])
    assert len(calls[3]["messages"]) < len(calls[2]["messages"])  # re-planned: the conversation restarted
    assert steps[3]["action"]["element_id"] in _clickable(calls[3])  # still offered
    assert "4 times in a row" in steps[4]["warning"]
    assert (result.status, result.steps) == ("done", 5)


async def test_a_lap_of_pages_comes_back_with_new_ids_and_what_led_away_is_out_of_the_choices(browser, site, tmp_path):
    """The 1.5B's lap through the MCP server: shop, book, order, "Back to the shop", and round
    again, each page a new document with new ids. Back on the shop as it was, the book's link
    that led away (at another id now) is out of the schema and the model is told it is back;
    the order is placed once, and the run goes on (here to a DONE). Without the loop breaker
    the lap repeats until the step limit."""

    def policy(messages, params, purpose, context):
        names = {c.name for c in context.controls.values()}
        if "Back to the shop" in names:
            return {"operation": "CLICK", "element_id": context.control_id("link", "Back to the shop")}
        if "Order" in names:
            field = context.control_id("text field", "Name")
            return {"operation": "TYPE", "element_id": field, "value": "Ada", "press_enter": True}
        book = context.control_id("link", "Night Trains")
        if book in _clickable({"params": params}):
            return {"operation": "CLICK", "element_id": book}
        return {"operation": "DONE", "value": "Night Trains is on its way."}

    result, backend, steps = await _run(browser, site["guards"] + "shop.html", policy, tmp_path, max_steps=8)
    urls = [s["url"].rsplit("/", 1)[1] for s in steps]
    assert urls == ["shop.html", "book.html", "ordered.html?name=Ada", "shop.html"], urls
    calls = _actions(backend)
    told = str(calls[-1]["messages"][-1]["content"])
    assert len(_clickable(calls[0])) == 2 and len(_clickable(calls[-1])) == 1  # "Salt Roads" alone is left
    assert "The run is back on this page as it was at step 1, where CLICK [link]  Night Trains was done" in told
    assert "it is not offered here again" in told
    assert (result.status, result.steps) == ("done", 4), result
    assert sum("ordered.html" in s.get("result_text", "") for s in steps) == 1
    off, _, off_steps = await _run(
        browser, site["guards"] + "shop.html", policy, tmp_path / "off", max_steps=8, loop_breaker=False
    )
    assert sum("ordered.html" in s.get("result_text", "") for s in off_steps) >= 2 and off.status != "done"


async def test_a_list_filtered_after_a_pause_is_read_once_it_is_quiet(browser, site, tmp_path):
    """A value typed on a page whose list filters itself after a pause (a table's search that
    asks its server once the typing stops): the next step reads the filtered list, not the
    list as it was the moment the field took the value (the 1.5B answered with the owner of
    another ticket of the helpdesk's unfiltered list)."""

    def policy(messages, params, purpose, context):
        if not context.history:
            return {"operation": "TYPE", "element_id": context.control_id("search field", "Filter"), "value": "mint"}
        return {"operation": "DONE", "value": "Cy"}

    result, backend, steps = await _run(
        browser, site["guards"] + "filter.html", policy, tmp_path, task="Who owns mint?"
    )
    assert "Green tea, owner Ann" in str(_actions(backend)[0]["messages"])
    now = str(_actions(backend)[1]["messages"][-1]["content"])  # the page after step 1, as the model reads it
    assert "Mint tea, owner Cy" in now and "Green tea" not in now
    assert (result.status, result.answer) == ("done", "Cy")


async def test_a_page_with_a_clock_is_the_same_state_when_the_run_comes_back_to_it(browser, site, tmp_path):
    """A checkbox clicked on and off (the 0.5B clicked one six times on MiniWoB++'s
    click-checkboxes) beside a clock that ticks on its own: the clock's line is left out of the
    page's state, so the run sees it is back where a click led away, and the click is out of the
    choices there; without that every capture was a new state and the toggling went on to the
    step limit."""

    def policy(messages, params, purpose, context):
        time.sleep(0.3)  # a model takes time to decide: the clock ticks meanwhile, even on a loaded machine
        box = context.control_id("checkbox", "Send me news")
        if box in _clickable({"params": params}):
            return {"operation": "CLICK", "element_id": box}
        return {"operation": "DONE", "value": "Settings"}  # (a word the page shows: taken at once)

    result, _, steps = await _run(browser, site["guards"] + "toggle.html", policy, tmp_path, max_steps=8)
    clicks = [s for s in steps if (s.get("action") or {}).get("operation") == "CLICK"]
    assert 2 <= len(clicks) <= 3 and result.status == "done", [s["action_text"] for s in steps]
    assert not [s["result_text"] for s in clicks if "Time left" in s["result_text"]]  # a tick is no news


async def test_an_answer_no_page_showed_is_refused_once_with_the_nearest_spans(browser, site, tmp_path):
    answers = ["Issue 99: item number 99", "Issue 9: item number 9 of the list"]

    def policy(messages, params, purpose, context):
        return {"operation": "DONE", "value": answers[min(len(context.history), 1)]}

    result, _, steps = await _run(browser, site["pages"] + "list.html", policy, tmp_path, task="Which issue is 9?")
    first = steps[0]
    assert first["problem_kind"] == "ungrounded_answer" and not first["ok"]
    assert first["result_text"].startswith('refused: DONE refused once: no page of this run showed "Issue 99')
    assert 'The nearest text the pages showed: "Issue 9' in first["problem"]
    assert (result.status, result.answer, result.steps) == ("done", answers[1], 2)
    assert "Reason:" not in (tmp_path / "trace" / "report.html").read_text() or steps[0].get("reason")


async def test_an_answer_the_page_shows_only_as_what_the_run_typed_into_a_field_is_refused(browser, site, tmp_path):
    """The 1.5B typed the comment it was to save into a search box, then gave it as its answer:
    a field's value the run typed is not the site's word (a read-only field's value is)."""

    def policy(messages, params, purpose, context):
        if not context.history:
            return {
                "operation": "TYPE",
                "element_id": context.control_id("text field", "Title"),
                "value": "Gardening tips",
            }
        return {"operation": "DONE", "value": "Gardening tips"}

    result, _, steps = await _run(browser, site["guards"] + "note.html", policy, tmp_path, task="Save a note")
    assert steps[1]["problem_kind"] == "ungrounded_answer", [s["result_text"] for s in steps]
    assert result.status == "stuck" and steps[2]["problem_kind"] == "repeated"  # (said again on the same page)
    grounds = Grounds()
    grounds.typed_by_run(["Gardening tips", "x" * 200])
    grounds.see(['[4] text field "Title" value="Gardening tips"', f'[5] textarea "Body" value="{"x" * 119}…"'], "")
    grounds.see(['[6] read-only field "Title" value="Gardening tips"'], "")
    assert not grounds.shown("x" * 200) and grounds.shown("Gardening tips")  # (the read-only field's)


async def test_a_count_of_the_rows_a_page_showed_is_an_answer(browser, site, tmp_path):
    result, _, steps = await _run(
        browser,
        site["pages"] + "list.html",
        lambda m, p, purpose, context: {"operation": "DONE", "value": "40"},
        tmp_path,
        task="How many issues are listed?",
    )
    assert (result.status, result.answer, result.steps) == ("done", "40", 1)


async def test_a_done_with_nothing_changed_is_refused_once_naming_the_form_not_sent(browser, site, tmp_path):
    def policy(messages, params, purpose, context):
        done = len(context.history)
        if done == 0:
            return {"operation": "TYPE", "element_id": context.control_id("text field", "Title"), "value": "Tea"}
        if done == 2:
            return {"operation": "CLICK", "element_id": context.control_id("button", "Save")}
        return {"operation": "DONE", "value": ""}

    result, _, steps = await _run(browser, site["guards"] + "note.html", policy, tmp_path, task="Save a note Tea")
    refused = steps[1]
    assert refused["problem_kind"] == "no_change" and refused["result_text"].startswith("refused: DONE refused once")
    assert "nothing on the site was changed in this run" in refused["problem"]
    assert "[text field]  Title (step 1): its form was not sent" in refused["problem"]
    assert "Note saved: Tea" in steps[2]["result_text"]
    assert (result.status, result.steps) == ("done", 4)


async def test_a_refused_answer_said_again_on_the_same_page_is_a_repeat_and_taken_once_the_page_changed(
    browser, site, tmp_path
):
    """Grounding refuses an answer no page showed once; the same answer again on the same page
    state is a loop (the 1.5B's wrong DONEs were mostly one refused DONE said twice): refused,
    asked afresh, stuck the third time. Given again after a step that changed the page, it is
    taken (grounding's once); an empty DONE refused as "nothing changed" is taken said again
    (that refusal can be wrong: a log-in by a GET form)."""

    def done_on_note(value, folder, **options):
        """A model that answers only DONE with ``value`` on the note page."""

        def policy(messages, params, purpose, context):
            return {"operation": "DONE", "value": value}

        return _run(browser, site["guards"] + "note.html", policy, folder, task="Save a note", **options)

    result, backend, steps = await done_on_note("Tea saved", tmp_path)
    assert [s["problem_kind"] for s in steps] == ["ungrounded_answer", "repeated", "repeated", "repeated"]
    assert steps[1]["result_text"].startswith('refused: DONE "Tea saved" was refused at step 1 on this same page')
    assert 'The page shows: "New note"' in steps[1]["result_text"]
    assert (result.status, result.steps) == ("stuck", 4)
    calls = _actions(backend)
    assert len(calls[2]["messages"]) < len(calls[1]["messages"])  # asked afresh: the conversation restarted

    def policy(messages, params, purpose, context):
        if len(context.history) == 1:
            return {"operation": "TYPE", "element_id": context.control_id("text field", "Title"), "value": "Tea"}
        return {"operation": "DONE", "value": "Tea saved"}

    moved, _, steps = await _run(browser, site["guards"] + "note.html", policy, tmp_path / "moved", task="Save a note")
    assert [s["problem_kind"] for s in steps] == ["ungrounded_answer", None, None]
    assert (moved.status, moved.steps) == ("done", 3)
    empty, _, steps = await done_on_note("", tmp_path / "empty")
    assert [s["problem_kind"] for s in steps] == ["no_change", None]
    assert (empty.status, empty.steps) == ("done", 2)
    off, _, _ = await done_on_note("anything", tmp_path / "off", grounded_done=False)
    assert (off.status, off.steps) == ("done", 1)


async def test_grounds_take_the_pages_words_lists_and_counts_and_refuse_each_kind_once():
    grounds = Grounds()
    table = "<table><tr><th>Name</th></tr><tr><td>dave</td></tr><tr><td>alice</td></tr></table>"
    grounds.see(['[] link "Dave Smith"', "Assigned: alice", "Status: “open”"], table)
    assert grounds.counts == {2} and row_counts("<ul><li>a</li><li>b</li><li>c</li></ul>") == {3}
    for said in ("dave smith", '"Open".', "Dave Smith and alice", "2", "alice, dave smith"):
        assert grounds.shown(said), said
    for said in ("3", "Dave Smithers", "alic", "bob"):
        assert not grounds.shown(said), said
    refusal = grounds.refusal("Dave Smithers")
    assert refusal is not None and '"Dave Smith"' in str(refusal)
    assert str(refusal).endswith(
        "Nothing on the site was changed in this run (no form was sent and confirmed by the page, no skill ran to its end)"
    )
    assert grounds.refusal("bob") is None  # once
    assert grounds.refusal("") is not None and grounds.refusal("") is None  # its own kind, once too
    priced = Grounds()
    priced.see(
        ["Designing Data-Intensive Applications", "£39.99", "In stock (3 available)", "Basket total: £37.99"], ""
    )
    refusal = priced.refusal("The price of the book is £39.99.")  # a sentence round the value a page showed
    assert refusal is not None and 'Of it, the pages showed: "£39.99".' in str(refusal) and "£37.99" not in str(refusal)
    assert priced.shown_parts("3 available, total £37.99 with bob@example.org") == ["3 available", "£37.99"]
    assert priced.shown_parts("Designing Data-Intensive Applications is the book") == []  # no value in what was shown
    assert priced.shown_parts("3 copies left") == []  # "3" alone says nothing
    # a control's state words are the view's, its quoted texts the page's (the 1.5B answered
    # "invalid", read off the log-in field it had left empty, and it was taken)
    controls = Grounds()
    controls.see(
        [
            '[9] text field "Username" empty required invalid ("Please fill out this field.")',
            '[4] read-only field "Status" value="Shipped"',
            '[5] select "Seating" selected="Any" options: "Any", "Window"',
            '[6] checkbox "Send me offers" not checked',
        ],
        "",
    )
    for said in ("Username", "Please fill out this field.", "Shipped", "Window", "Send me offers"):
        assert controls.shown(said), said
    for said in ("invalid", "empty", "required", "not checked", "read-only field", "options"):
        assert not controls.shown(said), said
    changed = Grounds()
    changed.changed("step 2: FILL ... then CLICK [9] [submit button]  Save")
    assert changed.refusal("") is None
    assert "Nothing on the site" not in str(changed.refusal("bob"))  # a change made: not said


async def test_the_reason_comes_first_in_the_schema_and_lands_in_the_trace_never_executed(browser, site, tmp_path):
    def policy(messages, params, purpose, context):
        if context.history:
            return {"reason": "The results show Mint tea.", "action": {"operation": "DONE", "value": "Mint tea"}}
        field = context.control_id("text field", "Search")
        why = "The search box finds teas. " * 10  # longer than the bound: cut
        return {
            "reason": why,
            "action": {"operation": "TYPE", "element_id": field, "value": "mint", "press_enter": True},
        }

    result, backend, steps = await _run(browser, site["guards"] + "search.html", policy, tmp_path)
    schema = _schema(_actions(backend)[0])
    assert list(schema["properties"]) == ["reason", "action"] and schema["required"] == ["reason", "action"]
    assert schema["properties"]["reason"] == {"type": "string", "maxLength": REASON_CHARS}
    messages = _actions(backend)[0]["messages"]
    assert 'write a short "reason"' in messages[0]["content"]
    assert all(m["content"].startswith('{"reason": ') for m in messages if m["role"] == "assistant")
    assert steps[0]["reason"].startswith("The search box finds teas.") and len(steps[0]["reason"]) == REASON_CHARS
    assert steps[1]["reason"] == "The results show Mint tea." and result.answer == "Mint tea"
    assert "<b>Reason:</b> The results show Mint tea." in (tmp_path / "trace" / "report.html").read_text()
    # the chat keeps the reason with the action it gave
    assert '"reason": "The search box finds teas.' in str(_actions(backend)[1]["messages"])

    _, off, off_steps = await _run(browser, site["guards"] + "search.html", policy, tmp_path / "off", reason=False)
    assert list(_schema(_actions(off)[0])["properties"]) == ["action"]
    assert '"reason"' not in str(_actions(off)[0]["messages"]) and "reason" not in off_steps[0]


def _scrolls(request) -> list[str]:
    """The ways a step's schema lets the model SCROLL."""
    branches = _schema(request)["properties"]["action"]["anyOf"]
    found = [b for b in branches if b["properties"]["operation"]["enum"] == ["SCROLL"]]
    return found[0]["properties"]["value"]["enum"] if found else []


async def test_a_scroll_that_cannot_move_is_a_wait_twice_then_out_of_the_choices(browser, site, tmp_path):
    """Scrolling is exempt from the loop breaker while it moves the page; at the bottom of a
    short page it is a wait (a button that appears late), twice, then out of the schema with
    why (the 1.5B scrolled down at the bottom of a list 14 times, to the step limit)."""

    def policy(messages, params, purpose, context):
        if "down" in _scrolls({"params": params}):
            return {"operation": "SCROLL", "value": "down"}
        return {"operation": "DONE", "value": "Tea shop"}

    result, backend, steps = await _run(browser, site["guards"] + "search.html", policy, tmp_path, max_steps=6)
    calls = _actions(backend)
    assert [s["action_text"] for s in steps[:2]] == ["SCROLL down", "SCROLL down"]
    assert all("did not move" in s["result_text"] for s in steps[:2])
    assert "down" in _scrolls(calls[1]) and _scrolls(calls[2]) == ["up"]
    assert "SCROLL down did not move the page at step 2, 2 times; it is not offered here again." in str(
        calls[2]["messages"][-1]["content"]
    )
    assert result.steps < 6
