"""Secrets the model can use but never sees (in the manner of browser-use's
``sensitive_data``): before the model reads the task, each secret in it is replaced by a
named placeholder, ``<secret:password>``; the model types the placeholder (into as many
fields as the task needs); the real value is put in only when the browser acts
(``reveal``). Page text that would show a secret is masked the same way (``mask``).

Secrets come from ``--secret NAME=VALUE`` and ``WEBAGENT_SECRET_NAME`` variables, and from
the task itself: the value after the word "password" (quoted, or a token with a digit or
a sign in it, so "the password field" names no secret)."""

from __future__ import annotations

import os
import re

from webagent.browser.guard import PLACEHOLDER, placeholder
from webagent.errors import UserError

ENV_PREFIX = "WEBAGENT_SECRET_"
_IN_TASK = re.compile(
    r"""\b(?:password|passcode|passphrase|pin)\b\s*(?:is\s+|[:=]\s*|of\s+)?"""
    r"""(?:"([^"]+)"|'([^']+)'|([^\s,;()"']*[0-9!@#$%^&*_+=?~-][^\s,;()"']*))""",
    re.IGNORECASE,
)


def parse_secret_options(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``--secret NAME=VALUE`` options, then ``WEBAGENT_SECRET_NAME`` variables (lower-cased names)."""
    found = {k[len(ENV_PREFIX) :].lower(): v for k, v in os.environ.items() if k.startswith(ENV_PREFIX) and v}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z0-9_]+", name) or not value:
            raise UserError(f"--secret {name or item!r}: expected NAME=VALUE (NAME of letters, digits, _)")
        found[name.lower()] = value
    return found


def mask_task(task: str, given: dict[str, str] | None = None) -> tuple[str, dict[str, str]]:
    """(the task with placeholders, every secret by name)."""
    secrets = dict(given or {})

    def named(value: str) -> str:
        for name, known in secrets.items():
            if known == value:
                return name
        name = "password" if "password" not in secrets else f"password{len(secrets) + 1}"
        secrets[name] = value
        return name

    def swap(m: re.Match) -> str:
        value = next(g for g in m.groups() if g)
        start, end = m.span(m.lastindex or 0)  # the group that matched (there is always one)
        if m.lastindex == 3:  # unquoted: a sentence's closing stop is the sentence's, not the password's
            # ("... and the password alice-pass-1." typed "alice-pass-1." and every log-in failed);
            # a password that ends in one is given in quotes
            kept = value.rstrip(".!?:")
            end -= len(value) - len(kept)
            value = kept
        text = m.group(0)
        base = m.start(0)
        return text[: start - base] + placeholder(named(value)) + text[end - base :]

    masked = _IN_TASK.sub(swap, task)
    return mask(masked, secrets), secrets


def mask(text: str, secrets: dict[str, str]) -> str:
    """``text`` with every secret value replaced by its placeholder (longest first)."""
    for name, value in sorted(secrets.items(), key=lambda kv: len(kv[1]), reverse=True):
        text = text.replace(value, placeholder(name))
    return text


def reveal(text: str, secrets: dict[str, str]) -> str:
    """The text to type: each known placeholder replaced by its value (an unknown one stays)."""
    return PLACEHOLDER.sub(lambda m: secrets.get(m.group(1).lower(), m.group(0)), text)


def uses_secret(text: str, secrets: dict[str, str]) -> bool:
    return any(m.group(1).lower() in secrets for m in PLACEHOLDER.finditer(text))
