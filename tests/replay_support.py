"""Helpers of the replay tests: record the demo order with the function-driven fake,
a fake that fails the test when called, and a fake that repairs the changed shop."""

from __future__ import annotations

import re
from pathlib import Path

from webagent import Agent
from webagent.demo_site import DEMO_TASK
from webagent.llm.testing import FunctionBackend, fake_client

CHANGED_SITE = Path(__file__).parent / "fixtures" / "demo_site_changed"


def prompt_of(messages: list[dict]) -> str:
    """The step's own prompt: the last message (instructions and worked examples may come first)."""
    return str(messages[-1]["content"])


class Forbidden(FunctionBackend):
    """A model that must not be called: any call is recorded and raises."""

    def __init__(self):
        super().__init__(self._refuse, name="fake:forbidden")

    @staticmethod
    def _refuse(messages, params, purpose):
        raise AssertionError(f"the model was called during a replay (purpose={purpose!r})")


def demo_policy(messages, params, purpose, context=None):
    """The demo order (search, pick the book, name, shipping, submit, DONE), read from the step
    as data (``context``: URL, history, controls), never from the prompt's words."""
    prompt = prompt_of(messages)
    if purpose == "form_check":  # the form as the task wants it (the check is on by default)
        return {"fix": "", "ready": True}
    if purpose == "gist":
        return prompt.split("Snippet:", 1)[-1].strip()[:2000]
    if purpose == "lookup":
        return {"pages": [int(i) for i in re.findall(r'"index": (\d+)', prompt)][:2], "reason": "to find it"}
    url, history = context.url, "\n".join(context.history)
    if "index.html" in url:
        return {
            "operation": "TYPE",
            "element_id": context.control_id("search field"),
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
            }
        if "SELECT" not in history:
            return {
                "operation": "SELECT",
                "element_id": context.control_id("select", "Shipping"),
                "value": "Express (1 day)",
            }
        return {"operation": "CLICK", "element_id": context.control_id("button", "Place order")}
    if "confirm.html" in url:
        return {"operation": "DONE", "element_id": "", "value": "Night Trains"}  # (the book, as the page shows it)
    raise AssertionError(f"unexpected page {url}")


def confirm_button_policy(messages, params, purpose, context=None):
    """Repairs the changed shop's one changed step: the order button, now "Confirm purchase"."""
    prompt = prompt_of(messages)
    if purpose == "form_check":  # the form as the task wants it (the check is on by default)
        return {"fix": "", "ready": True}
    assert purpose == "action", purpose
    assert 'last time: CLICK [button] "Place order"' in prompt, prompt[
        -800:
    ]  # the repair's hint, as the model reads it
    return {"operation": "CLICK", "element_id": context.control_id("button", "Confirm purchase")}


async def record_demo(site: str, folder: Path, **kwargs):
    """The demo order, done by the function-driven fake through the public API."""
    backend = FunctionBackend(demo_policy)
    result = await Agent(DEMO_TASK, url=site + "index.html", llm=fake_client(backend), trace_dir=folder, **kwargs).run()
    assert result.status == "done", (result.error, result.trace_dir)
    return result, backend
