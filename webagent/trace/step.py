"""One recorded step, the one shape of a step done again: a workflow's step
(``trace.workflow``, replayed by ``webagent.replay``) and a skill's step (``webagent.skills``,
learned from a workflow's steps) are this type, and ``webagent.trace.engine`` executes it.

On disk it is JSON with the keys its writer set (``Workflow.to_json``), or with every field
(a skills file)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from webagent.trace.fingerprint import Fingerprint, PageRef, short

Op = Literal["CLICK", "TYPE", "SELECT", "SCROLL", "GOTO", "BACK", "DONE"]
ELEMENT_OPS = ("CLICK", "TYPE", "SELECT")


class RecordedStep(BaseModel):
    model_config = ConfigDict(extra="forbid")
    op: Op
    value: str = ""  # the recorded value (a parameter's default; ``REDACTED`` for a password)
    param: str | None = None  # the parameter whose value goes here
    press_enter: bool = False
    target: Fingerprint | None = None  # the element, findable again (None for GOTO, BACK, DONE)
    page: PageRef = Field(default_factory=PageRef)  # the page it was done on
    text: str = ""  # how the recording told the step
    secret: bool = False  # a password typed (its value never kept)
    repaired: bool = False  # the model's action for a step a replay could not do as recorded

    def describe(self) -> str:
        """``TYPE "Night Trains" {search_books} into [searchbox] "Search books"`` (for hints and listings)."""
        op, value = self.op, self.value
        shown = f' "{value}"' if value and op not in ("CLICK", "BACK") else ""
        param = f" {{{self.param}}}" if self.param else ""
        if op == "TYPE":
            return f"TYPE{shown}{param} into {short(self.target)}" + (" + Enter" if self.press_enter else "")
        if op == "SELECT":
            return f"SELECT{shown}{param} in {short(self.target)}"
        if op == "CLICK":
            return f"CLICK {short(self.target)}"
        if op == "DONE":
            return f"DONE{shown}"
        return f"{op}{shown}"
