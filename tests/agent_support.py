"""Helpers of the agent tests. A fake model reads an action call's step as data (its
``context``: ``webagent.web.live_action.LiveContext``), never out of the prompt's words; the
prompt itself (``prompt_of``) is for gist and look-up calls, which have no typed context, and
for tests about what the model was shown."""

from __future__ import annotations

import re

from webagent.web.live_action import step_message


def prompt_of(messages: list[dict]) -> str:
    """The step's own prompt: after the system message and worked examples for the live
    action, the one user message for a gist or a look-up."""
    if messages[0]["role"] == "system":
        return step_message(messages)
    return str(messages[0]["content"])


def demo_policy(messages, params, purpose, context=None):
    """A fake model that knows the demo shop: search, pick the book, fill the form, submit, DONE.
    The action reads the step as data (``context``: ``webagent.web.live_action.LiveContext``:
    the URL, the history, the controls), never the prompt's words."""
    prompt = prompt_of(messages)
    if purpose == "form_check":  # the form as the task wants it (the check is on by default)
        return {"fix": "", "ready": True}
    if purpose == "gist":  # keep the snippet (ids included): the look-up can then find things
        return prompt.split("Snippet:", 1)[-1].strip()[:2000]
    if purpose == "lookup":
        pages = [int(i) for i in re.findall(r'"index": (\d+)', prompt)]
        return {"pages": pages[:2], "reason": "to find the element"}
    url, history = context.url, "\n".join(context.history)
    if "index.html" in url:
        return {
            "operation": "TYPE",
            "element_id": context.control_id("search field", "Search books"),
            "value": "Night Trains",
            "press_enter": True,
        }
    if "results.html" in url:
        return {"operation": "CLICK", "element_id": context.control_id("link", "Night Trains")}
    if "order.html" in url:
        if '"Ada Lovelace"' not in history:
            return {
                "operation": "TYPE",
                "element_id": context.control_id("text field", "Your name"),
                "value": "Ada Lovelace",
                "press_enter": False,
            }
        if "SELECT" not in history:
            return {
                "operation": "SELECT",
                "element_id": context.control_id("select", "Shipping"),
                "value": "Express (1 day)",
            }
        return {"operation": "CLICK", "element_id": context.control_id("submit button", "Place order")}
    if "confirm.html" in url:
        return {"operation": "DONE", "element_id": "", "value": "Your order was placed"}  # (the page says so)
    raise AssertionError(f"unexpected page {url}")


def trace_lines(trace) -> list[dict]:
    """A trace's steps as ``steps.jsonl`` holds them, each read through its type
    (``webagent.trace.record.StepRecord``) and written back: the keys every reader shares."""
    return [s.to_json() for s in trace.steps()]
