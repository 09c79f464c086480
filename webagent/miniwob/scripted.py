"""A scripted model that knows the right actions of five MiniWoB++ tasks (click-button,
enter-text, login-user, choose-list, click-checkboxes): the harness check. Run through the
whole agent (prompt → reply → parse → browser), it must score 100% on those tasks; a
lower score means the harness (serving, seeding, capture, actions, reward) is wrong.

It reads the live action prompt as any model would: the task line, the page context and
the history of previous actions. Use it as ``--model fake:scripted`` or
``FunctionBackend(scripted_reply)``.
"""

from __future__ import annotations

import re

SCRIPTED_TASKS = ("click-button", "enter-text", "login-user", "choose-list", "click-checkboxes")
# The `miniwob` command's tasks: the five above and book-flight, which no script here knows.
SUITE_TASKS = (*SCRIPTED_TASKS, "book-flight")


def _parts(messages: list[dict]) -> tuple[str, str, str]:
    """(page, task, history) of the step's prompt (the user message after the examples)."""
    from webagent.web.live_action import step_message

    step = step_message(messages)
    pieces = step.split("'''")
    context = pieces[1] if len(pieces) > 2 else ""
    found = re.search(r"^Task: (.*)$", step, re.MULTILINE)
    task = found[1] if found else ""
    history = step.split("Previous actions and their results:", 1)[-1].split("Current page", 1)[0]
    return context, task, history


def _id(context: str, kind: str, name: str = "") -> str | None:
    """The id of the first control line ``[N] <kind> "<name>`` (regexes) in the agent view."""
    named = f' "{name}' if name else ""  # a name, when given, must match: not the first control of the kind
    m = re.search(rf"^\[([A-Za-z0-9_-]+)\] (?:{kind}){named}", context, re.MULTILINE)
    return m.group(1) if m else None


def _done_ok(history: str) -> int:
    return len(re.findall(r"-> (?:ok|no change)", history))


def _click(element_id):
    return {"operation": "CLICK", "element_id": element_id or ""}


def _submit(context: str, word: str = "Submit"):
    return _click(_id(context, "(?:submit )?button", re.escape(word) + '"'))


def plan(task: str, context: str, history: str) -> dict:
    """The next action for the utterance ``task`` on ``context``."""
    done = _done_ok(history)
    if m := re.match(r'Click on the "(.*)" button', task):
        return _submit(context, m.group(1))
    if m := re.match(r'Enter "(.*)" into the text field', task):
        steps = [
            {"operation": "TYPE", "element_id": _id(context, "text field"), "value": m.group(1), "press_enter": False},
            _submit(context),
        ]
        return steps[min(done, 1)]
    if m := re.match(r'Enter the username "(.*)" and the password "(.*)" into', task):
        steps = [
            {"operation": "TYPE", "element_id": _id(context, "text field"), "value": m.group(1), "press_enter": False},
            {
                "operation": "TYPE",
                "element_id": _id(context, "password field"),
                "value": m.group(2),
                "press_enter": False,
            },
            _submit(context, "Login"),
        ]
        return steps[min(done, 2)]
    if m := re.match(r"Select (.*) from the list and click Submit", task):
        # State, not history: a select already showing the option (its first option may be
        # the one asked for, and choosing it again changes nothing visible) is submitted.
        if re.search(rf'^\[[A-Za-z0-9_-]+\] select selected="{re.escape(m.group(1))}"', context, re.MULTILINE):
            return _submit(context)
        return {"operation": "SELECT", "element_id": _id(context, "select"), "value": m.group(1)}
    if m := re.match(r"Select (.*) and click Submit", task):
        wanted = set() if m.group(1) == "nothing" else {w.strip() for w in m.group(1).split(",")}
        # State, not history: click each checkbox whose state differs from what is wanted.
        for box, word, state in re.findall(
            r'^\[([A-Za-z0-9_-]+)\] checkbox "([^"]*)" (checked|not checked)', context, re.MULTILINE
        ):
            if (word in wanted) != (state == "checked"):
                return _click(box)
        return _submit(context)
    return {"operation": "DONE", "element_id": "", "value": "not scripted"}


def scripted_reply(messages: list[dict], params: dict, purpose: str):
    prompt = str(messages[0]["content"])
    if purpose == "gist":
        return prompt.split("Snippet:", 1)[-1].strip()[:2000]
    if purpose == "lookup":
        pages = [int(i) for i in re.findall(r'"index": (\d+)', prompt)]
        return {"pages": pages[:3] or [0], "reason": "to read them"}
    if purpose == "form_check":  # the plan sends a form only once it is filled in as the task asks
        return {"ready": True, "fix": ""}
    context, task, history = _parts(messages)
    return plan(task, context, history)
