"""DONE grounded in what the run saw (issue 47, item 5): a DONE is refused once, with why,
when what it claims is not borne out by the pages of the run.

* **An answer** (DONE with a value) must be text a page of the run showed (case and spaces
  aside; each part of a list "a, b and c" alike; not a value the run typed itself, shown back
  in its field), or a count of rows a page showed (a table's
  rows, a list's items). If not, it is refused once, with the parts of it that a page showed
  and that hold a value (a price in a sentence), else the nearest spans the pages showed
  (rapidfuzz's partial alignment): a 1.5B answered from the task's words, not the page's. The
  refusal also says when nothing on the site was changed yet (it cannot know whether the task
  asks a question or a change: it states both facts).
* **No answer** (DONE with an empty value) claims the task's change is made: it is refused
  once when no step of the run changed the site: a form sent by POST (a GET form is a search)
  or a button of no form (a script's form), the page changing after it; a dialog's confirm
  accepted; or a skill run to its end. The refusal names the forms the run filled and did not
  send.

A refused answer given again word for word on the same page state is a loop, not a second try
(``loop_breaker.LoopBreaker.done_again``, with the loop breaker on).

Nothing here reads the task: only what the pages showed and what the run did. A perfect
model answers with the page's text after the page showed it, and changes the site before its
empty DONE, so it is never refused (the ceiling).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import lxml.html
from lxml import etree
from rapidfuzz import fuzz, process

from webagent.html.dom import ID_ATTR
from webagent.problems import Problem
from webagent.web.agent_view import ID_PREFIX

NEAREST = 3  # spans the refusal quotes
NOTHING_CHANGED = (
    "Nothing on the site was changed in this run (no form was sent and confirmed by the page, no skill ran to its end)"
)
SPAN_CHARS = 80
ANSWER_WORDS = 40  # an answer's words looked at for the parts a page showed
# a shown part this short says nothing: "Ticket 2, ..., assigned to Bob." was told the pages showed "2"
PART_CHARS = 3
_VALUE_MARK = re.compile(r"[\d@$\u00a3\u20ac\u00a5]")  # a digit, "@", a currency sign: a value, not a common word
_EDGE_MARKS = ".,;:!?\"'()"
# a list answer's parts: "dave, alice and bob"
_PARTS = re.compile(r"\s*(?:[,;\n]|\band\b)\s*", re.IGNORECASE)
_NAMED = re.compile(r'^[^"]*?"((?:[^"\\]|\\.)*)"(.*)$')  # a control line after its id: kind "name" state
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')  # a quoted text of a control's state
_VALUE = re.compile(r' value="((?:[^"\\]|\\.)*)"')  # a field's value as the view shows it
_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


def _clean(text: str) -> str:
    """A line as a person reads it: a control's line without its id, kind and the quotes
    around its name (``[] link "Issue 9"`` reads "Issue 9"), then only the quoted texts of its
    state (a value, an option, a message), spaces collapsed, quotes straight. The state's bare
    words ("empty", "required", "invalid", "checked") are the view's, not the page's: the 1.5B
    answered "invalid", read off a log-in field it had left empty, and it was taken."""
    line = text.translate(_QUOTES)
    if ID_PREFIX.match(line):
        line = ID_PREFIX.sub("", line)
        if named := _NAMED.match(line):
            quoted = _QUOTED.findall(named.group(2))
            line = " ".join(q.replace('\\"', '"') for q in (named.group(1), *quoted))
    return " ".join(line.split())


def _norm(text: str) -> str:
    return _clean(text).casefold()


def _answer(text: str) -> str:
    """An answer as it is looked for: cleaned, without the quotes and end stop around it."""
    return _norm(text).strip().strip("\"'`").rstrip(".!").strip()


@dataclass
class Grounds:
    """What the run's pages showed and what the run changed: what a DONE is checked against."""

    pages: list[str] = field(default_factory=list)  # each page's text, normalized (one string per page state)
    lines: list[str] = field(default_factory=list)  # every line seen, cleaned (for the nearest spans)
    counts: set[int] = field(default_factory=set)  # rows of a table, items of a list, on any page
    changes: list[str] = field(default_factory=list)  # the steps that changed the site, as said
    unsent: dict[str, str] = field(default_factory=dict)  # form id -> what the run filled in it, not sent
    refused: set[str] = field(default_factory=set)  # the kinds of refusal already made (each once)
    typed: list[str] = field(default_factory=list)  # values the run itself typed, normalized
    _seen_pages: set[str] = field(default_factory=set)
    _seen_lines: set[str] = field(default_factory=set)

    def see(self, lines: list[str], html: str) -> None:
        """A page the run observed: its lines as the model read them and its rows."""
        cleaned = [_clean(self._echo(line)) for line in lines]  # (each line as a person reads it)
        text = " \n ".join(line.casefold() for line in cleaned)
        if text in self._seen_pages:
            return
        self._seen_pages.add(text)
        self.pages.append(text)
        for line in cleaned:
            if line and line not in self._seen_lines:
                self._seen_lines.add(line)
                self.lines.append(line)
        self.counts |= row_counts(html)

    def typed_by_run(self, values: list[str]) -> None:
        """Values the run itself typed (a field's, a skill's arguments): a page that shows one
        back as a field's value does not show it as the site's (the 1.5B typed the comment it was to
        save into the search box, then gave it as its answer)."""
        for value in values:
            if (v := _answer(value)) and v not in self.typed:
                self.typed.append(v)

    def filled(self, form: str, what: str) -> None:
        """A field of ``form`` set and not sent yet."""
        self.unsent[form] = f"{self.unsent[form]}, {what}" if form in self.unsent else what

    def changed(self, what: str, form: str | None = None) -> None:
        self.changes.append(what)
        if form is not None:
            self.unsent.pop(form, None)

    def shown(self, answer: str) -> bool:
        """Whether a page showed ``answer`` (each part of a list), or it counts a page's rows."""
        whole = _answer(answer)
        if not whole:
            return True
        if whole.isdigit() and int(whole) in self.counts:
            return True
        parts = [p for p in (_answer(x) for x in _PARTS.split(whole)) if p]
        return self._on_a_page(whole) or (len(parts) > 1 and all(self._on_a_page(p) for p in parts))

    def _on_a_page(self, text: str) -> bool:
        edge = r"(?<!\w)" if text[:1].isalnum() else ""
        end = r"(?!\w)" if text[-1:].isalnum() else ""
        pattern = re.compile(edge + re.escape(text) + end)
        return any(pattern.search(page) for page in self.pages)

    def _echo(self, line: str) -> str:
        """A field's line without the value the run typed into it (a read-only field's value is
        the site's, and stays)."""
        found = _VALUE.search(line)
        if not found or not ID_PREFIX.match(line) or "read-only field" in line[: found.start()]:
            return line
        value = _answer(found.group(1).replace('\\"', '"'))
        cut = value.endswith("\u2026") and value[:-1]  # (a long value is shown cut: its start)
        typed = value in self.typed or (cut and any(t.startswith(cut) for t in self.typed))
        return line[: found.start()] + line[found.end() :] if value and typed else line

    def nearest(self, answer: str) -> list[str]:
        """The spans of the pages' lines nearest to ``answer`` (best first, at most ``NEAREST``)."""
        wanted = _clean(answer)
        spans: list[str] = []
        found = process.extract(wanted, self.lines, scorer=fuzz.partial_ratio, processor=str.lower, limit=NEAREST * 3)
        for line, _score, _ in found:
            at = fuzz.partial_ratio_alignment(wanted.lower(), line.lower())
            span = _widen(line, at.dest_start, at.dest_end) if at is not None else line
            if span and span not in spans:
                spans.append(span)
            if len(spans) == NEAREST:
                break
        return spans

    def shown_parts(self, answer: str) -> list[str]:
        """The runs of the answer's words that a page showed and that hold a value (a digit, a
        currency sign, an "@"; ``PART_CHARS`` long at least), longest first, at most ``NEAREST``: the 1.5B answered "The price
        of the book is £39.99.", refused with three near spans it said the same sentence again."""
        words = _clean(answer).split()[:ANSWER_WORDS]
        parts: list[str] = []
        taken: set[int] = set()
        for n in range(len(words) - 1, 0, -1):  # (the whole answer is what was not shown)
            for i in range(len(words) - n + 1):
                if taken.intersection(range(i, i + n)):
                    continue
                text = " ".join(words[i : i + n]).strip(_EDGE_MARKS)
                if (
                    len(text) >= PART_CHARS
                    and _VALUE_MARK.search(text)
                    and (norm := _answer(text))
                    and self._on_a_page(norm)
                ):
                    parts.append(text)
                    taken.update(range(i, i + n))
        return parts[:NEAREST]

    def refusal(self, answer: str) -> Problem | None:
        """Why a DONE with ``answer`` is refused, or None; each kind of refusal is made once."""
        if answer.strip():
            if "ungrounded_answer" in self.refused or self.shown(answer):
                return None
            self.refused.add("ungrounded_answer")
            parts = self.shown_parts(answer)
            near = "; ".join(f'"{s}"' for s in parts or self.nearest(answer))
            said = "Of it, the pages showed" if parts else "The nearest text the pages showed"
            return Problem(
                "ungrounded_answer",
                f'DONE refused once: no page of this run showed "{answer.strip()[:SPAN_CHARS]}"'
                + (f". {said}: {near}" if near else "")
                + ". Answer with the text as a page shows it"
                # (a fact, as the empty DONE's refusal says it: the 1.5B, on the product page it
                # was to add to the basket, answered "No action needed." twice)
                + ("" if self.changes else f". {NOTHING_CHANGED}"),
            )
        if self.changes or "no_change" in self.refused:
            return None
        self.refused.add("no_change")
        unsent = "; ".join(f"{what}: its form was not sent" for what in self.unsent.values())
        return Problem(
            "no_change",
            f"DONE refused once: {NOTHING_CHANGED[0].lower()}{NOTHING_CHANGED[1:]}"
            + (f". Filled and not sent: {unsent}" if unsent else "")
            + ". If the task asks a question, give the answer as the page shows it",
        )


