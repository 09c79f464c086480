"""The browser side of the MiniWoB++ runner: one Chromium for every worker, a context per
worker, and episodes started on the task page already loaded.

* ``shared_browser()``: one headless Chromium (one Playwright driver). Sessions attaching
  over CDP instead would each run a driver, and each driver follows every page of the
  browser.
* ``context_session(browser)``: a ``BrowserSession`` whose context opens in that browser
  (and which never closes it).
* ``ReusingEnv``: ``MiniWoBEnv`` whose ``reset`` starts a further episode of the same task
  on the loaded page — ends a running episode, ``Math.seedrandom(seed)``, raises
  ``core.EPISODE_MAX_TIME``, ``core.startEpisodeReal()`` — as MiniWoB's own Python harness
  does (it loads a task page once per instance). The problem depends only on the seed
  (``genProblem`` draws from the seeded ``Math.random``). Another task, another page, or a
  page the agent navigated away from is loaded afresh.
"""

from __future__ import annotations

from contextlib import asynccontextmanager

from webagent.errors import first_line
from webagent.miniwob import MiniWoBEnv, MiniWoBEpisode

# Episodes run side by side in pages of one browser: none may be throttled as a background
# page (timers, rendering), or parallel episodes would wait on each other.
PARALLEL_ARGS = [
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
]


@asynccontextmanager
async def shared_browser(executable: str | None = None):
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import async_playwright

    from webagent.browser.session import CHROMIUM_ARGS, BrowserError, find_chromium

    path = find_chromium(executable)
    pw = await async_playwright().start()
    try:
        try:
            browser = await pw.chromium.launch(
                executable_path=path, headless=True, args=[*CHROMIUM_ARGS, *PARALLEL_ARGS]
            )
        except PlaywrightError as exc:
            raise BrowserError(f"cannot start Chromium ({path or 'Playwright build'}): {first_line(exc)}") from None
        try:
            yield browser
        finally:
            await browser.close()
    finally:
        await pw.stop()


def context_session(browser):
    from webagent.browser import BrowserSession

    class ContextSession(BrowserSession):
        async def start(self) -> None:
            self._browser, self._pw = browser, None
            width, height = self.viewport
            self._context = await browser.new_context(
                viewport={"width": width, "height": height}, service_workers="block"
            )
            self._context.on("page", self._on_new_page)
            await self._open_first_page()

        async def _close_browser(self):  # the browser belongs to the runner
            pass

    return ContextSession()


class ReusingEnv(MiniWoBEnv):
    def __init__(self, browser, *, reuse_page: bool = True, **kwargs):
        super().__init__(browser, **kwargs)
        self.reuse_page = reuse_page
        self._loaded: str | None = None

    async def reset(self, task: str, seed: int = 0) -> MiniWoBEpisode:
        url = self.task_url(task)
        page = self.browser.page
        if not (self.reuse_page and self._loaded == task and page.url == url):
            episode = await super().reset(task, seed)
            self._loaded = task
            return episode
        return await self.start_episode(task, seed, url)
