"""The agent's ceiling: a function-driven fake model that proposes, at every step, the gold
path's next action. What the agent then refuses, or does not show, is the agent's loss, not
the model's.

The element is found as the gold check finds it: by role and accessible name in the live
page (``webagent.apps.locate``: Playwright's ``get_by_role(..., exact=True)``, then the
element's backend node, which is the agent's id). The fake then looks for that id among the
controls the step offers (the action call's ``LiveContext.controls``, by id, with the kind and
name each line shows) and proposes the action on it. So a control the agent shows under
another name is still found, and counted apart:

* **not offered**: the element is on the page, but the step offers no control for it (the
  loss says what the agent offered nearest to it instead);
* **naming defect** (``naming``): the control shows the element under a name other than its
  accessible name (both names kept; icon-font glyphs aside, as the view drops them).

Without a live page (``attach`` not called), or when the element is not on the page yet, the
control is found by kind and name among those offered. A ``wait`` step is waited for in the
live page (a person waits for the confirmation), then the next step is proposed. The fake
moves to the next gold step once the previous proposal was carried out (the last line of the
step's ``LiveContext.history`` does not read "failed"). It answers gist and look-up calls too,
which carry no typed context and are read from their prompt (a gist is the snippet's control
lines; a look-up picks the parts that hold the element's line, else whose gist names it), so
pages too long for the context still work."""

from __future__ import annotations

import difflib
import json
import re
import string
from collections.abc import Mapping
from typing import Literal

from webagent.apps.spec import GoldStep, Task
from webagent.errors import first_line
from webagent.llm.reask import REASK_PREFIX
from webagent.llm.testing import FunctionBackend
from webagent.web.agent_view import Control
from webagent.web.control_name import visible_name

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
# A gist's control lines, [id] kind "name" (the state after the name left out): the kind runs up
# to the quoted name, written as JSON writes a string (a quote inside it escaped).
_LINE = re.compile(r'^\[([A-Za-z0-9_-]+)\] ([^"\n]+?)(?: "((?:[^"\\\n]|\\.)*)"(?: |$)|$)', re.MULTILINE)
_PART = re.compile(r"\(part (\d+)[,)]")
_PUNCT = str.maketrans("", "", string.punctuation.replace("'", "") + "…")

LossKind = Literal["not_offered", "refused", "other"]  # how the agent kept a gold step from the perfect model


def _fold_name(text: str) -> str:
    return " ".join(text.translate(_PUNCT).split()).casefold()


def same_name(shown: str, accessible: str) -> bool:
    """Whether the view's name is the accessible name, spacing and icon-font glyphs aside."""
    return visible_name(shown) == visible_name(accessible)


def _fits(step: GoldStep, kind: str, by_role: bool = True) -> bool:
    """Whether a line of ``kind`` takes the step's operation and, ``by_role``, may show its
    element's role (without: the element is the gold one already)."""
    field = kind.endswith(("field", "text area")) and "read-only" not in kind
    if step.op == "type":
        return field
    if step.op == "select":
        return kind == "select"
    if by_role:
        return kind in ROLE_KINDS.get(step.role, (step.role,))
    return not field and kind != "select"


def find_control(controls: Mapping[str, Control], step: GoldStep) -> str | None:
    """The id of the control offered for ``step``'s element, by kind and name."""
    fitting = [(i, c) for i, c in controls.items() if _fits(step, c.kind)]
    # The name as written first ("Owner"), then as folded: a field named only by its form
    # name ("owner") is not the one a person reads as "Owner" when that one is there too.
    found = [i for i, c in fitting if same_name(c.name, step.name)] or [
        i for i, c in fitting if _fold_name(c.name) == _fold_name(step.name)
    ]
    if not found:
        return None
    return found[step.nth] if step.nth is not None and step.nth < len(found) else found[0]


def nearest_controls(controls: Mapping[str, Control], name: str, limit: int = 3) -> list[str]:
    """The controls whose names are closest to ``name``, as their lines start (for a loss's message)."""
    by_name = {c.name: i for i, c in controls.items() if c.name}
    close = difflib.get_close_matches(name, list(by_name), n=limit, cutoff=0.3)
    return [f"[{by_name[n]}] {controls[by_name[n]].kind} {json.dumps(n, ensure_ascii=False)}" for n in close]


def proposal(step: GoldStep, element_id: str) -> dict:
    if step.op == "type":
        return {"operation": "TYPE", "element_id": element_id, "value": step.value, "press_enter": False}
    if step.op == "select":
        return {"operation": "SELECT", "element_id": element_id, "value": step.value}
    return {"operation": "CLICK", "element_id": element_id}


