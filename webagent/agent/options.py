"""The live agent's options (``AgentOptions``): what a run may do and how it reads pages.
The CLI's defaults are in ``webagent.cli_run``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class AgentOptions:
    max_steps: int = 15
    lookup: str = "auto"  # "auto": skip gists and look-up when the whole page fits; "always"
    max_lookup: int = 3
    context_tokens: int = 8192
    act_on: str = "looked-up"
    depth: int | str = "auto"
    budget_words: int = 300
    dry_run: bool = False
    screenshots: bool = True
    prompt: str = "chat"  # "chat": one growing conversation (prompt cache); "full": each step whole
    form_check: bool = False  # a short model call before a form is sent (webagent.web.form_check; the CLI's default)
    skills: bool = True  # offer the start site's skills (webagent.skills) beside the page's controls
