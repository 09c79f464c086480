"""MiniWoB++ in the live browser: ``env`` (task pages served over http as seeded episodes,
reward read through MiniWoB's own JavaScript API), ``browser`` (one Chromium, a context per
worker, episodes restarted on the loaded page), ``runner`` (the agent on tasks and seeds,
resumable), ``report`` (success rate and mean raw reward), ``scripted`` (the scripted
model, the harness check) and ``cli`` (the ``miniwob`` command)."""

from webagent.miniwob.env import MiniWoBEnv, MiniWoBEpisode, MiniWoBStatus, list_tasks, miniwob_html_dir

__all__ = ["MiniWoBEnv", "MiniWoBEpisode", "MiniWoBStatus", "list_tasks", "miniwob_html_dir"]
