"""What the two AgentLab runners (``run_agentlab.py`` on MiniWoB++, ``apps_agentlab.py`` on the
real apps) share: the environment AgentLab reads, GenericAgent with AgentLab's flags for small
models and its self-hosted chat model, the BrowserGym environment in Debian's Chromium, the loop
of AgentLab's ``ExpArgs.run`` under the wall-time cap, and the runner's ``__main__``. Runs in
bench/rivals/.venv-agentlab; AgentLab, BrowserGym and gymnasium are imported inside the
functions, after ``agentlab_environ``."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

from bench.rivals.episode_process import error_line, print_row


class _Cap(BaseException):  # not an Exception: AgentLab's retry loops catch those
    pass


def agentlab_environ(base_url: str) -> None:
    """Point AgentLab's chat model at ``base_url`` and Playwright at Debian's Chromium; before
    AgentLab or BrowserGym is imported."""
    os.environ["VLLM_API_URL"] = base_url
    os.environ["VLLM_API_KEY"] = "none"
    # AgentLab asks the Hugging Face hub for a tokenizer named like the model (to fit the prompt)
    # and falls back to tiktoken's gpt-4 one; offline here, so do not wait for the hub's retries.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # setup.sh made this folder: Playwright's Chromium revision there is Debian's Chromium
    os.environ["PLAYWRIGHT_BROWSERS_PATH"] = str(Path(sys.prefix) / "ms-playwright")


def versions() -> str:
    return f"agentlab {version('agentlab')}, browsergym {version('browsergym-core')}"


def generic_agent(spec: dict, benchmark: Any) -> Any:
    """GenericAgent with ``FLAGS_8B`` (accessibility tree, action history, examples, thinking),
    ``max_prompt_tokens`` 7,000, the spec's ``demos`` (if any) as its ``extra_instructions``, its
    self-hosted chat model (``SelfHostedModelArgs(backend="vllm")``, URL from ``VLLM_API_URL``),
    and the action set of ``benchmark``, set through ``set_benchmark`` as AgentLab's studies do."""
    from agentlab.agents.generic_agent.agent_configs import FLAGS_8B
    from agentlab.agents.generic_agent.generic_agent import GenericAgentArgs
    from agentlab.llm.chat_api import SelfHostedModelArgs

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
    agent_args.set_benchmark(benchmark, demo_mode=False)
    return agent_args.make_agent()


@contextlib.contextmanager
def browsergym_env(gym_id: str, agent: Any, spec: dict, **kwargs: Any) -> Iterator[Any]:
    """BrowserGym's environment ``gym_id`` (headless, the agent's action mapping, at most the spec's
    ``max_steps``, Debian's Chromium), closed on the way out."""
    import gymnasium as gym

    env = gym.make(
        gym_id,
        disable_env_checker=True,
        max_episode_steps=spec["max_steps"],
        headless=True,
        wait_for_user_message=False,
        action_mapping=agent.action_set.to_python_code,
        pw_chromium_kwargs={"executable_path": spec.get("chromium", "/usr/bin/chromium")},
        **kwargs,
    )
    try:
        yield env
    finally:
        try:
            env.close()
        except Exception:
            pass


def act(
    env: Any, agent: Any, spec: dict, row: dict, seed: int, *, mark_capped: bool = False
) -> tuple[str | None, Any, bool]:
    """AgentLab's ``ExpArgs.run`` loop (reset, ``obs_preprocessor``, ``get_action``, ``step``)
    without its experiment folders, stopped by a SIGALRM at the spec's ``timeout_s``. Records in
    ``row``: ``steps``, ``actions``, ``action_errors``, ``gave_up`` (GenericAgent's re-ask counts
    when it gives up), ``error`` (the cap, with ``capped`` if ``mark_capped``, or what broke),
    ``time_s``. Returns the first observation's goal (None if the reset failed), the last step's
    reward (None before a first step) and whether the environment ended the episode (False when
    the cap or an error cut it)."""

    def on_alarm(signum, frame):
        raise _Cap()

    goal = reward = None
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(int(spec["timeout_s"]))
    t0 = time.perf_counter()
    try:
        obs, info = env.reset(seed=seed)
        goal = obs.get("goal")
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
        ended = bool(terminated)
    except _Cap:
        ended = False
        if mark_capped:
            row["capped"] = True
        row["error"] = f"wall-time cap of {spec['timeout_s']:g} s reached"
    except Exception as exc:  # reported as the episode's error
        ended = False
        row["error"] = error_line(exc, 300)
    finally:
        signal.alarm(0)
    row["time_s"] = round(time.perf_counter() - t0, 1)
    return goal, reward, ended


def main(episode: Callable[[dict], dict], failed: Callable[[dict, str], dict]) -> None:
    """A runner's ``__main__``: ``episode`` on the spec file named by ``argv[1]``, or the row
    ``failed(spec, error)`` when it raises; the row is the last stdout line."""
    spec = json.loads(Path(sys.argv[1]).read_text())
    try:
        row = episode(spec)
    except Exception as exc:
        row = failed(spec, error_line(exc, 300))
    print_row(row)
