"""The peers (AgentLab's GenericAgent on BrowserGym, browser-use) and webagent on a subset of
webagent's real-app suite (Roundup, django-oscar, django-helpdesk), through one model server,
counted by one proxy, each task checked in the app's own database.

    bench/rivals/setup.sh                                             # once: the peers' venvs
    .venv/bin/webagent apps install                                   # once: the apps
    .venv/bin/webagent serve --embedded qwen2.5-coder-1.5b --port 8765 &   # ONE shared server
    .venv/bin/python -m bench.rivals.apps_peers --peer agentlab    --server http://127.0.0.1:8765/v1
    .venv/bin/python -m bench.rivals.apps_peers --peer browser-use --server http://127.0.0.1:8765/v1
    .venv/bin/python -m bench.rivals.apps_peers --peer webagent    --server http://127.0.0.1:8765/v1
    .venv/bin/python -m bench.rivals.apps_peers --report-only         # the table of what ran

Per task (the 9 of ``SUBSET`` unless ``--tasks``):

* **agentlab / browser-use**: the harness serves the task's app (``AppInstance``), resets it
  to pristine (``AppInstance.reset``), and runs the peer's episode runner in the peer's own venv
  as a subprocess (``apps_agentlab.py``: the task registered as a BrowserGym task by
  ``apps_browsergym.py``, run by GenericAgent unchanged; ``apps_browseruse.py``: browser-use's
  ``Agent``). The runner gets the base URL, the live state folder and the app's check command
  (app venv python, app folder), so its per-step check is the app's own. After the episode
  the harness runs the app's check again (``AppInstance.check``; with the peer's last message
  as the answer for an answer task): that verdict is the result.
* **webagent**: ``.venv/bin/webagent apps eval --base-url PROXY --task ID`` (its own instance,
  reset the same way, and its own check); the row is read from its ``episodes.jsonl``.

Every model call goes through a counting proxy (``proxy.py``) in front of ``--server``, with a
URL tag per episode; calls and tokens per episode come from there for all three. An episode
has a wall-time cap (``--cap``, seconds); one cut by the cap is ``capped``, not ``failure``
(unless the database already shows the task done: then it is a success). ``error`` means the
harness or a runner broke (not the agent); error rows are run again on resume.

``--demos``: each peer is given its app's demonstrations (``demos.json``), the help webagent
learns its skills from: browser-use and AgentLab as text in their prompts (``demos_text.py``;
browser-use ``Agent(extend_system_message=...)``, AgentLab ``flags.extra_instructions``),
webagent as those skills (``apps eval --skills``; ``webagent apps learn`` first). Rows carry
``demos: true``, apart from those without (default ``--out``: ``runs/apps_peers/demos``);
each call's line in ``calls.jsonl`` says whether its request held the whole text
(``demos_in_prompt``).

Rows go to ``OUT/episodes.jsonl`` as each task finishes; a peer/task already there with the
same model, cap, step limit and ``--demos`` is skipped (``--rerun`` to run it again). ``OUT/results.md``
and ``OUT/results.json`` hold the table of every peer run so far. A run kept for the docs is
copied to ``bench/results/apps_peers/DATE-COMMIT-LABEL/`` with its ``meta.json``
(bench/results/README.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
import uuid
from pathlib import Path

from bench.lib import ROOT
from bench.rivals.demos_text import demos_text
from bench.rivals.episode_process import (
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
from webagent.apps.install import venv_python
from webagent.apps.instance import AppError, AppInstance
from webagent.apps.spec import load_apps

# Three tasks per app, short and long (gold steps in brackets).
SUBSET = [
    "roundup-answer-assignee",  # [3] open an issue, answer its assignee
    "roundup-assign-to-self",  # [7] log in, open, assign, leave the rest alone
    "roundup-create-issue",  # [8] log in, create with priority and assignee
    "oscar-login-alice",  # [4] log in
    "oscar-answer-price",  # [4] search, open, answer
    "oscar-login-add-basket",  # [7] log in, search, add to basket
    "helpdesk-answer-queue",  # [7] log in, search, open, answer
    "helpdesk-submit-docking-ticket",  # [6] public form: title, queue, priority, description, email
    "helpdesk-assign-battery-to-bob",  # [8] log in, open, assign, leave the rest alone
]
PEERS = ("agentlab", "browser-use", "webagent")
RUNNER = {"browser-use": "bench.rivals.apps_browseruse", "agentlab": "bench.rivals.apps_agentlab"}  # run with -m
DEFAULT_OUT = ROOT / "runs" / "apps_peers"  # resumed across peers; kept runs go to bench/results
DEMOS_LABEL = "with the demonstrations"


class StartCountingProxy(CountingProxy):
    """``proxy.py``'s proxy, also logging each completion request as it arrives (``starts.jsonl``),
    so an episode cut by its cap shows the calls it had sent but never got back.

    With ``--demos``, ``expect[tag]`` is the demonstrations' text given to that episode's peer:
    each of its calls' lines in ``calls.jsonl`` then says whether the request's messages hold that
    text whole (``demos_in_prompt``, with ``prompt_chars``, the characters of all its messages),
    and its first request is kept as ``logs/<tag>.request1.json``."""

    def __init__(self, upstream: str, log_path: Path, starts_path: Path):
        super().__init__(upstream, log_path)
        self.starts_path = starts_path
        self.expect: dict[str, str] = {}
        self.saved: set[str] = set()

    def note(self, tag, path, body) -> dict:
        if tag not in self.expect:
            return {}
        try:
            messages = json.loads(body).get("messages") or []
        except (ValueError, AttributeError):
            return {"demos_in_prompt": None}
        if tag not in self.saved:
            self.saved.add(tag)
            (self.starts_path.parent / "logs" / f"{tag}.request1.json").write_bytes(body)
        prompt = "\n".join(prompt_texts(messages))
        return {"prompt_chars": len(prompt), "demos_in_prompt": self.expect[tag] in prompt}

    async def handle(self, request):
        path = request.rel_url.path
        if path.endswith("/completions"):
            tag = path.split("/")[2] if path.startswith("/t/") else None
            with self.starts_path.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"tag": tag, "path": path, "t0": time.time()}) + "\n")
        return await super().handle(request)


def prompt_texts(messages: list) -> list[str]:
    """The text of each message of a chat completion request (a content string, or its text parts)."""
    texts = []
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [p.get("text") or "" for p in content if isinstance(p, dict)]
    return texts


def row_key(row: dict) -> tuple:
    return row["peer"], row["task"], row["model"], row["cap_s"], row["max_steps"], bool(row.get("demos"))


def load_rows(path: Path) -> dict:
    return {row_key(row): row for row in read_jsonl(path)}


def tagged(path: Path, tag: str) -> list[dict]:
    return [c for c in read_jsonl(path) if c.get("tag") == tag]


def proxy_usage(out: Path, tag: str) -> dict:
    calls = tagged(out / "calls.jsonl", tag)
    shown = [c["demos_in_prompt"] for c in calls if "demos_in_prompt" in c]
    return {
        "calls": len(calls),
        **({"calls_with_demos": sum(1 for x in shown if x)} if shown else {}),
        "calls_sent": len(tagged(out / "starts.jsonl", tag)),
        "prompt_tokens": sum(c.get("prompt_tokens") or 0 for c in calls),
        "completion_tokens": sum(c.get("completion_tokens") or 0 for c in calls),
        "cached_tokens": sum(c.get("cached_tokens") or 0 for c in calls),
        "failed_calls": sum(1 for c in calls if c.get("status") != 200),
    }


async def peer_episode(
    peer: str, instance: AppInstance, task, args, base_url: str, tag: str, out: Path, demos: str | None = None
) -> dict:
    """agentlab or browser-use on one task of a running instance (reset here); ``demos``: the
    app's demonstrations as text, for the peer's prompt (``--demos``)."""
    log = out / "logs" / f"{tag}.log"
    row: dict = {"reset_s": round(instance.reset(), 4)}
    answer_task = task.answer is not None
    spec = {
        "task_id": task.id,
        "app": instance.app.name,
        "goal": task.task,
        "start_url": instance.url(task.start),
        "base_url_app": instance.base_url,
        "answer_task": answer_task,
        "check": {
            "python": str(venv_python(instance.app)),
            "app_folder": str(instance.app.folder),
            "state": str(instance.live),
        },
        "pristine": str(instance.pristine),
        "reset_python": str(ROOT / ".venv" / "bin" / "python"),
        "base_url": base_url,
        "model": args.model,
        "max_steps": args.max_steps,
        "timeout_s": args.cap,
        "flash_mode": args.browser_use_flash,
        "chromium": os.environ.get("WEBAGENT_CHROMIUM", "/usr/bin/chromium"),
        "demos": demos,  # browser-use: extend_system_message; AgentLab: flags.extra_instructions
    }
    cmd = runner_cmd(peer, RUNNER[peer], spec, log, indent=2)
    if cmd is None:
        return {**row, "outcome": "error", "error": f"not installed: run bench/rivals/setup.sh {peer}"}
    hard_cap = args.cap + 90  # the runner stops itself at the cap; this is for a runner that hangs
    rc, text = await run_process(cmd, log, hard_cap, ROOT)
    result = last_json_line(text)
    if result is None:
        result = {"capped": rc is None, "error": no_row(rc, hard_cap, os.path.relpath(log, ROOT))}
    row.update({k: v for k, v in result.items() if k not in ("peer", "task")})
    try:
        ok, why = instance.check(task.id, (result.get("answer") or "") if answer_task else None)
    except AppError as exc:
        return {**row, "outcome": "error", "success": False, "error": str(exc)}
    row.update(success=ok, check=why)
    if ok:
        row["outcome"] = "success"
    elif result.get("capped"):
        row["outcome"] = "capped"
    elif result.get("error") and not result.get("steps") and not result.get("capped"):
        row["outcome"] = "error"  # the runner broke before the agent acted
    else:
        row["outcome"] = "failure"
    return row


async def webagent_episode(task, args, base_url: str, tag: str, out: Path) -> dict:
    log = out / "logs" / f"{tag}.log"
    folder = out / "runs" / "webagent" / tag
    options = ["--task", task.id, "--out", str(folder), "--max-steps", str(args.max_steps), "--no-cache"]
    options += ["--skills"] if args.demos else []  # the skills `webagent apps learn` made from the same demos
    rc, r = await run_webagent(["apps", "eval"], options, base_url, args.model, folder, log, args.cap)
    if r is not None:
        row = {
            "success": r["success"],
            "steps": r["steps"],
            "status": r["status"],
            "cause": r.get("cause"),
            "check": r.get("check"),
            "answer": r.get("answer"),
            "error": r.get("error"),
            "reset_s": r.get("reset_s"),
            "time_s": r.get("time_s"),
            "trace_dir": os.path.relpath(folder / "traces" / task.id, ROOT),
        }
        row["outcome"] = "success" if r["success"] else ("error" if r.get("cause") == "error" else "failure")
        return row
    if rc is None:
        return {
            "success": False,
            "outcome": "capped",
            "error": f"wall-time cap of {args.cap:g} s reached",
            "steps": trace_steps(folder, task.id),
        }
    return {
        "success": False,
        "outcome": "error",
        "error": f"webagent exited {rc} without an episode row (see {os.path.relpath(log, ROOT)})",
    }


async def run(args) -> None:
    out = Path(args.out)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    episodes = out / "episodes.jsonl"
    apps = {a.name: a for a in load_apps()}
    task_of = {t.id: (a, t) for a in apps.values() for t in a.tasks}
    unknown = [t for t in args.tasks if t not in task_of]
    if unknown:
        sys.exit(f"unknown task {unknown[0]!r} (see `.venv/bin/webagent apps list --tasks`)")
    done = load_rows(episodes)
    todo = [
        t
        for t in args.tasks
        if args.rerun
        or done.get((args.peer, t, args.model, args.cap, args.max_steps, args.demos), {}).get("outcome", "error")
        == "error"
    ]
    shown = (
        (" the apps' skills (apps eval --skills)" if args.peer == "webagent" else " the demonstrations as text")
        if args.demos
        else ""
    )
    print(
        f"{args.peer}: {len(args.tasks)} tasks, {len(args.tasks) - len(todo)} already in {episodes}; "
        f"model {args.model}, cap {args.cap:g} s, at most {args.max_steps} steps"
        + (f"; given{shown}" if shown else ""),
        flush=True,
    )
    if not todo:
        return
    proxy = StartCountingProxy(args.server, out / "calls.jsonl", out / "starts.jsonl")
    proxy_base = await proxy.start()
    print(f"model server {args.server}, counted through {proxy_base}", flush=True)
    by_app: dict[str, list] = {}
    for t in todo:
        by_app.setdefault(task_of[t][0].name, []).append(task_of[t][1])
    try:
        for name, tasks in by_app.items():
            demos = demos_text(name) if args.demos and args.peer != "webagent" else None
            if args.demos and args.peer != "webagent" and not demos:
                print(f"{name}: no demonstrations (demos.json) to show", flush=True)
            instance = None
            if args.peer != "webagent":  # webagent's `apps eval` serves its own instance
                instance = AppInstance(apps[name], say=lambda m: print(m, flush=True)).start()
                print(f"{name}: serving at {instance.base_url} (state {instance.live})", flush=True)
            try:
                for task in tasks:
                    tag = f"{args.peer}.{task.id}.{uuid.uuid4().hex[:6]}"
                    base_url = f"{proxy_base}/t/{tag}/v1"
                    if demos:
                        proxy.expect[tag] = demos
                    t0 = time.time()
                    try:
                        if args.peer == "webagent":
                            row = await webagent_episode(task, args, base_url, tag, out)
                        else:
                            assert instance is not None  # started above for every peer but webagent
                            row = await peer_episode(args.peer, instance, task, args, base_url, tag, out, demos)
                    except Exception as exc:  # noqa: BLE001 - one broken task must not end the run
                        row = {"success": False, "outcome": "error", "error": f"{type(exc).__name__}: {exc}"}
                    row = {
                        "peer": args.peer,
                        "task": task.id,
                        "app": name,
                        "kinds": task.kinds,
                        "gold_steps": len(task.gold),
                        "answer_task": task.answer is not None,
                        "model": args.model,
                        "cap_s": args.cap,
                        "max_steps": args.max_steps,
                        "demos": args.demos,
                        **row,
                        "tag": tag,
                        "wall_s": round(time.time() - t0, 1),
                        **proxy_usage(out, tag),
                        "log": os.path.relpath(out / "logs" / f"{tag}.log", ROOT),
                    }
                    with episodes.open("a") as f:
                        f.write(json.dumps(row) + "\n")
                    print(
                        f"{args.peer:11s} {task.id:32s} {row['outcome']:8s} steps={row.get('steps')} "
                        f"calls={row['calls']} (sent {row['calls_sent']}) prompt_tokens={row['prompt_tokens']} wall={row['wall_s']}s"
                        f"{' error: ' + str(row['error'])[:160] if row.get('error') else ''}",
                        flush=True,
                    )
            finally:
                if instance is not None:
                    instance.stop()
    finally:
        await proxy.stop()


def report(args) -> str:
    out = Path(args.out)
    rows = [r for r in load_rows(out / "episodes.jsonl").values() if r["task"] in args.tasks]
    groups: dict[tuple, list] = {}
    for r in rows:
        groups.setdefault((r["model"], r["cap_s"], r["max_steps"], bool(r.get("demos"))), []).append(r)
    lines = [
        "# Peers on webagent's real-app suite (subset)",
        "",
        "One model server, calls and tokens counted by the same proxy (`bench/rivals/proxy.py`); success is the "
        "app's own database check (`app.py check`), with the agent's last message as the answer for answer tasks. "
        "`capped`: the episode was cut by the wall-time cap (counted apart from failures). "
        "Made by `bench/rivals/apps_peers.py`.",
        "",
    ]
    summary: dict[str, dict] = {}
    for (model, cap, max_steps, demos), rs in sorted(groups.items(), key=lambda kv: str(kv[0])):
        setting = f"{model} / cap {cap:g} s / {max_steps} steps" + (f" / {DEMOS_LABEL}" if demos else "")
        lines += [
            f"## {model}: cap {cap:g} s per episode, at most {max_steps} steps" + (f"; {DEMOS_LABEL}" if demos else ""),
            "",
            *(
                [
                    "Given the app's demonstrations (`demos.json`): browser-use and AgentLab as text in their prompts "
                    "(`bench/rivals/demos_text.py`; browser-use `extend_system_message`, AgentLab "
                    "`flags.extra_instructions`), webagent as the skills learned from them (`apps eval --skills`).",
                    "",
                ]
                if demos
                else []
            ),
            "| peer | tasks | success | failure | capped | error | model calls / task (answered) | prompt tokens / task "
            "| completion tokens / task | seconds / task |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        present = [p for p in PEERS if any(r["peer"] == p for r in rs)]  # the peers run in this setting
        for peer in present:
            pr = [r for r in rs if r["peer"] == peer]
            n = len(pr)
            count = {o: sum(1 for r in pr if r["outcome"] == o) for o in ("success", "failure", "capped", "error")}
            mean = {
                k: sum(r.get(k) or 0 for r in pr) / n for k in ("calls", "prompt_tokens", "completion_tokens", "wall_s")
            }
            summary.setdefault(setting, {})[peer] = {"tasks": n, **count, **mean}
            lines.append(
                f"| {peer} | {n} | {count['success']}/{n} | {count['failure']} | {count['capped']} | "
                f"{count['error']} | {mean['calls']:.1f} | {mean['prompt_tokens']:.0f} | "
                f"{mean['completion_tokens']:.0f} | {mean['wall_s']:.0f} |"
            )
        lines += [
            "",
            "| task | gold steps | " + " | ".join(present) + " |",
            "|---|---|" + "---|" * len({r["peer"] for r in rs}),
        ]
        for t in args.tasks:
            cells = []
            for peer in present:
                r = next((r for r in rs if r["peer"] == peer and r["task"] == t), None)
                cells.append(
                    "–"
                    if r is None
                    else f"{r['outcome']}, {fmt(r.get('steps'), 'd')} steps, "
                    f"{r['calls']}/{r.get('calls_sent', '?')} calls answered/sent, "
                    f"{r['prompt_tokens']} tok, {r['wall_s']:.0f} s"
                )
            gold = next((r["gold_steps"] for r in rs if r["task"] == t), None)
            lines.append(f"| {t} | {fmt(gold, 'd')} | " + " | ".join(cells) + " |")
        lines += ["", "Why each episode that did not succeed ended:", ""]
        for r in sorted(rs, key=lambda r: (r["peer"], args.tasks.index(r["task"]))):
            if r["outcome"] != "success":
                why = r.get("error") or r.get("cause") or r.get("check") or ""
                extra = f"; answered {r['answer']!r}" if r.get("answer_task") and r.get("answer") else ""
                lines.append(f"- {r['peer']} / {r['task']}: {r['outcome']}: {str(why)[:200]}{extra} (log `{r['log']}`)")
        lines.append("")
    versions = sorted({r["version"] for r in rows if r.get("version")})
    if versions:
        lines += ["Versions: " + "; ".join(versions) + ".", ""]
    lines += [
        "A model call still in flight when an episode reached its cap is not answered: it counts in the calls "
        "sent, not in the calls or tokens (no reply, no usage)."
    ]
    text = "\n".join(lines) + "\n"
    (out / "results.md").write_text(text)
    (out / "results.json").write_text(json.dumps({"tasks": args.tasks, "summary": summary, "episodes": rows}, indent=2))
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", choices=PEERS)
    parser.add_argument("--tasks", nargs="+", default=SUBSET, metavar="ID", help="task ids (default: the 9 of SUBSET)")
    server_options(parser)
    parser.add_argument("--cap", type=float, default=900, help="wall-time cap per episode, seconds")
    parser.add_argument("--max-steps", type=int, default=15, help="most agent steps (webagent apps eval's default)")
    flash_option(parser)
    parser.add_argument(
        "--demos",
        action="store_true",
        help="give each peer its app's demonstrations: browser-use and AgentLab as text in their prompts "
        "(demos_text.py), webagent the skills learned from them (apps eval --skills; run `webagent apps learn` "
        f"first); default --out {os.path.relpath(DEFAULT_OUT / 'demos', ROOT)}",
    )
    parser.add_argument(
        "--out", help=f"episodes.jsonl, calls.jsonl, logs, results.md (default {os.path.relpath(DEFAULT_OUT, ROOT)})"
    )
    parser.add_argument("--rerun", action="store_true", help="run tasks again even when recorded")
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args()
    if args.out is None:  # with --demos, apart from the runs without them
        args.out = str(DEFAULT_OUT / "demos" if args.demos else DEFAULT_OUT)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))  # stop the episode too
    if not args.report_only:
        if not args.peer:
            parser.error("--peer is required (or --report-only)")
        if not args.model:
            args.model = server_model_or_exit(
                args.server, ".venv/bin/webagent serve --embedded qwen2.5-coder-0.5b --port 8765"
            )
        asyncio.run(run(args))
    elif not (Path(args.out) / "episodes.jsonl").exists():
        sys.exit(f"{args.out}: no episodes.jsonl to report on (run a --peer into this --out first)")
    print(report(args))


if __name__ == "__main__":
    main()
