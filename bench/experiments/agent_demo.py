"""The demo shop with a real model: does the shop confirm the order, and where a step's
seconds go (observation, model calls, acting).

    .venv/bin/python -m bench.experiments.agent_demo --embedded qwen2.5-coder-0.5b            # the default task
    .venv/bin/python -m bench.experiments.agent_demo --embedded qwen2.5-coder-1.5b --all-tasks
    .venv/bin/python -m bench.experiments.agent_demo --from runs/agent/2026-...-demo           # summarise trace folders

Each task is an episode on a fresh demo shop (``DemoEpisode`` through the agent's
``run_episode``, as ``webagent run --demo`` runs it): the shop's own record decides success,
and the run ends when it confirms. The results folder (``--out``, ``webagent.evaluation``) pins
the configuration, gets a row per task at once and resumes; a task's trace is OUT/traces/task<i>. The per-step
times come from its steps.jsonl: observe (capture after the action, agent view),
screenshot, model (gists, look-up, action) and act (executing the action). Exits 1 when
the shop did not confirm every order asked for.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from bench.lib.verdict import Targets
from webagent.agent.options import AgentOptions
from webagent.errors import UserError, first_line
from webagent.evaluation import Evaluator, Item
from webagent.results_folder import ResultsFolder, Row
from webagent.trace.record import FILE, read_steps

PHASES = {
    "observe": ("observe_s", "view_s"),
    "screenshot": ("screenshot_s",),
    "model": ("gist_s", "lookup_s", "action_s"),
    "act": ("execute_s",),
}


class DemoConfig(BaseModel):
    """What decides a demo run's results (pinned in OUT/config.json: a resume with another is refused)."""

    model_config = ConfigDict(extra="forbid")
    model: str
    agent: AgentOptions


class DemoRow(Row):
    """A task's row in OUT/episodes.jsonl (``why`` and ``steps`` once it ran)."""

    task: str
    status: str
    confirmed: bool
    trace_dir: str
    error: str | None = None
    why: str | None = None
    steps: int = 0
    retried: str | None = None


class DemoEval(Evaluator[str, Any, DemoRow]):
    """Each task an episode on a fresh shop (``DemoEpisode`` through ``run_episode``)."""

    config: DemoConfig
    noun = "tasks"

    def __init__(self, tasks: list[str], config: DemoConfig):
        self.tasks, self.config = tasks, config

    @staticmethod
    def results(out: Path) -> ResultsFolder:
        return ResultsFolder(out, DemoConfig, DemoRow, key=lambda row: row.task, what="a demo bench run")

    def plan(self) -> list[Item[str]]:
        return [Item(task, task, task, folder=f"task{i}") for i, task in enumerate(self.tasks)]

    async def run_item(self, worker: Any, item: Item[str], trace: Path | None) -> DemoRow:
        from webagent.agent.demo_episode import DemoEpisode
        from webagent.agent.episode import run_episode
        from webagent.browser import BrowserSession
        from webagent.demo_site import DemoShop

        row = self.error_row(item, trace, None)
        shop = DemoShop.start()
        try:
            async with BrowserSession(allowed_domains=["127.0.0.1"]) as browser:
                ran = await run_episode(DemoEpisode(shop, item.of), browser, worker, self.config.agent, trace)
            row.status, row.confirmed, row.why = ran.result.status, ran.verdict.success, ran.verdict.why
            row.steps = ran.result.steps
        except Exception as exc:  # noqa: BLE001 - an error row, run again on resume
            row.error = f"{type(exc).__name__}: {first_line(exc)}"
        finally:
            shop.stop()
        return row

    def error_row(self, item: Item[str], trace: Path | None, why: str | None) -> DemoRow:
        row = DemoRow(task=item.of, status="error", confirmed=False, trace_dir=str(trace))
        return row if why is None else row.model_copy(update={"error": why})

    def outcome(self, row: DemoRow) -> str:
        return f"{'confirmed' if row.confirmed else 'NOT confirmed'} ({row.why or row.error})"

    def failed(self, row: DemoRow) -> bool:
        return not row.confirmed


