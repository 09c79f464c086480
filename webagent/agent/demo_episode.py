"""The demo shop as an episode (``webagent.agent.episode.EpisodeTask``), as an app task and a
MiniWoB++ seed are: a page episode that starts at the shop (or at ``url``), ended once the
shop records the order the task asks for (its own word, never the model's), and judged by
what it recorded."""

from __future__ import annotations

from collections.abc import Callable

from webagent.agent.episode import PageEpisode, Verdict
from webagent.demo_site import DemoShop


class DemoEpisode(PageEpisode):
    def __init__(self, shop: DemoShop, task: str, url: str | None = None, opened: Callable[[str], None] | None = None):
        super().__init__(task, url or shop.base + "index.html", opened)
        self.shop = shop

    async def done(self, step: int) -> str | None:
        return "the shop confirmed the order" if self.shop.confirms(self.task) else None

    async def validate(self, answer: str | None) -> Verdict:
        confirmed = self.shop.confirms(self.task)
        return Verdict(bool(confirmed), self.shop.describe(), judged=confirmed is not None)
