"""Progress a person can read while a document's memory is built: pages read out of the
total, the model's tokens per second, and an estimate of the time left.

    … read page 3 of ~9 (1,210 of 3,224 words) · 52 tok/s · ~1 min 40 s left to paginate
    … gisted 4 of 9 pages · 48 tok/s · ~40 s left

The total of pages is an estimate while pagination runs (the document's words over the
mean page so far); the time left is the phase's elapsed time scaled by what is left of
it. Tokens per second are the prompt and completion tokens the model processed (cache
hits excluded) over the phase's wall time.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from webagent.durations import format_duration
from webagent.llm.usage import Usage


class ReadingProgress:
    """Feed it pages as pagination yields them (`page`), then gists as they arrive
    (`gisted`); it calls `emit` with one line each time, at most every `every_s` seconds
    (the last one of a phase always)."""

    def __init__(
        self,
        emit: Callable[[str], None],
        usage: Usage,
        total_words: int,
        *,
        every_s: float = 0.0,
        label: str = "",
        clock: Callable[[], float] = time.monotonic,
    ):
        self.emit, self.usage, self.total_words = emit, usage, max(1, total_words)
        self.every_s, self.label, self.clock = every_s, f"{label}: " if label else "", clock
        self._phase_start = clock()
        self._tokens_start = self._tokens()
        self._last_emit = float("-inf")
        self.pages = 0
        self.words = 0

    def _tokens(self) -> int:
        t = self.usage.total
        return t.prompt_tokens + t.completion_tokens

    def _rate(self, elapsed: float) -> str:
        tokens = self._tokens() - self._tokens_start
        return f"{tokens / elapsed:.0f} tok/s" if elapsed > 0 and tokens > 0 else "- tok/s"

    def _say(self, line: str, final: bool) -> None:
        now = self.clock()
        if final or now - self._last_emit >= self.every_s:
            self._last_emit = now
            self.emit(self.label + line)

    def restart(self) -> None:
        """A new phase starts now (its rate and time left are its own)."""
        self._phase_start, self._tokens_start = self.clock(), self._tokens()

    def page(self, words: int, *, last: bool = False) -> None:
        self.pages += 1
        self.words += words
        elapsed = self.clock() - self._phase_start
        done = min(self.words, self.total_words)
        total = self.pages if last else max(self.pages, round(self.total_words / (self.words / self.pages)))
        left = 0.0 if last else elapsed * (self.total_words - done) / max(1, done)
        self._say(
            f"read page {self.pages} of {'' if last else '~'}{total} ({done:,} of {self.total_words:,} words)"
            f" · {self._rate(elapsed)} · ~{format_duration(left)} left to paginate",
            last,
        )

    def gisted(self, done: int, total: int) -> None:
        elapsed = self.clock() - self._phase_start
        left = elapsed * (total - done) / max(1, done)
        self._say(
            f"gisted {done} of {total} pages · {self._rate(elapsed)} · ~{format_duration(left)} left", done == total
        )
