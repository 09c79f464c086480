"""MiniWoB++ results: success rate (raw reward > 0) and mean raw reward per task and
overall, steps, time and usage per episode; ``report.md``, ``report.json`` and
``success_rate.png``. Episodes that ended in an error count as failures and are named;
episodes the task never judged (the agent said DONE or ran out of steps) are counted as
``unjudged`` and carry raw reward -1, as MiniWoB's own timeout does."""

from __future__ import annotations

import json
from pathlib import Path

from webagent.miniwob.episode import MiniWoBRow
from webagent.results_folder import figure


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _stats(rows: list[MiniWoBRow]) -> dict:
    return {
        "episodes": len(rows),
        "success_rate": _mean([1.0 if r.success else 0.0 for r in rows]),
        "mean_raw_reward": _mean([r.raw_reward for r in rows]),
        "mean_steps": _mean([r.steps for r in rows]),
        "mean_time_s": _mean([r.time_s for r in rows]),
        "model_calls": sum(r.usage.get("calls", 0) for r in rows),
        "prompt_tokens": sum(r.usage.get("prompt_tokens", 0) for r in rows),
        "completion_tokens": sum(r.usage.get("completion_tokens", 0) for r in rows),
        "errors": sum(r.status == "error" for r in rows),
        "unjudged": sum(r.status != "error" and not r.judged for r in rows),
    }


def summarise(rows: list[MiniWoBRow], tasks: list[str]) -> dict:
    return {"tasks": {t: _stats([r for r in rows if r.task == t]) for t in tasks}, "overall": _stats(rows)}


def write_reports(
    out: Path, rows: list[MiniWoBRow], tasks: list[str], config: dict, wall_s: float | None = None
) -> dict:
    summary = summarise(rows, tasks)
    summary["config"] = config
    if wall_s is not None:
        summary["wall_time_s"] = round(wall_s, 2)
    summary["episodes"] = [r.model_dump(mode="json", exclude_unset=True) for r in rows]
    (out / "report.json").write_text(json.dumps(summary, indent=2))
    agent = config.get("agent", config)  # the agent's options (a folder of an older version: at the top)
    lines = [
        f"# MiniWoB++: {config.get('model')}",
        "",
        f"max steps {agent.get('max_steps')}, look-up {agent.get('lookup')}, seeds from {config.get('seed')}",
        "",
        "| task | episodes | success rate | mean raw reward | unjudged | mean steps | mean time (s) | model calls "
        "| errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in [*summary["tasks"].items(), ("**overall**", summary["overall"])]:
        lines.append(
            f"| {name} | {s['episodes']} | {100 * s['success_rate']:.0f}% | {s['mean_raw_reward']:.3f} | "
            f"{s['unjudged']} | {s['mean_steps']:.1f} | {s['mean_time_s']:.1f} | {s['model_calls']} | "
            f"{s['errors']} |"
        )
    lines += [
        "",
        "Success is raw reward > 0. An unjudged episode ended (the agent said DONE, got stuck or ran out "
        "of steps) before the task judged it: raw reward -1, as MiniWoB's own timeout scores it.",
        "",
        "## Episodes",
        "",
        "| task | seed | status | judged | raw reward | steps | failed steps | time (s) | calls | error |",
        "|---|---:|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        judged = "yes" if r.judged else "no"
        lines.append(
            f"| {r.task} | {r.seed} | {r.status} | {judged} | {r.raw_reward:g} | {r.steps} | "
            f"{r.failed_steps} | {r.time_s:.1f} | {r.usage.get('calls', 0)} | "
            f"{(r.error or '').replace('|', '/')} |"
        )
    (out / "report.md").write_text("\n".join(lines) + "\n")
    _chart(out / "success_rate.png", summary, config)
    return summary


def _chart(path: Path, summary: dict, config: dict) -> None:
    names = [*summary["tasks"], "overall"]
    stats = [*summary["tasks"].values(), summary["overall"]]
    with figure(path, (1.2 * len(names) + 2, 4), dpi=100) as ax:
        x = range(len(names))
        ax.bar([i - 0.2 for i in x], [100 * s["success_rate"] for s in stats], width=0.4, label="success rate (%)")
        ax.bar(
            [i + 0.2 for i in x], [100 * s["mean_raw_reward"] for s in stats], width=0.4, label="mean raw reward (×100)"
        )
        ax.set_xticks(list(x), names, rotation=20, ha="right")
        ax.set_ylim(-100, 105)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_title(f"MiniWoB++ — {config.get('model')}")
        ax.legend(loc="lower left", fontsize=8)
