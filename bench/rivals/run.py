"""webagent side by side with browser-use and AgentLab's GenericAgent on MiniWoB++, with the
same model server and the same seeds; one Markdown table and one JSON file.

    bench/rivals/setup.sh                                  # once: the rivals' venvs
    .venv/bin/webagent serve --gguf /root/models/qwen05.gguf --port 8765 &
    .venv/bin/python -m bench.rivals.run --server http://127.0.0.1:8765/v1

Every model call of every agent goes through a counting proxy (``proxy.py``) that reads
the usage of each reply, so calls and prompt tokens are counted the same way for all
three; each episode gets its own URL tag. An episode is one subprocess (its agent's own
venv), capped at ``--max-steps`` steps and ``--episode-timeout`` seconds of wall time.
Success is MiniWoB's own raw reward > 0 (``WOB_RAW_REWARD_GLOBAL``), read from the page.

Episodes are appended to ``--out``/episodes.jsonl as they finish; an agent/task/seed that
is already there (same model and step cap) is not run again unless ``--rerun``, so agents
can run at different times (``--agents browser-use,agentlab`` first, ``--agents webagent``
later) and ``--report-only`` rebuilds the table. The targets (webagent ahead of both on
success rate, with fewer prompt tokens per successful episode) are printed with PASS/FAIL;
exit status 1 when one is missed. The table (results.md, results.json) goes to ``--out`` too; a
run kept for the docs is copied to ``bench/results/miniwob_peers/DATE-COMMIT-LABEL/`` with its
``meta.json`` (bench/results/README.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import uuid
from pathlib import Path

from bench.lib import ROOT
from bench.rivals.episode_process import (
    HERE,
    flash_option,
    fmt,
    last_json_line,
    no_row,
    read_jsonl,
    run_process,
    run_webagent,
    runner_cmd,
    server_model_or_exit,
    server_options,
    trace_steps,
)
from bench.rivals.proxy import CountingProxy
from webagent.demo_site import serve_directory
from webagent.miniwob.env import START_EPISODE, miniwob_html_dir

AGENTS = ("browser-use", "agentlab", "webagent")
STATUS_JS = (
    "(typeof WOB_RAW_REWARD_GLOBAL === 'undefined') ? {left: location.href} : "
    "{done: WOB_DONE_GLOBAL, raw_reward: WOB_RAW_REWARD_GLOBAL, reward: WOB_REWARD_GLOBAL}"
)
RUNNER = {"browser-use": "bench.rivals.run_browseruse", "agentlab": "bench.rivals.run_agentlab"}  # run with -m


def load_rows(path: Path) -> dict:
    return {(r["agent"], r["task"], r["seed"], r["model"], r["max_steps"]): r for r in read_jsonl(path)}


def empty_row(agent: str, task: str, seed: int, error: str | None) -> dict:
    """An episode's row with nothing from its agent: no steps, no success."""
    return {
        "agent": agent,
        "task": task,
        "seed": seed,
        "steps": None,
        "raw_reward": 0.0,
        "success": False,
        "error": error,
    }


