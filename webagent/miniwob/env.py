"""MiniWoB++ episodes over a ``BrowserSession``.

The task pages come from the ``miniwob`` PyPI package (MIT): its ``html/`` folder
(``miniwob/<task>.html`` plus ``core/``, ``common/``, ``flight/``) is served over
http on 127.0.0.1 -- the pages load their scripts by relative URL, and file://
would also trip the navigation guard. An episode:

    async with BrowserSession() as browser, MiniWoBEnv(browser) as env:
        episode = await env.reset("click-button", seed=3)   # utterance in episode.utterance
        obs = await browser.observe()
        await browser.act(Action(op="CLICK", element_id=...), obs)
        outcome = await env.status()     # done, raw_reward, reward, reason
        outcome.success                  # raw reward > 0

``reset`` opens the task page, seeds ``Math.seedrandom(seed)``, raises
``core.EPISODE_MAX_TIME`` (10 s is meant for RL agents; a model-driven step takes
longer), calls ``core.startEpisodeReal()``, waits for ``WOB_TASK_READY`` and reads
``core.getUtterance()``. ``status`` reads ``WOB_DONE_GLOBAL``,
``WOB_RAW_REWARD_GLOBAL``, ``WOB_REWARD_GLOBAL`` and ``WOB_REWARD_REASON``.
"""

from __future__ import annotations

import asyncio
from importlib.resources import files
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from webagent.browser.models import Action
from webagent.demo_site import serve_directory
from webagent.errors import UserError

DEFAULT_MAX_TIME_S = 600.0

# One round trip: wait for MiniWoB's core script, (end a running episode,) seed, raise the time limit, start, wait in the
# page for WOB_TASK_READY, return the utterance. Polling from Python (wait_for_function)
# cost several round trips per episode, which parallel episodes queue behind each other.
START_EPISODE = """async ([seed, maxTime, readyMs]) => {
  const t0 = Date.now();
  const pause = () => new Promise(r => setTimeout(r, 5));
  while (typeof core === 'undefined' || typeof core.startEpisodeReal !== 'function') {
    if (Date.now() - t0 > readyMs) return {error: 'the MiniWoB core script did not load in ' + readyMs + ' ms'};
    await pause();
  }
  if (core.EP_TIMER !== null && core.EP_TIMER !== undefined) core.endEpisode(0, false, 'reset');
  Math.seedrandom(seed);
  core.EPISODE_MAX_TIME = maxTime;
  core.startEpisodeReal();
  while (WOB_TASK_READY !== true) {
    if (Date.now() - t0 > readyMs) return {error: 'the task did not become ready in ' + readyMs + ' ms'};
    await pause();
  }
  return {utterance: core.getUtterance()};
}"""


def miniwob_html_dir() -> Path:
    """The ``html`` folder shipped in the ``miniwob`` wheel."""
    try:
        root = Path(str(files("miniwob") / "html"))
    except ModuleNotFoundError:
        raise UserError("the miniwob package is not installed: pip install miniwob") from None
    if not (root / "miniwob").is_dir() or not (root / "core" / "core.js").is_file():
        raise UserError(f"the miniwob package has no task pages under {root}")
    return root


def list_tasks() -> list[str]:
    """Names of the MiniWoB++ tasks (``click-button``, ``enter-text``, ...)."""
    return sorted(p.stem for p in (miniwob_html_dir() / "miniwob").glob("*.html"))


class MiniWoBEpisode(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: str
    seed: int
    url: str
    utterance: str


class MiniWoBStatus(BaseModel):
    model_config = ConfigDict(extra="forbid")

    done: bool
    raw_reward: float
    reward: float
    reason: str | None = None

    @property
    def success(self) -> bool:
        return self.raw_reward > 0


class MiniWoBEnv:
    """Serves the task pages while open; episodes run in ``browser``'s active page."""

    def __init__(self, browser, *, max_time_s: float = DEFAULT_MAX_TIME_S, ready_timeout_s: float = 10.0):
        self.browser = browser
        self.max_time_s = max_time_s
        self.ready_timeout_s = ready_timeout_s
        self.base_url: str | None = None
        self._stop = None

    async def __aenter__(self) -> MiniWoBEnv:
        self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        if self._stop is None:
            self.base_url, self._stop = serve_directory(miniwob_html_dir())

    def close(self) -> None:
        if self._stop is not None:
            self._stop()
            self._stop = None

    def task_url(self, task: str) -> str:
        if task not in list_tasks():
            raise UserError(f"unknown MiniWoB task {task!r} (see webagent.miniwob.list_tasks())")
        self.start()
        return f"{self.base_url}miniwob/{task}.html"

    async def reset(self, task: str, seed: int = 0) -> MiniWoBEpisode:
        """Open ``task`` and start a seeded episode; returns its utterance."""
        url = self.task_url(task)
        browser = self.browser
        if browser.guard is None:
            result = await browser.open(url)
        else:
            result = await browser.act(Action(op="GOTO", value=url))
        if not result.ok:
            raise UserError(f"cannot open MiniWoB task {task}: {result.error}")
        return await self.start_episode(task, seed, url)

    async def start_episode(self, task: str, seed: int, url: str) -> MiniWoBEpisode:
        """Start a seeded episode on the task page already loaded (see ``START_EPISODE``)."""
        out = await self.browser.page.evaluate(
            START_EPISODE, [seed, int(self.max_time_s * 1000), int(self.ready_timeout_s * 1000)]
        )
        if "error" in out:
            raise UserError(f"MiniWoB task {task} seed {seed}: {out['error']}")
        return MiniWoBEpisode(task=task, seed=seed, url=url, utterance=out["utterance"])

    async def status(self) -> MiniWoBStatus:
        """The episode's state now (``done`` once the task judged an answer or timed out)."""
        for attempt in range(3):
            try:
                done, raw, reward, reason = await self.browser.page.evaluate(
                    "[WOB_DONE_GLOBAL, WOB_RAW_REWARD_GLOBAL, WOB_REWARD_GLOBAL, WOB_REWARD_REASON]"
                )
                break
            except Exception:  # noqa: BLE001 - a click may be mid-navigation: retry briefly
                if attempt == 2:
                    raise
                await asyncio.sleep(0.2)
        return MiniWoBStatus(
            done=bool(done),
            raw_reward=float(raw or 0),
            reward=float(reward or 0),
            reason=None if reason is None else str(reason),
        )
