"""The agent's ceiling: a function-driven fake model that proposes, at every step, the gold
path's next action, found in the agent's own prompt by the element's role and name (the
way the task's gold path describes it). What the agent then refuses, or does not show, is
the agent's loss, not the model's.

The fake reads only what the agent shows a model: the control lines of the step prompt
(``[id] kind "name" state``). It moves to the next gold step once the previous proposal
was carried out (the last history line of the next prompt does not read "failed"). It
answers gist and look-up calls too (a gist is the snippet's control lines; a look-up picks
the parts whose gist names the target), so pages too long for the context still work."""

from __future__ import annotations

import re
import string

from webagent.apps.spec import GoldStep, Task
from webagent.llm.reask import REASK_PREFIX
from webagent.llm.testing import FunctionBackend
from webagent.web.live_action import step_message

# The agent view's kinds each gold role may be shown as.
ROLE_KINDS = {
    "link": ("link",),
    "button": ("button", "submit button", "clickable", "clickable button"),
    "checkbox": ("checkbox", "switch"),
    "radio": ("radio",),
    "switch": ("switch", "checkbox"),
    "tab": ("tab",),
    "menuitem": ("menuitem",),
    "option": ("option",),
    "combobox": ("select",),
    "listbox": ("select",),
}
TYPE_ROLES = ("textbox", "searchbox", "spinbutton")
# [id] kind "name" state...: the kind runs up to the quoted name (a control without a name has none).
_LINE = re.compile(r'^\[([A-Za-z0-9_-]+)\] ([^"\n]+?)(?: "([^"\n]*)"(?: |$)|$)', re.MULTILINE)
_PAGE = re.compile(r"Current page \(URL: .*?\n'''\n(.*?)\n'''", re.DOTALL)
_PART = re.compile(r"\(part (\d+)[,)]")
_PUNCT = str.maketrans("", "", string.punctuation.replace("'", "") + "…")


def _fold_name(text: str) -> str:
    return " ".join(text.translate(_PUNCT).split()).casefold()


def _fits(step: GoldStep, kind: str) -> bool:
    if step.op == "type":
        return kind.endswith(("field", "text area")) and "read-only" not in kind
    if step.op == "select":
        return kind == "select"
    return kind in ROLE_KINDS.get(step.role, (step.role,))


def find_line(page: str, step: GoldStep) -> str | None:
    """The id of the line that shows ``step``'s element, by kind and name."""
    fitting = [m for m in _LINE.finditer(page) if _fits(step, m.group(2).strip())]
    # The name as written first ("Owner"), then as folded: a field named only by its form
    # name ("owner") is not the one a person reads as "Owner" when that one is there too.
    found = [m.group(1) for m in fitting if (m.group(3) or "") == step.name] or [
        m.group(1) for m in fitting if _fold_name(m.group(3) or "") == _fold_name(step.name)
    ]
    if not found:
        return None
    return found[step.nth] if step.nth is not None and step.nth < len(found) else found[0]


def _is_checked(page: str, element_id: str) -> bool | None:
    line = next((m.group(0) for m in re.finditer(rf"^\[{re.escape(element_id)}\] .*$", page, re.MULTILINE)), "")
    return None if "checked" not in line else " not checked" not in line


def proposal(step: GoldStep, element_id: str) -> dict:
    if step.op == "type":
        return {"operation": "TYPE", "element_id": element_id, "value": step.value, "press_enter": False}
    if step.op == "select":
        return {"operation": "SELECT", "element_id": element_id, "value": step.value}
    return {"operation": "CLICK", "element_id": element_id}


class GoldModel:
    """One task's perfect model; ``losses`` says where the agent stood in its way."""

    def __init__(self, task: Task):
        self.task = task
        self.next = 0  # the gold step to propose
        self.proposed: int | None = None
        self.history_seen = 0
        self.losses: list[dict] = []
        self.last: dict | None = None

    def backend(self) -> FunctionBackend:
        return FunctionBackend(self.reply, name="fake:gold", record=False)

    def _advance(self, prompt: str) -> None:
        history = prompt.split("Previous actions and their results:\n", 1)[-1].split("\nCurrent page", 1)[0]
        lines = [] if history.strip() == "None" else [h for h in history.splitlines() if h.strip()]
        if len(lines) > self.history_seen and self.proposed is not None:
            last = lines[-1]
            if "-> failed" not in last and self.proposed == self.next:
                self.next += 1
            elif "-> failed" in last:
                self._lose(last.split(". ", 1)[-1])
        self.history_seen = len(lines)
        self.proposed = None

    def _lose(self, message: str) -> None:
        step = self.task.gold[min(self.next, len(self.task.gold) - 1)]
        if self.losses and self.losses[-1]["gold_step"] == self.next + 1 and self.losses[-1]["message"] == message:
            return
        self.losses.append({"gold_step": self.next + 1, "step": step.describe(), "message": message})

    def reply(self, messages: list[dict], params: dict, purpose: str):
        if purpose == "form_check":  # a perfect model sends the form the gold path sends
            return {"ready": True, "fix": ""}
        if purpose.startswith("gist"):
            text = str(messages[-1]["content"])
            return "\n".join(m.group(0).strip() for m in _LINE.finditer(text))[:2000] or "text"
        if purpose.startswith("lookup"):
            step = self.task.gold[min(self.next, len(self.task.gold) - 1)]
            text = "\n".join(str(m.get("content", "")) for m in messages)
            parts = [int(p) for p in _PART.findall(text)] or [0]
            named = [
                p
                for p, chunk in zip(parts, re.split(r"\(part \d+[,)]", text)[1:])
                if _fold_name(step.name) in _fold_name(chunk)
            ]
            return {"pages": (named or parts)[:3], "reason": "the part that shows the next element"}
        prompt = step_message(messages)
        reasked = str(messages[-1]["content"]).startswith(REASK_PREFIX)  # the agent refused the proposal
        if reasked and self.last is not None:
            return self.last
        self._advance(prompt)
        self.last = self._propose(prompt)
        return self.last

    def _propose(self, prompt: str) -> dict:
        page = m.group(1) if (m := _PAGE.search(prompt)) else prompt
        while self.next < len(self.task.gold):
            step = self.task.gold[self.next]
            if step.op == "done":
                self.proposed = self.next
                return {"operation": "DONE", "value": step.value}
            element_id = find_line(page, step)
            if element_id is None:
                self._lose(f"no line shows {step.role} {step.name!r}")
                self.proposed = None
                return {"operation": "SCROLL", "value": "down"}
            if step.op in ("check", "uncheck") and _is_checked(page, element_id) == (step.op == "check"):
                self.next += 1  # already as the step wants it (Playwright's check() does nothing either)
                continue
            self.proposed = self.next
            return proposal(step, element_id)
        return {"operation": "DONE", "value": ""}
