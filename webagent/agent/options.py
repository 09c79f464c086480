"""The live agent's options (``AgentOptions``): what a run may do and how it reads pages.

The defaults live here and only here: the Python API (``Agent``, ``run_agent``), ``webagent
run``, ``replay``'s repairs, ``apps eval`` and ``miniwob`` all start from them.
The options a user may set from the command line carry their flag and help in the field's
metadata (``cli``); ``webagent.agent.cli_options.agent_options`` turns them into click options, so a
flag's default is the field's default."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal, get_args

from webagent.web.web_memory import ACT_ON, ActOn  # which ids an action may name after a look-up

Lookup = Literal["auto", "always"]  # auto: a page that fits the context whole skips gists and look-up
PromptLayout = Literal["chat", "full"]  # chat: one growing conversation (prompt cache); full: each step whole
RunStatus = Literal["done", "max_steps", "stuck", "error", "interrupted"]  # how a run ended (AgentResult.status)

LOOKUPS: tuple[str, ...] = get_args(Lookup)


def cli(flag: str, help: str, *, minimum: int | None = None, negative: str | None = None) -> dict[str, Any]:
    """A field's command-line flag: ``--max-steps``; a bool's ``negative`` makes it ``--x/--no-x``."""
    return {"cli": {"flag": flag, "help": help, "min": minimum, "negative": negative}}


@dataclass
class AgentOptions:
    max_steps: int = field(default=15, metadata=cli("--max-steps", "Most steps.", minimum=1))
    lookup: Lookup = field(
        default="auto",
        metadata=cli("--lookup", "auto: a page that fits the context whole is read without gists and look-up."),
    )
    max_lookup: int = field(
        default=3, metadata=cli("--max-lookup", "Most snippets the look-up may read again.", minimum=1)
    )
    context_tokens: int = field(
        default=8192, metadata=cli("--context-tokens", "The model's context window.", minimum=512)
    )
    act_on: ActOn = "looked-up"
    depth: int | str = "auto"
    budget_words: int = 300
    dry_run: bool = False
    screenshots: bool = True
    prompt: PromptLayout = "chat"
    # a short model call before a form is sent (webagent.web.form_check)
    form_check: bool = field(
        default=True,
        metadata=cli(
            "--form-check",
            "Before a form is sent, a short model call checks its fields against the task; what it finds is "
            "told to the model (the form is sent the next time it is asked).",
            negative="--no-form-check",
        ),
    )
    skills: bool = True  # offer the start site's skills (webagent.skills) beside the page's controls
    # issue 47's guards, each a lever of its own (webagent.agent.loop_breaker, webagent.agent.grounding)
    loop_breaker: bool = field(
        default=True,
        metadata=cli(
            "--loop-breaker",
            "An action done on a page state leaves that state's choices (at once if it changed nothing, on a "
            "return if it led away), and the model is told what the page already shows; a third repeat asks "
            "afresh.",
            negative="--no-loop-breaker",
        ),
    )
    grounded_done: bool = field(
        default=True,
        metadata=cli(
            "--grounded-done",
            "DONE is refused once when its answer is on no page the run saw (with the nearest text the pages "
            "showed), or when it gives no answer and nothing on the site was changed.",
            negative="--no-grounded-done",
        ),
    )
    reason: bool = field(
        default=True,
        metadata=cli(
            "--reason",
            "The model writes a short reason before each action (shown in the trace, never executed).",
            negative="--no-reason",
        ),
    )
    task_lines: bool = field(
        default=True,
        metadata=cli(
            "--task-lines",
            "After a long page, show again its parts that share the most words with the task "
            "(webagent.agent.task_lines).",
            negative="--no-task-lines",
        ),
    )
    plan: bool = field(
        default=True,
        metadata=cli(
            "--plan", "A skill is reached by a plan over skills (webagent.skills.plan).", negative="--no-plan"
        ),
    )
    skill_states: bool = field(
        default=True,
        metadata=cli("--skill-states", "Match skills' learned start states.", negative="--no-skill-states"),
    )
    menu: bool = field(
        default=True, metadata=cli("--menu", "Rank and cap the skills offered by the task.", negative="--no-menu")
    )

    def __post_init__(self) -> None:
        for name, allowed in (("lookup", LOOKUPS), ("act_on", ACT_ON), ("prompt", get_args(PromptLayout))):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)} (got {getattr(self, name)!r})")


def cli_fields() -> list:
    """The ``AgentOptions`` fields a command line sets, in their order."""
    return [f for f in fields(AgentOptions) if "cli" in f.metadata]
