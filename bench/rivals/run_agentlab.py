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

import os
from functools import partial
from typing import Any

from bench.rivals.agentlab_episode import act, agentlab_environ, browsergym_env, generic_agent, main, versions
from bench.rivals.episode_process import miniwob_error_row, miniwob_row


class _SeedAsIs:
    """Stands in for the task's RandomState: ``randint`` returns the episode's seed."""

    def __init__(self, seed: int):
        self.seed = seed

    def randint(self, *args, **kwargs) -> int:
        return self.seed


def episode(spec: dict) -> dict:
    os.environ["MINIWOB_URL"] = spec["miniwob_url"] + "miniwob/"
    agentlab_environ(spec["base_url"])
    import browsergym.miniwob  # noqa: F401 - registers browsergym/miniwob.* environments
    from browsergym.experiments.benchmark import DEFAULT_BENCHMARKS
    from browsergym.miniwob.base import AbstractMiniwobTask

    seed = spec["seed"]
    original_setup = AbstractMiniwobTask.setup

    def setup(self, page):
        self.random = _SeedAsIs(seed)
        return original_setup(self, page)

    AbstractMiniwobTask.setup = setup

    row = miniwob_row("agentlab", versions(), spec)
    agent = generic_agent(spec, DEFAULT_BENCHMARKS["miniwob_tiny_test"]())
    with browsergym_env(f"browsergym/miniwob.{spec['task']}", agent, spec) as env:
        row["utterance"], _, _ = act(env, agent, spec, row, seed)
        try:
            browser_env: Any = env.unwrapped  # BrowserGym's BrowserEnv (gymnasium types it as a bare Env)
            page = getattr(browser_env.task, "page", None) or browser_env.page  # the episode's own tab
            done, raw = page.evaluate("[WOB_DONE_GLOBAL, WOB_RAW_REWARD_GLOBAL]")
            row.update(done=bool(done), raw_reward=float(raw or 0.0), success=float(raw or 0.0) > 0)
        except Exception as exc:
            row["error"] = (row["error"] or "") + f"; reward not readable: {str(exc).splitlines()[0][:200]}"
    return row


if __name__ == "__main__":
    main(episode, partial(miniwob_error_row, "agentlab"))