async def episode(agent: str, task: str, seed: int, args, proxy_base: str, miniwob_url: str, out: Path) -> dict:
    tag = f"{agent}.{task}.{seed}.{uuid.uuid4().hex[:6]}"
    base_url = f"{proxy_base}/t/{tag}/v1"
    log = out / "logs" / f"{tag}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    hard_cap = args.episode_timeout + 90  # the runner's own cap first; this one if it hangs
    t0 = time.time()
    if agent == "webagent":
        folder = out / "webagent" / tag
        options = ["--tasks", task, "--seed", str(seed), "--episodes", "1", "--max-steps", str(args.max_steps)]
        options += ["--no-cache", "--out", str(folder), "--timeout", str(args.episode_timeout)]
        rc, r = await run_webagent(["miniwob"], options, base_url, args.model, folder, log, args.episode_timeout)
        row = empty_row(agent, task, seed, None)
        if r is not None:
            row.update(
                steps=r["steps"],
                raw_reward=r["raw_reward"],
                success=bool(r["raw_reward"] > 0),
                error=r.get("error"),
                status=r.get("status"),
                utterance=r.get("utterance"),
            )
        else:
            row.update(
                error=f"wall-time cap of {args.episode_timeout:g} s reached"
                if rc is None
                else f"webagent exited {rc} without an episode row (see {log})",
                steps=trace_steps(folder),  # the steps it took before it was stopped
            )
    else:
        spec = {
            "task_url": f"{miniwob_url}miniwob/{task}.html",
            "miniwob_url": miniwob_url,
            "task": task,
            "seed": seed,
            "start_js": START_EPISODE,
            "status_js": STATUS_JS,
            "episode_max_s": 3600,
            "base_url": base_url,
            "model": args.model,
            "max_steps": args.max_steps,
            "timeout_s": args.episode_timeout,
            "flash_mode": args.browser_use_flash,
        }
        cmd = runner_cmd(agent, RUNNER[agent], spec, log)
        result, error = None, f"not installed: run bench/rivals/setup.sh {agent}"
        if cmd is not None:
            rc, text = await run_process(cmd, log, hard_cap, ROOT)
            result, error = last_json_line(text), no_row(rc, hard_cap, log)
        row = result or empty_row(agent, task, seed, error)
    calls = [c for c in read_jsonl(out / "calls.jsonl") if c.get("tag") == tag]
    row.update(
        agent=agent,
        model=args.model,
        max_steps=args.max_steps,
        tag=tag,
        wall_s=round(time.time() - t0, 1),
        calls=len(calls),
        prompt_tokens=sum(c.get("prompt_tokens") or 0 for c in calls),
        cached_tokens=sum(c.get("cached_tokens") or 0 for c in calls),
        completion_tokens=sum(c.get("completion_tokens") or 0 for c in calls),
        failed_calls=sum(1 for c in calls if c.get("status") != 200),
        log=os.path.relpath(log, ROOT),
    )
    return row


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def summarise(rows: list[dict]) -> dict:
    wins = [r for r in rows if r["success"]]
    total_prompt = sum(r["prompt_tokens"] for r in rows)
    return {
        "episodes": len(rows),
        "successes": len(wins),
        "success_rate": len(wins) / len(rows) if rows else None,
        "mean_steps": _mean([r.get("steps") for r in rows]),
        "mean_calls": _mean([r["calls"] for r in rows]),
        "mean_prompt_tokens": _mean([r["prompt_tokens"] for r in rows]),
        "mean_cached_tokens": _mean([r["cached_tokens"] for r in rows]),
        "prompt_tokens_per_success": total_prompt / len(wins) if wins else None,
        "mean_prompt_tokens_successful": _mean([r["prompt_tokens"] for r in wins]),
        "timeouts": sum(1 for r in rows if "cap" in str(r.get("error") or "")),
        "errors": sum(1 for r in rows if r.get("error") and "cap" not in str(r.get("error"))),
    }


