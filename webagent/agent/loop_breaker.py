"""Loops broken in code (issue 47, item 4; ``AgentOptions.loop_breaker``).

An action is known by its operation, target and arguments (``live_action.action_key``), its
target by what it is, not by its id (a new document gives every node a new id: the 1.5B
searched, opened the book, ordered and went "Back to the shop" three times over, each lap
with new ids), and where it was done: the page state (``RunState.page``), or for a SKILL the
address's path without the query (each call of a skill may land on a new page: the record it
created).

* **Done here before:** an action done on a page state leaves that place's choices
  (``Choices.repeated``: out of the reply schema where an enum can say so, refused after the
  reply otherwise), translated to the ids the page has when the run is there again. If it
  changed nothing, it is out from the next step on, and the model is told what the page
  already shows: the lines the action's first time made appear, else the page's lines holding
  the values it set, else the page's first lines of text (the 1.5B searched the same words
  six times, the answer on the page). If it led elsewhere, it is out when the run comes back
  to the same page state, and the model is told it is back, what it did here and what that
  made appear. The same state and the same action give the same result: a loop.
* **A skill run to its end** (it changed the page) is out of the choices with the same values
  for the rest of the run, wherever it is called from: its steps open its own start page, so
  the page it was called from says nothing of where it acts (the 1.5B submitted the same new
  ticket three times, from the log-in page and from each new ticket's page).
* **A third repeat** (the model answering a banned action again, or doing one a third time):
  the run re-plans (``LoopVerdict.replan``: the loop's place for a planner; until there is
  one, the model is asked afresh, its conversation restarted, the repeated actions still out
  of its choices). The run ends as ``stuck`` only when the model has no other action left
  to give: it answered nothing but repeated actions ``STUCK_REPEATS`` times on one page.
* **The same action in a row** (by its target's identity, wherever it is), each time changing
  the page: the third time, the run re-plans, as above, and the model is told what the page now
  shows; it stays offered (a new page state each time: a counter's "Add one" may be meant).
* **Exempt:** scrolling, paging (a pager's link or button: "Next", "2", "»"), waits, dialogs'
  answers and DONE (``agent.grounding`` checks it). But an answer grounding refused (no page
  showed it), given again word for word on the same page state, is a repeat like any other
  (``done_again``): it is refused, and the model asked afresh; the third time the run is
  ``stuck``. (Grounding's "refused once" had taken the repeat: 22 of 23 such DONEs in the
  1.5B's runs were wrong, and 9 of its 12 wrong DONEs at e6663ab were one refused DONE said
  twice.) An empty DONE refused as "nothing changed" is not a repeat said again: that refusal
  can be wrong (a log-in by a GET form).

Nothing here reads the task, and no message points at DONE.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from webagent.agent.stable_ids import by_place
from webagent.web.agent_view import Control
from webagent.web.control_name import cut
from webagent.web.live_action import LiveAction, action_key

STUCK_REPEATS = 3
# a scroll that did not move the page is a wait (a button that appears late): allowed this many
# times on one page state, then out of its choices (the 1.5B scrolled down at the bottom of the
# helpdesk's list 14 times, to the step limit)
STILL_SCROLLS = 2
EXEMPT = frozenset({"SCROLL", "DIALOG", "DONE", "GOTO"})
RAN = "ran"  # the place of the skills run to their end: anywhere in the run
SHOWN_LINES = 5  # lines of the page quoted in a loop message (a table cell is a line)
ROW_LINES = 4  # text lines quoted after a line holding a value the action set
_PAGER_WORDS = frozenset({"next", "previous", "prev", "more", "older", "newer", "first", "last", "load more"})
_PAGER_MARKS = frozenset("<>«»‹›…→←")
_OLD_ID = re.compile(r"\[\d+\] ")  # an element's id in an action's text ("CLICK [59] [link]  Next")
_FORM_LINE = re.compile(r"^\[\]\s+[^\"]*(field|button|select|checkbox|radio|switch)\b")  # a form's control line


def is_pager(control: Control | None) -> bool:
    """A link or button that pages through a list ("Next", "2", "»"): exempt, as scrolling."""
    if control is None or control.op != "CLICK":
        return False
    name = " ".join(control.name.lower().split()).strip("<>«»‹›…→← ")
    bare = control.name.strip()
    return name in _PAGER_WORDS or name.removeprefix("page ").isdigit() or (bool(bare) and set(bare) <= _PAGER_MARKS)


def place_of(action: LiveAction, page: str, url: str) -> str:
    """Where an action counts as the same: the page state, or a SKILL's path without the query."""
    return f"path:{urlsplit(url).path or '/'}" if action.operation == "SKILL" else f"page:{page}"


