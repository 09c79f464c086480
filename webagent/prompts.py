"""Prompts are files in the repository's top-level prompts/ folder, one per prompt, with
$name placeholders, rendered strictly.

The folder is shipped as the data-only package `webagent_prompts` (pyproject maps
prompts/ to it), so a source checkout, an editable install and a wheel all find the
files the same way: through importlib.resources.
"""

from __future__ import annotations

import hashlib
import re
import string
from functools import cache
from importlib import resources

PROMPTS_PACKAGE = "webagent_prompts"
# A prompt file may open with an HTML comment saying what the prompt is and which part is
# shared between calls; it is for people and never sent to the model.
_HEADER_COMMENT = re.compile(r"\A\s*<!--.*?-->\s*\n", re.DOTALL)


@cache
def _prompt_file(name: str) -> str:
    path = resources.files(PROMPTS_PACKAGE).joinpath(f"{name}.md")
    if not path.is_file():
        raise KeyError(f"no prompt file {name}.md in the prompts folder")
    return path.read_text(encoding="utf-8")


def load_prompt(name: str) -> str:
    """The prompt's text as the model sees it (without the file's header comment)."""
    return _HEADER_COMMENT.sub("", _prompt_file(name), count=1)


def prompt_hash(name: str) -> str:
    """Part of cache keys and run configurations: editing a prompt file invalidates what
    was derived from it."""
    return hashlib.sha256(load_prompt(name).encode("utf-8")).hexdigest()[:16]


def render_prompt(name: str, **values: object) -> str:
    """Fill $placeholders; a missing one is an error, never an empty string."""
    template = string.Template(load_prompt(name))
    try:
        return template.substitute({k: str(v) for k, v in values.items()})
    except KeyError as exc:
        raise KeyError(f"prompt {name!r} needs a value for ${exc.args[0]}") from None
