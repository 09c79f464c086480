"""Mind2Web's gold actions through the live agent's view and validity checks: for every
action of the shipped Mind2Web-layout data (tests/fixtures/mind2web, or --data DIR), is the
gold element a control of the agent view, and would the live action parser accept the gold
operation and value on it (``parse_live_action`` with every control of the page on offer)?
Prints each refusal with why and exits non-zero when any gold action is refused or not
offered (target: 0).

    .venv/bin/python -m bench.gated.mind2web_gold_offered [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import sys

from bench.lib import ROOT
from bench.lib.verdict import Targets
from mind2web.data import iter_steps, load_tasks
from webagent.llm.client import Reply
from webagent.web.agent_view import build_view
from webagent.web.live_action import Choices, parse_live_action


def _control_around(action, view, target: str) -> str | None:
    """The control line that holds ``target`` (a link inside a role=tab <li> is shown as the
    tab: clicking the tab's line clicks the same place)."""
    from webagent.html.clean import parse_cleaned

    root = parse_cleaned(action.cleaned_html)
    for el in root.iter():
        if el.get("backend_node_id") == target:
            for up in el.iterancestors():
                if (i := up.get("backend_node_id")) in view.controls:
                    return i
    return None


def check(step) -> str | None:
    """None when the live agent offers and accepts the gold action, else why not."""
    action = step.action
    view = build_view(action.cleaned_html)
    targets = [c.backend_node_id for c in action.pos_candidates]
    shown = [t for t in targets if t in view.controls] or [
        a for t in targets if (a := _control_around(action, view, t))
    ]
    if not shown:
        return f"not offered: no control line for the gold element(s) {targets} ({action.pos_candidates[0].tag})"
    op, value = action.operation.op, action.operation.value
    reply = {"operation": op, "element_id": shown[0], "value": value if op != "CLICK" else "", "press_enter": False}
    parsed, problem = parse_live_action(Reply(text=json.dumps(reply), data=reply), Choices(view.controls))
    return None if parsed is not None else f"refused: {problem}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT / "tests" / "fixtures" / "mind2web"))
    args = parser.parse_args(argv)
    steps = [
        s
        for split in ("test_task", "test_website", "test_domain")
        for s in iter_steps(load_tasks(args.data, split=split))
    ]
    refused = [(s, why) for s in steps if (why := check(s)) is not None]
    for s, why in refused:
        print(f"{s.annotation_id} step {s.index + 1} ({s.action.operation.op} {s.action.operation.value!r}): {why}")
    targets = Targets("mind2web gold offered")
    target = "the live agent offers and accepts every gold action"
    targets.check(
        target, f"{len(refused)} of {len(steps)} refused or not offered", "the data's gold actions", not refused
    )
    return targets.report()


if __name__ == "__main__":
    sys.exit(main())
