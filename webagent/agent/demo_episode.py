"""The demo shop as an episode (``webagent.agent.episode.EpisodeTask``), as an app task and a
MiniWoB++ seed are: its start page opened, the run ended once the shop records the order the
task asks for (its own word, never the model's), and its verdict with what it recorded."""

from __future__ import annotations

from webagent.agent.episode import Verdict
from webagent.demo_site import DemoShop


class DemoEpisode:
    def __init__(self, shop: DemoShop, task: str):
        self.shop, self.task = shop, task

    async def setup(self, browser) -> str:
        opened = await browser.open(self.shop.base + "index.html")
        if not opened.ok:
            raise RuntimeError(f"cannot open the demo shop at {self.shop.base}: {opened.error}")
        return self.task

    async def done(self, step: int) -> str | None:
        return "the shop confirmed the order" if self.shop.confirms(self.task) else None

    async def validate(self, answer: str | None) -> Verdict:
        confirmed = self.shop.confirms(self.task)
        return Verdict(bool(confirmed), self.shop.describe(), judged=confirmed is not None)
