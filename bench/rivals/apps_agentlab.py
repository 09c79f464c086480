"""One real-app task (webagent's app suite) with AgentLab's GenericAgent on BrowserGym. Runs in
bench/rivals/.venv-agentlab:

    python -m bench.rivals.apps_agentlab SPEC.json      # from the repository root; written by bench/rivals/apps_peers.py

SPEC: ``task_id, start_url, base_url_app, check`` (``python``, ``app_folder``, ``state``),
``pristine``/``reset_python`` (optional), ``base_url, model, max_steps, timeout_s, chromium``,
``demos`` (optional: the app's demonstrations as text, ``demos_text.py``; given to GenericAgent
as its flags' ``extra_instructions``, which its prompt shows under "## Extra instructions:"
after the goal).

* The task: ``browsergym/webagent-apps.<task id>``, registered by ``apps_browsergym.py``
  (BrowserGym's task interface: ``setup`` resets the app and opens the start page, ``validate``
  runs the app's own database check), on the harness's running instance.
* The agent: ``GenericAgentArgs`` with AgentLab's flags for small models (``FLAGS_8B``:
  accessibility tree, action history, examples, thinking), ``max_prompt_tokens`` 7,000 (the
  server's context per slot is 8,192), BrowserGym's default high-level action set for WebArena
  (``bid`` actions, ``send_msg_to_user`` to answer, ``report_infeasible``, navigation), set
  through ``set_benchmark`` as AgentLab's studies do, single tab; its self-hosted chat model
  (``SelfHostedModelArgs(backend="vllm")``, URL from ``VLLM_API_URL``) pointed at ``base_url``.
* The loop is AgentLab's ``ExpArgs.run`` loop (reset, ``obs_preprocessor``, ``get_action``,
  ``step``) without its experiment folders, as ``run_agentlab.py`` runs MiniWoB.

The last stdout line is one JSON object (``answer``: the agent's last message to the user).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any


class _Cap(BaseException):  # not an Exception: AgentLab's retry loops catch those
    pass


def episode(spec: dict) -> dict:
    os.environ["VLLM_API_URL"] = spec["base_url"]
    os.environ["VLLM_API_KEY"] = "none"
    # AgentLab asks the Hugging Face hub for a tokenizer named like the model (to fit the prompt)
    # and falls back to tiktoken's gpt-4 one; offline here, so do not wait for the hub's retries.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # setup.sh made this folder: Playwright's Chromium revision there is Debian's Chromium
    os.environ["PLAYWRIGHT_BROWSERS_PATH"] = str(Path(sys.prefix) / "ms-playwright")
    import gymnasium as gym
    from agentlab.agents.generic_agent.agent_configs import FLAGS_8B
    from agentlab.agents.generic_agent.generic_agent import GenericAgentArgs
    from agentlab.llm.chat_api import SelfHostedModelArgs
    from browsergym.experiments.benchmark.base import Benchmark
    from browsergym.experiments.benchmark.configs import DEFAULT_HIGHLEVEL_ACTION_SET_ARGS
    from browsergym.experiments.loop import EnvArgs

    from bench.rivals import apps_browsergym  # registers browsergym/webagent-apps.* (the suite's tasks)

    gym_id = f"browsergym/{apps_browsergym.PREFIX}.{spec['task_id']}"
    row = {
        "peer": "agentlab",
        "version": f"agentlab {version('agentlab')}, browsergym {version('browsergym-core')}",
        "task": spec["task_id"],
        "steps": 0,
        "done": False,
        "reward": 0.0,
        "answer": None,
        "error": None,
        "demos": bool(spec.get("demos")),
    }
    flags = FLAGS_8B.copy()
    flags.max_prompt_tokens = spec.get("max_prompt_tokens", 7000)  # the server's context per slot is 8192
    flags.extra_instructions = spec.get("demos") or None  # the app's demonstrations, as text
    chat = SelfHostedModelArgs(
        model_name=spec["model"],
        max_total_tokens=8192,
        max_input_tokens=7680,
        max_new_tokens=512,
        backend="vllm",
        temperature=0.1,
    )
    agent_args = GenericAgentArgs(chat_model_args=chat, flags=flags)
    benchmark = Benchmark(
        name="webagent_apps",
        high_level_action_set_args=DEFAULT_HIGHLEVEL_ACTION_SET_ARGS["webarena"],
        is_multi_tab=False,
        supports_parallel_seeds=False,
        backends=[],
        env_args_list=[EnvArgs(task_name=t.split("/", 1)[1]) for t in apps_browsergym.ALL_TASK_IDS],
    )
    agent_args.set_benchmark(benchmark, demo_mode=False)
    agent = agent_args.make_agent()
    instance = {
        "base_url": spec["base_url_app"],
        "state": spec["check"]["state"],
        "python": spec["check"]["python"],
        "app_folder": spec["check"]["app_folder"],
        "pristine": spec.get("pristine"),
        "reset_python": spec.get("reset_python"),
    }
    env = gym.make(
        gym_id,
        disable_env_checker=True,
        max_episode_steps=spec["max_steps"],
        headless=True,
        wait_for_user_message=False,
        action_mapping=agent.action_set.to_python_code,
        task_kwargs={"instance": instance},
        # Debian's Chromium under Playwright 1.44: with viewport emulation alone the page's
        # innerWidth is 780 px (Oscar then hides its login link in a collapsed menu); a window
        # of the task's size (1280x800) gives the page 1280 px, as webagent's browser has.
        resizeable_window=True,
        pw_chromium_kwargs={"executable_path": spec.get("chromium", "/usr/bin/chromium")},
    )

    def on_alarm(signum, frame):
        raise _Cap()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(int(spec["timeout_s"]))
    t0 = time.perf_counter()
    try:
        obs, info = env.reset(seed=0)
        obs = agent.obs_preprocessor(obs)
        terminated = truncated = False
        while not (terminated or truncated) and row["steps"] < spec["max_steps"]:
            action, agent_info = agent.get_action(obs.copy())
            if action is None:  # GenericAgent gives up after its re-asks on unparseable replies
                row["gave_up"] = {
                    k: v for k, v in dict(agent_info.get("stats") or {}).items() if "retry" in k or "busted" in k
                }
                break
            obs, reward, terminated, truncated, info = env.step(action)
            row["steps"] += 1
            row["reward"] = float(reward)
            row.setdefault("actions", []).append(action[:200])
            if obs.get("last_action_error"):
                row.setdefault("action_errors", []).append(obs["last_action_error"][:200])
            obs = agent.obs_preprocessor(obs)
        row["done"] = bool(terminated)
    except _Cap:
        row["capped"] = True
        row["error"] = f"wall-time cap of {spec['timeout_s']:g} s reached"
    except Exception as exc:  # reported as the episode's error
        row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
    finally:
        signal.alarm(0)
    row["time_s"] = round(time.perf_counter() - t0, 1)
    try:
        browser_env: Any = env.unwrapped  # BrowserGym's BrowserEnv (gymnasium types it as a bare Env)
        task = browser_env.task
        row["answer"] = getattr(task, "answer", None)
        if row["answer"] is None:  # a message sent on the step the cap cut, or on a non-answer task
            said = [m["message"] for m in browser_env.chat.messages if m["role"] == "assistant"][1:]  # [0]: greeting
            row["answer"] = said[-1] if said else None
        if getattr(task, "last_check", None):
            row["last_check"] = list(task.last_check)
    except Exception:
        pass
    try:
        env.close()
    except Exception:
        pass
    return row


if __name__ == "__main__":
    spec = json.loads(Path(sys.argv[1]).read_text())
    try:
        row = episode(spec)
    except Exception as exc:
        row = {
            "peer": "agentlab",
            "task": spec["task_id"],
            "steps": 0,
            "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}",
        }
    sys.stdout.write("\n" + json.dumps(row) + "\n")
