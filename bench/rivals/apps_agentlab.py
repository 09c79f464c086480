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

from functools import partial
from typing import Any

from bench.rivals.agentlab_episode import act, agentlab_environ, browsergym_env, generic_agent, main, versions
from bench.rivals.episode_process import apps_error_row


def episode(spec: dict) -> dict:
    agentlab_environ(spec["base_url"])
    from browsergym.experiments.benchmark.base import Benchmark
    from browsergym.experiments.benchmark.configs import DEFAULT_HIGHLEVEL_ACTION_SET_ARGS
    from browsergym.experiments.loop import EnvArgs

    from bench.rivals import apps_browsergym  # registers browsergym/webagent-apps.* (the suite's tasks)

    gym_id = f"browsergym/{apps_browsergym.PREFIX}.{spec['task_id']}"
    row = {
        "peer": "agentlab",
        "version": versions(),
        "task": spec["task_id"],
        "steps": 0,
        "done": False,
        "reward": 0.0,
        "answer": None,
        "error": None,
        "demos": bool(spec.get("demos")),
    }
    benchmark = Benchmark(
        name="webagent_apps",
        high_level_action_set_args=DEFAULT_HIGHLEVEL_ACTION_SET_ARGS["webarena"],
        is_multi_tab=False,
        supports_parallel_seeds=False,
        backends=[],
        env_args_list=[EnvArgs(task_name=t.split("/", 1)[1]) for t in apps_browsergym.ALL_TASK_IDS],
    )
    agent = generic_agent(spec, benchmark)  # with the app's demonstrations as its extra_instructions
    instance = {
        "base_url": spec["base_url_app"],
        "state": spec["check"]["state"],
        "python": spec["check"]["python"],
        "app_folder": spec["check"]["app_folder"],
        "pristine": spec.get("pristine"),
        "reset_python": spec.get("reset_python"),
    }
    # Debian's Chromium under Playwright 1.44: with viewport emulation alone the page's
    # innerWidth is 780 px (Oscar then hides its login link in a collapsed menu); a window
    # of the task's size (1280x800) gives the page 1280 px, as webagent's browser has.
    with browsergym_env(gym_id, agent, spec, task_kwargs={"instance": instance}, resizeable_window=True) as env:
        _, reward, row["done"] = act(env, agent, spec, row, 0, mark_capped=True)
        if reward is not None:
            row["reward"] = float(reward)
        try:
            browser_env: Any = env.unwrapped  # BrowserGym's BrowserEnv (gymnasium types it as a bare Env)
            task = browser_env.task
            row["answer"] = getattr(task, "answer", None)
            if row["answer"] is None:  # a message sent on the step the cap cut, or on a non-answer task
                said = [m["message"] for m in browser_env.chat.messages if m["role"] == "assistant"]
                row["answer"] = said[-1] if len(said) > 1 else None  # said[0]: the greeting
            if getattr(task, "last_check", None):
                row["last_check"] = list(task.last_check)
        except Exception:
            pass
    return row


if __name__ == "__main__":
    main(episode, partial(apps_error_row, "agentlab"))