def _widen(line: str, start: int, end: int) -> str:
    """``line[start:end]`` widened to whole words, at most ``SPAN_CHARS`` long."""
    while start > 0 and line[start - 1].isalnum():
        start -= 1
    while end < len(line) and line[end].isalnum():
        end += 1
    return line[start:end].strip()[:SPAN_CHARS]


def row_counts(html: str) -> set[int]:
    """How many rows each table of ``html`` has (those with cells, a header row aside) and
    how many items each list has: the counts an answer may give."""
    if not html.strip():
        return set()
    try:
        root = lxml.html.fromstring(html)
    except (etree.ParserError, ValueError):
        return set()
    counts = {sum(1 for tr in table.iter("tr") if tr.find("td") is not None) for table in root.iter("table")}
    counts |= {sum(1 for child in lst if child.tag == "li") for lst in root.iter("ul", "ol")}
    return counts - {0}


def form_method(html: str, form: str) -> str:
    """The method of the ``<form>`` whose id (``ID_ATTR``) is ``form`` in ``html``: "get"
    when it names none (HTML's default), "" when the form is not found."""
    if not form or not html.strip():
        return ""
    try:
        found = lxml.html.fromstring(html).xpath(f"//form[@{ID_ATTR}=$id]", id=form)
    except (etree.ParserError, ValueError):
        return ""
    return (found[0].get("method") or "get").lower() if found else ""


# the controls whose click sends a form (``live_action.SUBMITS``)
_SENDS = ("submit button", "button")


def site_change(op: str, kind: str, form: str, enter: bool, html: str) -> bool:
    """Whether an action that worked and changed the page changed the site: a form sent by
    anything but GET (``op`` CLICK on a button, FILL with its button, TYPE with Enter), a
    button of no form clicked (a script's form), a dialog accepted, a skill run to its end.
    ``kind`` and ``form`` are the control's (``agent_view.Control``), ``html`` the page's it
    was done on (a form's method is read from it)."""
    if op in ("SKILL", "DIALOG"):
        return True
    sends = (op in ("CLICK", "FILL") and kind in _SENDS) or (op == "TYPE" and enter)
    if not sends:
        return False
    if not form:  # no <form>: a script sends it (a field's Enter sends nothing then)
        return op != "TYPE"
    return form_method(html, form) != "get"  # POST, or a form the page no longer shows as it was
