"""One MiniWoB++ episode with AgentLab's GenericAgent on BrowserGym. Runs in
bench/rivals/.venv-agentlab:

    python -m bench.rivals.run_agentlab SPEC.json      # from the repository root; written by bench/rivals/run.py

SPEC: ``miniwob_url, task, seed, base_url, model, max_steps, timeout_s``.

* The agent: ``GenericAgentArgs`` with AgentLab's own flags for small models
  (``FLAGS_8B``: accessibility tree, action history, examples, thinking), its action set
  set for MiniWoB by ``set_benchmark`` as AgentLab's studies do, and its self-hosted chat
  model (``SelfHostedModelArgs(backend="vllm")``: an OpenAI-compatible endpoint named by
  ``VLLM_API_URL``) pointed at ``base_url``.
* The environment: ``browsergym/miniwob.<task>`` (``browsergym-miniwob``) on the same
  ``miniwob`` html files over http (``MINIWOB_URL``), in Debian's Chromium.
* The loop is AgentLab's ``ExpArgs.run`` loop (reset, ``obs_preprocessor``, ``get_action``,
  ``step``) without its experiment folders.
* Seeds: BrowserGym seeds a task with ``Math.seedrandom(RandomState(seed).randint(...))``;
  here the task's ``setup`` is given ``seed`` itself, so seed s is the same
  ``Math.seedrandom(s)`` episode that webagent and browser-use get.
* Success: MiniWoB's own ``WOB_RAW_REWARD_GLOBAL`` > 0, read from the page at the end.

The last stdout line is one JSON object.
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


class _SeedAsIs:
    """Stands in for the task's RandomState: ``randint`` returns the episode's seed."""

    def __init__(self, seed: int):
        self.seed = seed

    def randint(self, *args, **kwargs) -> int:
        return self.seed


def episode(spec: dict) -> dict:
    os.environ["MINIWOB_URL"] = spec["miniwob_url"] + "miniwob/"
    os.environ["VLLM_API_URL"] = spec["base_url"]
    os.environ["VLLM_API_KEY"] = "none"
    # AgentLab asks the Hugging Face hub for a tokenizer named like the model (to fit the prompt)
    # and falls back to tiktoken's gpt-4 one; offline here, so do not wait for the hub's retries.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # setup.sh made this folder: Playwright's Chromium revision there is Debian's Chromium
    os.environ["PLAYWRIGHT_BROWSERS_PATH"] = str(Path(sys.prefix) / "ms-playwright")
    import browsergym.miniwob  # noqa: F401 - registers browsergym/miniwob.* environments
    import gymnasium as gym
    from agentlab.agents.generic_agent.agent_configs import FLAGS_8B
    from agentlab.agents.generic_agent.generic_agent import GenericAgentArgs
    from agentlab.llm.chat_api import SelfHostedModelArgs
    from browsergym.experiments.benchmark import DEFAULT_BENCHMARKS
    from browsergym.miniwob.base import AbstractMiniwobTask

    seed = spec["seed"]
    original_setup = AbstractMiniwobTask.setup

    def setup(self, page):
        self.random = _SeedAsIs(seed)
        return original_setup(self, page)

    AbstractMiniwobTask.setup = setup

    row = {
        "agent": "agentlab",
        "version": f"agentlab {version('agentlab')}, browsergym {version('browsergym-core')}",
        "task": spec["task"],
        "seed": seed,
        "steps": 0,
        "raw_reward": 0.0,
        "success": False,
        "done": False,
        "error": None,
        "utterance": None,
    }
    flags = FLAGS_8B.copy()
    flags.max_prompt_tokens = spec.get("max_prompt_tokens", 7000)  # the server's context per slot is 8192
    chat = SelfHostedModelArgs(
        model_name=spec["model"],
        max_total_tokens=8192,
        max_input_tokens=7680,
        max_new_tokens=512,
        backend="vllm",
        temperature=0.1,
    )
    agent_args = GenericAgentArgs(chat_model_args=chat, flags=flags)
    agent_args.set_benchmark(DEFAULT_BENCHMARKS["miniwob_tiny_test"](), demo_mode=False)
    agent = agent_args.make_agent()
    env = gym.make(
        f"browsergym/miniwob.{spec['task']}",
        disable_env_checker=True,
        max_episode_steps=spec["max_steps"],
        headless=True,
        wait_for_user_message=False,
        action_mapping=agent.action_set.to_python_code,
        pw_chromium_kwargs={"executable_path": spec.get("chromium", "/usr/bin/chromium")},
    )

    def on_alarm(signum, frame):
        raise _Cap()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(int(spec["timeout_s"]))
    t0 = time.perf_counter()
    try:
        obs, info = env.reset(seed=seed)
        row["utterance"] = obs.get("goal")
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
            row.setdefault("actions", []).append(action[:200])
            if obs.get("last_action_error"):
                row.setdefault("action_errors", []).append(obs["last_action_error"][:200])
            obs = agent.obs_preprocessor(obs)
    except _Cap:
        row["error"] = f"wall-time cap of {spec['timeout_s']:g} s reached"
    except Exception as exc:  # reported as the episode's error
        row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
    finally:
        signal.alarm(0)
    row["time_s"] = round(time.perf_counter() - t0, 1)
    try:
        browser_env: Any = env.unwrapped  # BrowserGym's BrowserEnv (gymnasium types it as a bare Env)
        page = getattr(browser_env.task, "page", None) or browser_env.page  # the episode's own tab
        done, raw = page.evaluate("[WOB_DONE_GLOBAL, WOB_RAW_REWARD_GLOBAL]")
        row.update(done=bool(done), raw_reward=float(raw or 0.0), success=float(raw or 0.0) > 0)
    except Exception as exc:
        row["error"] = (row["error"] or "") + f"; reward not readable: {str(exc).splitlines()[0][:200]}"
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
            "agent": "agentlab",
            "task": spec["task"],
            "seed": spec["seed"],
            "steps": 0,
            "raw_reward": 0.0,
            "success": False,
            "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}",
        }
    sys.stdout.write("\n" + json.dumps(row) + "\n")