@dataclass
class LoopVerdict:
    """What the loop breaker says after a step: the model's warning, whether to re-plan, or
    why the run is stuck."""

    warning: str = ""
    replan: bool = False
    stuck: str | None = None


@dataclass
class _Ban:
    text: str  # the action as the history shows it
    message: str  # what the model is told
    action: LiveAction  # its targets by what they are (``identities``), put back to a page's ids when offered


def identities(controls: Mapping[str, Control]) -> dict[str, str]:
    """Each control's id -> what it is on its page (kind, name, options and how many alike came
    before it): the same on every capture of the same page state, whatever its ids."""
    return {cid: json.dumps(place) for place, cid in by_place(controls).items()}


def _retarget(action: LiveAction, ids: Mapping[str, str]) -> LiveAction | None:
    """``action`` with each control it names renamed by ``ids`` (None when one is not there).
    A SKILL names a skill's label, not a control: kept as it is."""
    if action.operation == "SKILL":
        return action
    if action.element_id and action.element_id not in ids:
        return None
    if any(f.element_id not in ids for f in action.fields):
        return None
    return action.model_copy(
        update={
            "element_id": ids.get(action.element_id, action.element_id),
            "fields": [f.model_copy(update={"element_id": ids[f.element_id]}) for f in action.fields],
        }
    )


