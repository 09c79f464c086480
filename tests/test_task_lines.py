"""The parts of a long page that share the most words with the task, shown again after it
(``webagent.agent.task_lines``): the row the task names, its control and the plain lines after
it, best first; nothing on a short page, nothing for one shared word, nothing for a password's
placeholder. Through ``decide_page``, the block is what the model reads last before the task."""

from __future__ import annotations

from agent_support import prompt_of

from webagent.agent import AgentOptions
from webagent.agent.decide import decide_page
from webagent.agent.task_lines import HEADER, MIN_LINES, parts, task_lines
from webagent.browser.models import Observation
from webagent.html import clean_html
from webagent.llm.testing import fake_client

TITLES = ["Outlook keeps asking for my password", "Invoice #4471 charged twice", "Laptop battery swelling"]
TITLES += [f"Routine request number {k}" for k in range(len(TITLES), 25)]


def _list_text() -> str:
    """A helpdesk list as the model reads it: a link per ticket, then its status and submitter."""
    rows = [
        f'[{100 + k}] link "{k + 1}. {t}"\nStatus: Open\nSubmitter: person{k}@example.com' for k, t in enumerate(TITLES)
    ]
    return '[1] link "Logo Helpdesk"\nTickets\n' + "\n".join(rows)


TASK = "Log in to the helpdesk as bob (password <secret:password>), find the ticket about invoice #4471 being charged twice and tell me who submitted it."


def test_the_row_the_task_names_is_shown_again_with_its_lines_best_first():
    page = _list_text()
    assert len(page.splitlines()) >= MIN_LINES
    assert parts(page)[:2] == [
        '[1] link "Logo Helpdesk"\nTickets',
        '[100] link "1. Outlook keeps asking for my password"\nStatus: Open\nSubmitter: person0@example.com',
    ]
    block = task_lines(page, TASK)
    assert block.splitlines() == [
        HEADER,
        '[101] link "2. Invoice #4471 charged twice"',
        "Status: Open",
        "Submitter: person1@example.com",
    ]
    # "helpdesk" alone (the site's name) names no row; a password's placeholder is no word of the task
    assert task_lines(page, "Log in to the helpdesk and open the reports") == ""
    assert task_lines(page, "Type the password <secret:outlook>") == ""
    assert "Outlook keeps asking" in task_lines(page, "Type the password of outlook")
    # a short page is read whole: nothing shown again
    assert task_lines("\n".join(page.splitlines()[: MIN_LINES - 1]), TASK) == ""


def test_a_control_id_is_no_word_of_the_page():
    """The ceiling's "close issue 21" was shown the "Show issue:" button again on a run where
    that button's id was [21], and issue 21's row on a run where it was [20]."""
    page = _list_text().replace('[1] link "Logo Helpdesk"', '[21] submit button "Show ticket:"')
    page += "\n" + "\n".join(f'[{300 + k}] link "Ticket {k}"\nStatus: Open' for k in (20, 21, 22))
    block = task_lines(page, "Close ticket 21 and give its status")
    assert block.splitlines()[1:] == ['[321] link "Ticket 21"', "Status: Open"]


async def test_the_model_reads_the_named_row_again_after_the_page_and_before_the_task():
    rows = "".join(
        f'<li><a href="/tickets/{k + 1}/">{k + 1}. {t}</a><p>Status: Open</p><p>Submitter: person{k}@example.com</p></li>'
        for k, t in enumerate(TITLES)
    )
    html = clean_html(f"<html><body><h1>Tickets</h1><ul>{rows}</ul></body></html>")
    obs = Observation(url="http://127.0.0.1:9/tickets/", title="Tickets", raw_html=html, cleaned_html=html, elements={})
    seen: list[str] = []

    def model(messages, params, purpose):
        seen.append(prompt_of(messages))
        return {"reason": "the answer is shown", "action": {"operation": "DONE", "value": "person1@example.com"}}

    for on in (True, False):
        await decide_page(fake_client(model), obs, TASK, [], AgentOptions(task_lines=on), can_back=False)
    with_block, without = seen
    assert HEADER in with_block and HEADER not in without
    shown = with_block.split(HEADER, 1)[1]
    assert '2. Invoice #4471 charged twice"' in shown.splitlines()[1] and "person1@example.com" in shown
    assert shown.index("person1@example.com") < shown.index("Task: ")  # (last before the task)
