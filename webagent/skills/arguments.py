"""Whether a skill's arguments can be right, checked before any of its steps is done.

A secret reaches the model only as a placeholder: the agent's own (``<secret:password>``,
``agent.secrets``) or the mask a page shows a password field's value as (``REDACTED``,
"********"). A placeholder is accepted only by a parameter of kind "secret" (a project's
identifier given "********" was submitted as such), and in a run that knows secrets a secret
parameter takes only a placeholder of one of them (the mask, or a value the model made up,
would be typed as the password). Where no secret is known (``webagent skills run``, no model;
a task that gave its password in plain words) a secret parameter takes the password itself,
never a placeholder, which would be typed as it is."""

from __future__ import annotations

from collections.abc import Callable

from webagent.browser import Action, ActionResult
from webagent.browser.guard import PLACEHOLDER, holds_placeholder
from webagent.skills.model import Skill


def refusal(skill: Skill, args: dict[str, str], reveal: Callable[[str], str] | None = None) -> str | None:
    """Why ``args`` cannot be right for ``skill`` (one line the model reads), or None.
    ``reveal``: a placeholder -> its secret's value, in a run that knows secrets; None where
    none is known (a secret is then given as itself)."""
    for param in skill.params:
        value = args.get(param.name)
        if value is None:
            continue  # a missing argument is the action parser's to refuse
        if param.kind != "secret":
            if holds_placeholder(value):
                return (
                    f"{param.name} is not a password: it takes no secret's placeholder ({value!r}); "
                    "give the value the task names"
                )
        elif reveal is None:
            if holds_placeholder(value):
                return f"{param.name} is a password: give the password itself, not a placeholder ({value!r})"
        elif not (PLACEHOLDER.fullmatch(value.strip()) and reveal(value.strip()) != value.strip()):
            return (
                f"{param.name} is a password: it takes only a secret's placeholder such as "
                f"<secret:password> from the task, not {_shown(value)}"
            )
    return None


def _shown(value: str) -> str:
    """A value refused for a secret parameter, as the message may show it: a placeholder as
    itself, anything else never (it may be the password given as plain words)."""
    return repr(value) if holds_placeholder(value) or not value.strip() else "a value written out"


def not_run(skill: Skill, why: str) -> ActionResult:
    """The result of a skill refused before its first step (nothing was done)."""
    return ActionResult(ok=False, action=Action(op="BACK"), error=f'skill "{skill.name}" was not run: {why}')
