"""An app's demonstrations (``demos.json``: tasks apart from the evaluation's, with their gold
paths) written as plain text a model reads, so that the peers are shown what webagent learns
its skills from (issue 34, item 7): browser-use gets it in its system prompt
(``extend_system_message``), AgentLab's GenericAgent as its extra instructions
(``flags.extra_instructions``). ``apps_peers.py --demos`` passes it.

    .venv/bin/python -m bench.rivals.demos_text --show oscar     # the text and its size
    .venv/bin/python -m bench.rivals.demos_text                  # the size per app

One line per demonstration's task (with the path it starts at), one line per step: the
element by role and accessible name, as the gold path names it. A password is never written
out: a step typing into a password field (a textbox named like "password") or typing one of
the app's seeded users' passwords reads "type the password into ...". The task line keeps the
demonstration's own words (they name the demonstration's seeded test account, not the
evaluation's). Nothing of the evaluation's tasks (``tasks.json``) is read. Compact on purpose:
the peers run on a 1.5B model with an 8,192-token context.
"""

from __future__ import annotations

import argparse
from collections.abc import Collection

from webagent.apps.spec import App, GoldStep, load_apps

HEADER = (
    "Demonstrations of how tasks are done on this site (other records, users and values than yours; "
    "do your task the same way with your own values):"
)
ORDINAL = {1: "2nd", 2: "3rd"}


def tokens(text: str) -> int:
    """A rough token count: characters / 4."""
    return len(text) // 4


def _is_password(step: GoldStep, passwords: Collection[str]) -> bool:
    return step.op == "type" and ("password" in step.name.lower() or step.value in passwords)


def step_line(step: GoldStep, passwords: Collection[str] = frozenset()) -> str:
    """One step as a person says it: ``type "erin" into textbox "Username"``."""
    nth = f"the {ORDINAL.get(step.nth, f'{step.nth + 1}th')} " if step.nth else ""
    what = f'{nth}{step.role} "{step.name}"'
    if step.op == "type":
        value = "the password" if _is_password(step, passwords) else f'"{step.value}"'
        return f"type {value} into {what}"
    if step.op == "select":
        return f'select "{step.value}" in {what}'
    if step.op in ("click", "check", "uncheck"):
        return f"{step.op} {what}"
    if step.op == "dialog":
        return f"{step.value} the dialog"
    if step.op == "wait":
        if step.role:
            return f"wait for {what}"
        return f'wait for the text "{step.text}"' if step.text else f"wait for the page {step.url}"
    return f'answer "{step.value}"' if step.value else "done"  # op == "done"


def render(app: App) -> str:
    """The app's demonstrations as text ('' for an app without any)."""
    if not app.demos:
        return ""
    passwords = {u.password for u in app.config.users}
    lines = [HEADER]
    for demo in app.demos:
        lines.append(f"Task (starts at {demo.start}): {demo.task}")
        lines += [f"{i}. {step_line(s, passwords)}" for i, s in enumerate(demo.gold, 1)]
    return "\n".join(lines)


def demos_text(app_name: str) -> str:
    """The demonstrations of the app named ``app_name`` as text a model reads."""
    (app,) = load_apps([app_name])
    return render(app)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", metavar="APP", help="print the app's text, then its size")
    args = parser.parse_args()
    if args.show:
        text = demos_text(args.show)
        print(text)
        print(f"\n--- {args.show}: {len(text)} characters, ~{tokens(text)} tokens (characters / 4)")
        return
    for app in load_apps():
        text = render(app)
        print(
            f"{app.name:12s} {len(app.demos):3d} demonstrations "
            f"{sum(len(d.gold) for d in app.demos):4d} steps {len(text):6d} characters ~{tokens(text):5d} tokens"
        )


if __name__ == "__main__":
    main()
