"""The live agent's prompt as one growing conversation, so the server's prompt cache covers
everything that did not change since the last step.

A step's prompt used to be the system message, the worked examples, then the history and
the whole page again: the history in front of the page changed every step, so the cache
could not reach the page, and a long page was read again after each action (80-112 s a
step on a 2,900-token shop page). Here the first step (and the first after a reset) is the
usual step message (history, page, task, question); each next step appends the model's
action and a short user turn: the action's result, then only the lines of the page that
changed (or the whole page when the URL changed or most of it changed), the task and the
question. Everything before is the previous prompt unchanged, which the server has cached.

The conversation restarts from a full step message when it would outgrow
``budget_words``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from webagent.prompts import render_prompt
from webagent.web.agent_view import LINE_ID

# A page that changed in more than this share of its lines is sent whole, and so is a short
# page: a small model loses track of a form it no longer sees in the last turn (the 1.5B
# ticked the demo's gift wrap instead of choosing the shipping shown two turns up).
MAX_DIFF_SHARE = 0.5
MIN_DIFF_WORDS = 250
MAX_GONE_SHOWN = 3


def _words(messages: list[dict]) -> int:
    return sum(len(str(m.get("content", "")).split()) for m in messages)


def full_step_message(*, context: str, task: str, history: list[str], url: str, title: str, warning: str = "") -> str:
    """A step's whole user message (``web_live_action``: history, page, task, question); the
    blank line a warning would fill goes when there is none."""
    text = render_prompt(
        "web_live_action",
        context=context,
        task=task,
        url=url,
        title=title,
        history="\n".join(history) if history else "None",
        warning=warning,
    )
    return (text if warning else text.replace("\n\n", "\n")).strip()


@dataclass
class LiveChat:
    budget_words: int = 3500  # the conversation (after the fixed prefix) restarts beyond this
    turns: list[dict] = field(default_factory=list)
    url: str = ""  # the page the last user turn showed
    lines: list[str] = field(default_factory=list)
    restarts: int = 0

    def user_turn(
        self, *, context: str, task: str, history: list[str], url: str, title: str, warning: str, question: str
    ) -> str:
        """This step's user turn: the full step message, or the result and what changed."""
        lines = context.splitlines()
        if self.turns and _words(self.turns) + len(context.split()) // 4 > self.budget_words:
            self.reset()
            self.restarts += 1
        if not self.turns:
            return full_step_message(context=context, task=task, history=history, url=url, title=title, warning=warning)
        parts = [f"Result: {history[-1]}" if history else "Result: none"]
        parts.append(self._page_part(lines, url, title, context))
        if warning:
            parts.append(warning)
        parts += [f"Task: {task}", question]
        return "\n".join(parts)

    def _page_part(self, lines: list[str], url: str, title: str, context: str) -> str:
        if url != self.url:
            return f"Current page (URL: {url}, title: \"{title}\"):\n'''\n{context}\n'''"
        old = set(self.lines)
        new = [line for line in lines if line not in old]
        current = set(lines)
        changed_ids = {m.group(1) for line in new if (m := LINE_ID.match(line))}
        gone = [
            line
            for line in self.lines
            if line not in current and not ((m := LINE_ID.match(line)) and m.group(1) in changed_ids)
        ]
        if not new and not gone:
            return "The page is the same as above."
        if len(context.split()) < MIN_DIFF_WORDS or len(new) + len(gone) > MAX_DIFF_SHARE * max(len(lines), 1):
            return f"The page now (URL: {url}, title: \"{title}\"):\n'''\n{context}\n'''"
        text = (
            "The page changed; these lines are new or changed (the rest is as above):\n'''\n" + "\n".join(new) + "\n'''"
        )
        if gone:
            shown = "; ".join(line[:60] for line in gone[:MAX_GONE_SHOWN])
            text += f"\nGone from the page: {shown}" + (
                f" and {len(gone) - MAX_GONE_SHOWN} more" if len(gone) > MAX_GONE_SHOWN else ""
            )
        return text

    def commit(self, user: str, action: dict | None, reply_text: str, *, url: str, context: str) -> None:
        """Keep this step in the conversation: the user turn and the action the model gave."""
        answer = json.dumps({"action": action}) if action is not None else reply_text
        self.turns += [{"role": "user", "content": user}, {"role": "assistant", "content": answer}]
        self.url, self.lines = url, context.splitlines()

    def reset(self) -> None:
        self.turns, self.url, self.lines = [], "", []


_BLOCK = re.compile(r"'''\n(.*?)\n'''", re.DOTALL)
_GONE = re.compile(r"^Gone from the page: (.*?)(?: and \d+ more)?$", re.MULTILINE)


def fold_conversation(turns: list[str]) -> str:
    """The conversation's user turns folded into one full step message: the history (the
    first turn's, then each "Result:" line), the page (the last whole page, with the changed
    lines of later turns put in: a line with an id replaces the line with that id, any other
    is added; lines said to be gone are dropped), then the last turn's task and question."""
    first = turns[0]
    history = first.split("Previous actions and their results:\n", 1)[-1].split("\nCurrent page", 1)[0]
    history_lines = [] if history.strip() == "None" else history.splitlines()
    header = first[first.index("Current page") :].split("\n", 1)[0] if "Current page" in first else "Current page:"
    page = m.group(1).splitlines() if (m := _BLOCK.search(first)) else []
    for turn in turns[1:]:
        head, _, rest = turn.partition("\n")
        if head.startswith("Result: "):
            history_lines.append(head[len("Result: ") :])
        block = _BLOCK.search(rest)
        if rest.startswith(("Current page", "The page now")) and block:
            page = block.group(1).splitlines()
            header = "Current page " + rest.split("\n", 1)[0].split("(", 1)[-1].join(["(", ""])
        elif rest.startswith("The page changed") and block:
            by_id = {m.group(1): i for i, line in enumerate(page) if (m := LINE_ID.match(line))}
            for line in block.group(1).splitlines():
                m = LINE_ID.match(line)
                if m and m.group(1) in by_id:
                    page[by_id[m.group(1)]] = line
                else:
                    page.append(line)
            if gone := _GONE.search(rest):
                cut = [g.strip() for g in gone.group(1).split("; ")]
                page = [line for line in page if line[:60] not in cut]
    last = turns[-1]
    tail = last[last.rindex("\nTask: ") + 1 :] if "\nTask: " in last else ""
    if warning := _warning(last):  # the last turn's warning, where the full message has it
        tail = warning + "\n" + tail
    history_text, page_text = "\n".join(history_lines) or "None", "\n".join(page)
    return f"Previous actions and their results:\n{history_text}\n{header}\n'''\n{page_text}\n'''\n{tail}"


def _warning(turn: str) -> str:
    """What a turn says between its page and its task (a warning, a dialog), or ""."""
    body = turn[: turn.rindex("\nTask: ")] if "\nTask: " in turn else turn
    if not turn.startswith("Previous actions"):
        body = body.partition("\n")[2]  # after its "Result:" line
    if body.startswith("The page is the same as above."):
        return body[len("The page is the same as above.") :].strip()
    block = _BLOCK.search(body)
    after = body[block.end() :] if block else ""
    if after.lstrip("\n").startswith("Gone from the page: "):
        after = after.lstrip("\n").partition("\n")[2]
    return after.strip()