class GoldModel:
    """One task's perfect model; ``losses`` says where the agent stood in its way."""

    def __init__(self, task: Task, browser=None):
        self.task = task
        self.browser = browser  # the agent's BrowserSession: elements are found in its live page
        self.next = 0  # the gold step to propose
        self.proposed: int | None = None
        self.history_seen = 0
        self.losses: list[dict] = []
        self.naming: list[dict] = []  # elements shown under another name than their accessible one
        self.found = {"element": 0, "name": 0}  # proposals whose line was found by element, or by name
        self.last: dict | None = None

    def attach(self, browser) -> None:
        """Find each step's element in ``browser``'s live page (see the module docstring)."""
        self.browser = browser

    def backend(self) -> FunctionBackend:
        return FunctionBackend(self.reply, name="fake:gold", record=False)

    def _advance(self, lines: list[str]) -> None:
        """The run's history lines (``LiveContext.history``): the last proposal was done, or lost."""
        if len(lines) > self.history_seen and self.proposed is not None:
            last = lines[-1]
            if "-> failed" not in last and self.proposed == self.next:
                self.next += 1
            elif "-> failed" in last:
                self._lose(last.split(". ", 1)[-1], "refused")
        self.history_seen = len(lines)
        self.proposed = None

    def _lose(self, message: str, kind: LossKind) -> None:
        """A gold step the agent kept from the perfect model: ``not_offered`` (no line shows its
        element), ``refused`` (the action was refused or failed), ``other`` (a wait in vain)."""
        step = self.task.gold[min(self.next, len(self.task.gold) - 1)]
        if self.losses and self.losses[-1]["gold_step"] == self.next + 1 and self.losses[-1]["message"] == message:
            return
        self.losses.append({"gold_step": self.next + 1, "step": step.describe(), "message": message, "kind": kind})

    async def _ids(self, step: GoldStep) -> list[str] | None:
        if self.browser is None or step.op in ("done", "wait", "dialog"):
            return None
        from webagent.apps.locate import gold_ids

        return await gold_ids(self.browser, step)

    async def reply(self, messages: list[dict], params: dict, purpose: str, context=None):
        if purpose == "form_check":  # a perfect model sends the form the gold path sends
            return {"ready": True, "fix": ""}
        if purpose.startswith("gist"):
            text = str(messages[-1]["content"])
            return "\n".join(m.group(0).strip() for m in _LINE.finditer(text))[:2000] or "text"
        if purpose.startswith("lookup"):
            step = self.task.gold[min(self.next, len(self.task.gold) - 1)]
            text = "\n".join(str(m.get("content", "")) for m in messages)
            parts = [int(p) for p in _PART.findall(text)] or [0]
            chunks = list(zip(parts, re.split(r"\(part \d+[,)]", text)[1:]))
            ids = await self._ids(step) or []
            holding = [p for p, chunk in chunks if any(f"[{i}]" in chunk for i in ids)]
            named = [p for p, chunk in chunks if _fold_name(step.name) in _fold_name(chunk)]
            return {"pages": (holding or named or parts)[:3], "reason": "the part that shows the next element"}
        reasked = str(messages[-1]["content"]).startswith(REASK_PREFIX)  # the agent refused the proposal
        if reasked and self.last is not None:
            return self.last
        if context is None:  # a caller that drops it would see the gold path never advance
            raise RuntimeError("the gold model needs the step as data: call reply(..., context=call_context.get())")
        self._advance(list(context.history))
        self.last = await self._propose(context.controls)
        return self.last

    async def _find(self, controls: Mapping[str, Control], step: GoldStep) -> tuple[str | None, str]:
        """(the id of the control offered for ``step``'s element, or None with why not)."""
        ids = await self._ids(step)
        if ids is None:  # no live page, or not on it now: by kind and name among those offered
            found = find_control(controls, step)
            self.found["name"] += found is not None
            return found, "" if found else f"no line shows {step.role} {step.name!r}"
        shown = next((i for i in ids if i in controls and _fits(step, controls[i].kind, by_role=False)), None)
        if shown is None:
            nearest = nearest_controls(controls, step.name)
            instead = f"; nearest lines: {'; '.join(nearest)}" if nearest else "; the prompt shows no control near it"
            return None, f"not offered: no line shows {step.role} {step.name!r} (node {ids[0]}){instead}"
        self.found["element"] += 1
        kind, name = controls[shown].kind, controls[shown].name
        if not same_name(name, step.name) and not any(n["gold_step"] == self.next + 1 for n in self.naming):
            self.naming.append(
                {"gold_step": self.next + 1, "id": shown, "kind": kind, "accessible": step.name, "shown": name}
            )
        return shown, ""

    async def _propose(self, controls: Mapping[str, Control]) -> dict:
        while self.next < len(self.task.gold):
            step = self.task.gold[self.next]
            if step.op == "done":
                self.proposed = self.next
                return {"operation": "DONE", "value": step.value}
            if step.op == "wait":
                await self._wait(step)
                self.next += 1
                continue
            if step.op == "dialog":  # the step before raised it: the agent shows it and takes the answer
                self.proposed = self.next
                return {"operation": "DIALOG", "value": step.value}
            element_id, why = await self._find(controls, step)
            if element_id is None:
                self._lose(why, "not_offered")
                self.proposed = None
                return {"operation": "SCROLL", "value": "down"}
            state = {"check": "checked", "uncheck": "not checked"}.get(step.op)
            if state is not None and controls[element_id].value == state:
                self.next += 1  # already as the step wants it (Playwright's check() does nothing either)
                continue
            self.proposed = self.next
            return proposal(step, element_id)
        return {"operation": "DONE", "value": ""}

    async def _wait(self, step: GoldStep) -> None:
        """A person waits for the confirmation before going on: so does the perfect model."""
        if self.browser is None:
            return
        from webagent.apps.gold import wait_for

        try:
            await wait_for(self.browser.page, step)
        except Exception as exc:  # noqa: BLE001 - what was awaited never came: the loss says so
            self._lose(f"waited in vain: {first_line(exc)}", "other")