@dataclass
class LoopBreaker:
    """The run's actions by key and place, and those out of each place's choices."""

    count: dict[tuple[str, str], int] = field(default_factory=dict)
    first: dict[tuple[str, str], int] = field(default_factory=dict)  # the step that first did it
    news: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # what its first time made appear
    bans: dict[str, dict[str, _Ban]] = field(default_factory=dict)  # place -> action key (by identity) -> the ban
    insisted: dict[str, int] = field(default_factory=dict)  # place -> replies that were only banned actions
    arrived: list[str] = field(default_factory=list)  # what the last step that changed the page made appear
    # place -> the actions that led away from it (by identity): out of its choices on a return
    left: dict[str, dict[str, _Ban]] = field(default_factory=dict)
    # (page state, the answer, spaces and case aside) -> the step whose DONE grounding refused
    refused_dones: dict[tuple[str, str], int] = field(default_factory=dict)
    # the last action that changed the page (its key by identity) and how many times in a row
    # it was done, each time changing the page (``_in_a_row``)
    last: str = ""
    streak: int = 0

    def done_refused(self, n: int, page: str, answer: str) -> None:
        """Step ``n``'s DONE with ``answer`` was refused (``agent.grounding``) on ``page``."""
        self.refused_dones.setdefault((page, _said(answer)), n)

    def done_again(self, page: str, answer: str, lines: list[str]) -> str:
        """Why a DONE with ``answer`` is a repeat on ``page`` (its ``lines``): refused there
        before and the page state unchanged since ("" when it is not)."""
        n = self.refused_dones.get((page, _said(answer)))
        if n is None:
            return ""
        shown = set(lines)
        shows = _excerpt([line for line in self.arrived if line in shown] or lines)
        said = cut(" ".join(answer.split()), 80)
        return (
            f'DONE "{said}" was refused at step {n} on this same page, and the page is as it was then; '
            "it is not taken here again." + (f" The page shows: {shows}" if shows else "")
        )

    def _here(self, page: str, url: str) -> dict[str, _Ban]:
        return {
            **self.left.get(f"page:{page}", {}),
            **self.bans.get(f"page:{page}", {}),
            **self.bans.get(_path(url), {}),
            **self.bans.get(RAN, {}),
        }

    def banned(self, page: str, url: str, controls: Mapping[str, Control]) -> dict[str, str]:
        """The actions out of the choices here (``Choices.repeated``), by this page's ids
        (``controls``): action key -> why."""
        by_identity = {place: cid for cid, place in identities(controls).items()}
        out: dict[str, str] = {}
        for ban in self._here(page, url).values():
            action = _retarget(ban.action, by_identity)
            if action is not None:
                out[action_key(action)] = ban.message
        return out

    def returned(self, page: str, url: str) -> str:
        """What the model is told when a step brought the run back to a page state it left
        before by an action now out of its choices ("" when none)."""
        left = self.left.get(f"page:{page}", {})
        return " ".join(ban.message for ban in left.values())

    def after(
        self,
        n: int,
        action: LiveAction,
        text: str,
        *,
        page: str,
        now: str,
        url: str,
        controls: Mapping[str, Control],
        control: Control | None,
        changed: bool,
        before: list[str],
        after: list[str],
        moved: bool = True,
    ) -> LoopVerdict:
        """After step ``n`` did ``action`` (``text``: as the history shows it) on ``page`` at
        ``url``, leaving the page state ``now`` (``controls``: its controls by id; ``before``/``after``: the page's lines, ids
        aside): ban it there when it changed nothing or is done there again, and on a return
        when it led away; re-plan at the third time. A SCROLL is exempt while it moves the
        page (``moved``); one that cannot is banned at its ``STILL_SCROLLS``-th time there."""
        exempt = action.operation in EXEMPT or is_pager(control)
        if exempt or not changed:
            self.last, self.streak = "", 0  # (the same action "in a row" is broken by any other)
        if action.operation == "SCROLL" and not moved and not changed:
            return self._still_scroll(n, action, text, page)
        if exempt:
            return LoopVerdict()
        text = _OLD_ID.sub("", text)  # (this capture's ids: another capture gives others)
        place = place_of(action, page, url)
        named = _retarget(action, identities(controls)) or action
        key = (action_key(named), place)
        count = self.count[key] = self.count.get(key, 0) + 1
        first = self.first.setdefault(key, n)
        if count == 1:
            self.news[key] = _appeared(before, after)
        in_a_row = self._in_a_row(n, key[0], text, before, after) if changed else None
        if changed and count == 1:
            self.arrived = self.news[key]
            if action.operation == "SKILL":
                said = f"{text} ran to its end at step {n}; it is not offered again with the same values."
                self.bans.setdefault(RAN, {})[key[0]] = _Ban(text, said, named)
            if place.startswith("page:") and now != page:  # (a password typed anew changes no line)
                shows = _excerpt(self.news[key])
                led = f"The run is back on this page as it was at step {n}, where {text} was done" + (
                    f" and showed: {shows}" if shows else ""
                )
                self.left.setdefault(place, {})[key[0]] = _Ban(text, f"{led}; it is not offered here again.", named)
            return in_a_row or LoopVerdict()
        why = (
            f"{text} at step {n} changed nothing on this page"
            if count == 1
            else f"{text} was done on this same page at step {first}, and the run came back to it"
        )
        # what the page shows: what this action's first time, or the step that led here, made appear
        shown = set(after)
        led_here = [line for line in self.arrived if line in shown]
        # first the page's lines holding the values it set, each with the lines after it (a
        # result's row: the 1.5B searched a ticket three times, its owner shown under it)
        held = _holding(after, action)
        shows = _excerpt(held + [line for line in self.news.get(key) or led_here if line not in held] or after)
        message = f"{why}; it is not offered here again." + (f" The page already shows: {shows}" if shows else "")
        self.bans.setdefault(place, {})[key[0]] = _Ban(text, message, named)
        return LoopVerdict(warning=message, replan=count >= STUCK_REPEATS)

    def _in_a_row(self, n: int, key: str, text: str, before: list[str], after: list[str]) -> LoopVerdict | None:
        """The same action done again right after itself, changing the page each time (a new
        page state each time, so no ban keyed on it applies): at its third time in a row, the
        run re-plans, and the model is told what the repeats made appear (the 1.5B clicked
        "Assign this ticket to alice" eight times, each adding a follow-up row). Not banned: a
        counter's "Add one" may be meant three times."""
        self.streak = self.streak + 1 if key == self.last else 1
        self.last = key
        if self.streak < STUCK_REPEATS:
            return None
        shows = _excerpt(_appeared(before, after) or after)
        message = (
            f"{text} was done {self.streak} times in a row (steps {n - self.streak + 1} to {n}), the page changing each time."
            + (f" The page now shows: {shows}" if shows else "")
        )
        return LoopVerdict(warning=message, replan=True)

    def _still_scroll(self, n: int, action: LiveAction, text: str, page: str) -> LoopVerdict:
        place = f"page:{page}"
        key = (action_key(action), place)
        count = self.count[key] = self.count.get(key, 0) + 1
        if count < STILL_SCROLLS:
            return LoopVerdict()
        message = f"{text} did not move the page at step {n}, {count} times; it is not offered here again."
        self.bans.setdefault(place, {})[key[0]] = _Ban(text, message, action)
        return LoopVerdict(warning=message)

    def refused(self, page: str, url: str, problem: str) -> LoopVerdict:
        """A step whose reply was only actions banned here (``problem_kind`` "repeated"): the
        third repeat. Re-plan; stuck when the model gave nothing else ``STUCK_REPEATS`` times."""
        place = f"page:{page}"
        times = self.insisted[place] = self.insisted.get(place, 0) + 1
        if times >= STUCK_REPEATS:
            return LoopVerdict(stuck=f"the model gave only actions already repeated on this page, {times} times")
        done = "; ".join(ban.text for ban in self._here(page, url).values())
        already = f"Already done here, not offered again: {done}." if done else ""
        return LoopVerdict(warning=" ".join(x for x in (problem, already) if x), replan=True)


