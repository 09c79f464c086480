"""The parts of a long page that share the most words with the task, shown again after the
page (``task_lines``): the 1.5B read a 25-ticket list whose eighth row was the ticket the task
named, with the answer beside it, said "not found on this page" and scrolled. It shows, and
hides nothing: every line stays where it was on the page, and what it offers is unchanged.

A part is one control's line and the plain lines after it up to the next control (a list's
row: the ticket's link, then its status, owner and submitter), or plain lines before any
control. They are ranked by BM25 over the task's words (``retrieval.bm25_scores``); the best
``MAX_PARTS`` that share two of the task's words or more, and score at least half the best one's
score, are shown, best first, on a page of ``MIN_LINES`` lines or
more (a short page is read whole)."""

from __future__ import annotations

from webagent.browser.guard import PLACEHOLDER
from webagent.retrieval import bm25_scores, words
from webagent.web.agent_view import ID_PREFIX, LINE_ID

MIN_LINES = 60  # a page shorter than this is read whole: nothing is shown again
MAX_PARTS = 2
MIN_SHARED = 2  # a part shares at least this many of the task's words (one is a site's name: "helpdesk")
NEAR = 0.5  # a part is shown only if it scores at least this share of the best one's score
MAX_PART_LINES = 6  # a part's lines at most: its control's, then the plain lines after it
HEADER = "The parts of this page that share the most words with the task (each also shown above):"


def parts(page: str) -> list[str]:
    """The page's lines in parts: a control's line and the plain lines after it."""
    out: list[list[str]] = []
    for line in page.splitlines():
        if not line.strip():
            continue
        if LINE_ID.match(line) or not out:
            out.append([line])
        elif len(out[-1]) < MAX_PART_LINES:
            out[-1].append(line)
    return ["\n".join(p) for p in out]


def task_lines(page: str, task: str) -> str:
    """The block shown after a long page ("" on a short page, or when no part shares a word)."""
    if len(page.splitlines()) < MIN_LINES:
        return ""
    found = parts(page)
    task = PLACEHOLDER.sub(" ", task)  # (a password's placeholder names no part of the page)
    # a control's id is the view's numbering, no word of the page: "close issue 21" matched the
    # "Show issue:" button whose id was [21] on one run, and issue 21's row on another
    read = [ID_PREFIX.sub("", p) for p in found]
    scores = bm25_scores(read, task)
    if scores is None:
        return ""
    top = max(scores)
    # the best parts, and only those near the best (a word the whole site repeats is no match)
    asked = words(task)
    best = sorted(
        (i for i, s in enumerate(scores) if s > 0 and s >= NEAR * top and len(asked & words(read[i])) >= MIN_SHARED),
        key=lambda i: (-scores[i], i),
    )
    best = best[:MAX_PARTS]
    return "\n".join([HEADER, *(found[i] for i in best)]) if best else ""