def report(all_rows: dict, args) -> int:
    summary: dict[str, dict] = {}
    per_task: dict[str, dict] = {}
    kept = [  # the episodes of this model, step cap, tasks and seeds
        all_rows[k]
        for k in sorted(all_rows)
        if k[1] in args.tasks and k[2] in args.seeds and k[3] == args.model and k[4] == args.max_steps
    ]
    for agent in AGENTS:
        rows = [r for r in kept if r["agent"] == agent]
        if rows:
            summary[agent] = summarise(rows)
            per_task[agent] = {
                t: summarise([r for r in rows if r["task"] == t])
                for t in args.tasks
                if any(r["task"] == t for r in rows)
            }
    lines = [
        f"# webagent vs browser-use vs AgentLab on MiniWoB++ ({args.model})",
        "",
        f"Tasks {', '.join(args.tasks)}; seeds {', '.join(map(str, args.seeds))} (the same `Math.seedrandom(seed)` "
        f"episodes for all three); at most {args.max_steps} steps and {args.episode_timeout:g} s per episode; "
        "one model server, calls and tokens counted by the same proxy from each reply's usage. "
        "Success: MiniWoB's raw reward > 0.",
        "",
        "| agent | episodes | success rate | mean steps | model calls / episode | prompt tokens / episode "
        "| of which from the server's prompt cache | prompt tokens per success | capped by wall time | errors |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for agent, s in summary.items():
        lines.append(
            f"| {agent} | {s['episodes']} | {s['successes']}/{s['episodes']} = {fmt(s['success_rate'], '.0%')} "
            f"| {fmt(s['mean_steps'], '.1f')} | {fmt(s['mean_calls'], '.1f')} | {fmt(s['mean_prompt_tokens'])} "
            f"| {fmt(s['mean_cached_tokens'])} | {fmt(s['prompt_tokens_per_success'])} | {s['timeouts']} | {s['errors']} |"
        )
    lines += [
        "",
        "Per task (success, mean steps, mean prompt tokens):",
        "",
        "| agent | " + " | ".join(args.tasks) + " |",
        "|---|" + "---|" * len(args.tasks),
    ]
    for agent, tasks in per_task.items():
        cells = [
            f"{c['successes']}/{c['episodes']}, {fmt(c['mean_steps'], '.1f')} steps, {fmt(c['mean_prompt_tokens'])} tok"
            if (c := tasks.get(t))
            else "–"
            for t in args.tasks
        ]
        lines.append(f"| {agent} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Episodes:",
        "",
        "| agent | task | seed | success | raw reward | steps | calls | prompt tokens | error |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in kept:
        err = str(r.get("error") or "").replace("|", "/")[:120]
        lines.append(
            f"| {r['agent']} | {r['task']} | {r['seed']} | {'yes' if r['success'] else 'no'} | "
            f"{r['raw_reward']:g} | {fmt(r.get('steps'), 'd')} | {r['calls']} | {r['prompt_tokens']} | {err} |"
        )
    # the same seed must have given every agent the same episode: compare the utterances
    utter: dict = {}
    for r in all_rows.values():
        if r["model"] == args.model and r["task"] in args.tasks and r["seed"] in args.seeds and r.get("utterance"):
            utter.setdefault((r["task"], r["seed"]), {})[r["agent"]] = r["utterance"]
    mismatch = {k: v for k, v in utter.items() if len(set(v.values())) > 1}
    versions = sorted({f"{r['agent']}: {r['version']}" for r in all_rows.values() if r.get("version")})
    lines += [
        "",
        "Versions: " + "; ".join(versions) + "." if versions else "",
        "A model call still in flight when an episode reached its wall-time cap is not counted "
        "(no reply, no usage); a capped episode is a failure.",
    ]
    lines += [
        "",
        "Same episodes: "
        + ("every task/seed gave each agent the same utterance" if not mismatch else f"MISMATCH {mismatch}"),
    ]
    verdicts, failed = [], False
    ours = summary.get("webagent")
    rivals = [a for a in ("browser-use", "agentlab") if a in summary]
    complete = ours is not None and all(
        summary.get(a, {}).get("episodes") == len(args.tasks) * len(args.seeds) for a in AGENTS
    )
    for rival in rivals:
        if ours is None:
            continue
        theirs = summary[rival]
        ok = ours["success_rate"] > theirs["success_rate"]
        verdicts.append(
            f"success rate: webagent {ours['success_rate']:.0%} vs {rival} {theirs['success_rate']:.0%} "
            f"(target: ahead): {'PASS' if ok else 'FAIL'}"
        )
        failed |= not ok
        mine, other = ours["prompt_tokens_per_success"], theirs["prompt_tokens_per_success"]
        ok = mine is not None and (other is None or mine < other)
        verdicts.append(
            f"prompt tokens per successful episode: webagent {fmt(mine)} vs {rival} {fmt(other)}"
            f"{' (no success)' if other is None else ''} (target: fewer): {'PASS' if ok else 'FAIL'}"
        )
        failed |= not ok
    if not complete:
        verdicts.append("incomplete: not every agent has every episode yet (targets not final)")
    lines += ["", "Targets:", ""] + [f"- {v}" for v in verdicts]
    results = Path(args.results or args.out)
    results.mkdir(parents=True, exist_ok=True)
    (results / "results.md").write_text("\n".join(lines) + "\n")
    (results / "results.json").write_text(
        json.dumps(
            {
                "model": args.model,
                "tasks": args.tasks,
                "seeds": args.seeds,
                "max_steps": args.max_steps,
                "episode_timeout_s": args.episode_timeout,
                "summary": summary,
                "per_task": per_task,
                "episodes": kept,
                "targets": verdicts,
            },
            indent=2,
        )
    )
    print("\n".join(lines))
    return 1 if failed and complete else 0


async def main(args) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    episodes_path = out / "episodes.jsonl"
    if args.report_only:
        return report(load_rows(episodes_path), args)
    proxy = CountingProxy(args.server, out / "calls.jsonl")
    proxy_base = await proxy.start()
    miniwob_url, stop = serve_directory(miniwob_html_dir())
    print(
        f"model {args.model} at {args.server}, counted through {proxy_base}; MiniWoB pages at {miniwob_url}", flush=True
    )
    todo = [
        (agent, task, seed)
        for agent in args.agents
        for task in args.tasks
        for seed in args.seeds
        if (agent, task, seed, args.model, args.max_steps) not in load_rows(episodes_path) or args.rerun
    ]
    gate = asyncio.Semaphore(args.parallel)

    async def one(agent: str, task: str, seed: int) -> None:
        async with gate:
            row = await episode(agent, task, seed, args, proxy_base, miniwob_url, out)
        with episodes_path.open("a") as f:
            f.write(json.dumps(row) + "\n")
        print(
            f"{agent:12s} {task:14s} seed {seed}: success={row['success']} raw={row['raw_reward']:g} "
            f"steps={row.get('steps')} calls={row['calls']} prompt_tokens={row['prompt_tokens']} "
            f"wall={row['wall_s']}s{' error: ' + str(row['error'])[:160] if row.get('error') else ''}",
            flush=True,
        )

    try:
        await asyncio.gather(*(one(*job) for job in todo))
    finally:
        stop()
        await proxy.stop()
    return report(load_rows(episodes_path), args)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    server_options(parser)
    parser.add_argument("--agents", default=",".join(AGENTS))
    parser.add_argument("--tasks", default="click-button,enter-text")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--max-steps", type=int, default=6)
    parser.add_argument("--episode-timeout", type=float, default=480, help="wall-time cap per episode, seconds")
    flash_option(parser)
    parser.add_argument(
        "--parallel",
        type=int,
        default=1,
        help="episodes at once (the server is shared: each runs slower, and the wall-time cap binds sooner)",
    )
    parser.add_argument("--out", default=str(HERE / "runs"), help="episodes, call log, per-episode logs")
    parser.add_argument("--results", help="where results.md and results.json go (default: --out)")
    parser.add_argument("--rerun", action="store_true", help="run episodes again even when recorded")
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args()
    args.agents = [a for a in args.agents.split(",") if a]
    bad = [a for a in args.agents if a not in AGENTS]
    if bad:
        parser.error(f"unknown agents {bad}; choose from {', '.join(AGENTS)}")
    args.tasks = [t for t in args.tasks.split(",") if t]
    args.seeds = [int(s) for s in args.seeds.split(",") if s]
    if not args.model:
        args.model = server_model_or_exit(args.server, ".venv/bin/webagent serve --gguf FILE --port 8765")
    sys.exit(asyncio.run(main(args)))