def _appeared(before: list[str], after: list[str]) -> list[str]:
    """The lines of ``after`` that ``before`` did not show (what an action made appear)."""
    old = set(before)
    return [line for line in after if line not in old and line.strip()]


def _said(answer: str) -> str:
    return " ".join(answer.split()).casefold()


def _path(url: str) -> str:
    return f"path:{urlsplit(url).path or '/'}"


def _holding(lines: list[str], action: LiveAction) -> list[str]:
    """The page's lines that hold a value the action set (the words it searched), each but a
    form's own control with the text lines after it, up to ``ROW_LINES`` (its row)."""
    values = [v.lower() for v in (action.value, *action.args.values(), *(f.value for f in action.fields)) if v.strip()]
    holds = [any(v in line.lower() for v in values) for line in lines]
    out: list[str] = []
    for i, line in enumerate(lines):
        if not holds[i]:
            continue
        out.append(line)
        if _FORM_LINE.match(line):
            continue
        for j in range(i + 1, min(i + 1 + ROW_LINES, len(lines))):
            if holds[j] or lines[j].startswith("[]"):
                break
            out.append(lines[j])
    return list(dict.fromkeys(out))


def _excerpt(lines: list[str]) -> str:
    """A few of ``lines``, briefly, as the model reads them (ids aside)."""
    # the page's text and links (rows, messages) before its fields and buttons
    ranked = sorted((line for line in lines if line.strip()), key=lambda line: bool(_FORM_LINE.match(line)))
    shown = [cut(line.removeprefix("[] ").strip(), 80) for line in ranked][:SHOWN_LINES]
    return "; ".join(f'"{line}"' for line in shown)