async def run_tasks(tasks: list[str], args, out: Path) -> dict[str, DemoRow]:
    """Each task not yet in ``out`` as an episode on a fresh shop (``webagent.evaluation``), its
    row appended at once; returns every task's row."""
    from webagent.evaluation import Serial, evaluate
    from webagent.llm.endpoint import EndpointOptions, open_client

    endpoint = EndpointOptions(
        base_url=args.base_url,
        model=args.model or None,
        embedded=None if args.base_url else args.embedded,
        threads=args.threads,
    )
    async with open_client(endpoint) as client:
        config = DemoConfig(model=client.model_name, agent=AgentOptions(max_steps=args.max_steps))
        rows = await evaluate(DemoEval(tasks, config), out, Serial(client))
    return {row.task: row for row in rows}


def phases(folder: Path) -> dict:
    steps = read_steps(folder / FILE)
    total = {name: sum(s.times.get(k, 0.0) for s in steps for k in keys) for name, keys in PHASES.items()}
    per_step = sorted(sum(s.times.get(k, 0.0) for keys in PHASES.values() for k in keys) for s in steps)
    run = json.loads((folder / "run.json").read_text()) if (folder / "run.json").is_file() else {}
    return {
        "steps": len(steps),
        "seconds": total,
        "median_step_s": statistics.median(per_step) if per_step else 0.0,
        "status": run.get("status"),
        "answer": run.get("answer"),
        "prompt_tokens": sum(s.usage.get("prompt_tokens", 0) for s in steps),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedded", default="qwen2.5-coder-0.5b")
    parser.add_argument("--base-url")
    parser.add_argument("--model", default="")
    parser.add_argument("--max-steps", type=int, default=12)
    parser.add_argument("--threads", type=int, help="embedded server compute threads (default: its rule)")
    parser.add_argument("--all-tasks", action="store_true", help="the default task and the five others")
    parser.add_argument("--from", dest="sources", nargs="+", help="summarise these trace folders instead")
    parser.add_argument("--out", help="results folder (config.json, episodes.jsonl, a trace per task); resumed")
    args = parser.parse_args()
    rows = []
    if args.sources:
        for source in args.sources:
            info = phases(Path(source))
            rows.append((source, info, info["answer"] == "the shop confirmed the order"))
    else:
        from webagent.demo_site import DEMO_TASK, DEMO_TASKS

        out = Path(args.out or tempfile.mkdtemp(prefix="bench-demo-"))
        tasks = list(DEMO_TASKS) if args.all_tasks else [DEMO_TASK]
        try:
            finished = asyncio.run(run_tasks(tasks, args, out))
        except UserError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        for task, row in finished.items():
            folder = Path(row.trace_dir)
            info = (
                phases(folder)
                if (folder / FILE).is_file()
                else {"steps": 0, "seconds": {k: 0.0 for k in PHASES}, "prompt_tokens": 0, "median_step_s": 0.0}
            )
            rows.append((task, info, row.confirmed))
        print(f"results: {out} (resumed by --out {out})")
    print(f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    print(
        "| run | confirmed | steps | s / step | median s / step | observe | screenshot | model | act | prompt tokens / step |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, info, confirmed in rows:
        steps = info["steps"] or 1
        total = sum(info["seconds"].values()) or 1.0
        shares = " | ".join(f"{100 * info['seconds'][k] / total:.0f}%" for k in PHASES)
        print(
            f"| {name} | {'yes' if confirmed else 'NO'} | {info['steps']} | {total / steps:.1f} | "
            f"{info['median_step_s']:.1f} | {shares} | "
            f"{info['prompt_tokens'] / steps:.0f} |"
        )
    targets, ok = Targets("demo shop"), all(confirmed for _, _, confirmed in rows)
    targets.check("the shop confirms every order", f"{sum(c for *_, c in rows)}/{len(rows)}", "the shop's record", ok)
    return targets.report()


if __name__ == "__main__":
    sys.exit(main())
