"""Accounting of everything that costs: calls, cache hits, tokens, wall time."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class Counter:
    calls: int = 0  # requests that reached the model
    cached_calls: int = 0  # replies served from the cache
    prompt_tokens: int = 0
    prompt_cached_tokens: int = 0  # of prompt_tokens, read from the server's prompt cache (not evaluated again)
    completion_tokens: int = 0
    retries: int = 0
    failures: int = 0  # calls that failed for good after the retries
    # Tokens the work needed, whether the reply came from the model, the cache or a shared
    # in-flight request: a method's true cost, independent of what another method paid.
    needed_prompt_tokens: int = 0
    needed_completion_tokens: int = 0

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass
class Usage:
    """Totals plus a breakdown by purpose ("pagination", "gist", "lookup", "answer", ...)."""

    total: Counter = field(default_factory=Counter)
    by_purpose: dict[str, Counter] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
    parent: Usage | None = None  # a scoped Usage (one step, one question) also counts here

    def record(self, purpose: str, **deltas: int) -> None:
        if self.parent is not None:
            self.parent.record(purpose, **deltas)
        part = self.by_purpose.setdefault(purpose, Counter())
        for name, value in deltas.items():
            setattr(part, name, getattr(part, name) + value)
            setattr(self.total, name, getattr(self.total, name) + value)

    def purpose(self, name: str) -> Counter:
        return self.by_purpose.get(name, Counter())

    @property
    def wall_time(self) -> float:
        return time.perf_counter() - self.started

    def to_dict(self) -> dict:
        out = self.total.to_dict()
        out["wall_time_s"] = round(self.wall_time, 3)
        out["by_purpose"] = {k: v.to_dict() for k, v in sorted(self.by_purpose.items())}
        return out

    def summary_line(self) -> str:
        """Two lines at most, e.g.
        usage: 15 model calls (3 cached); 21,031 prompt + 1,632 completion tokens; 2 retries, 0 failures; 77.0 s
          pagination 6 (3 cached), gist 7 (0 cached), lookup 1 (0 cached), answer 1 (0 cached)
        where a purpose's count is every reply it got, from the model or the cache."""
        t = self.total
        line = (
            f"usage: {t.calls + t.cached_calls:,} model calls ({t.cached_calls:,} cached); "
            f"{t.prompt_tokens:,} prompt + {t.completion_tokens:,} completion tokens; "
            f"{t.retries:,} retries, {t.failures:,} failures; {self.wall_time:.1f} s"
        )
        parts = ", ".join(
            f"{name} {c.calls + c.cached_calls:,} ({c.cached_calls:,} cached)" for name, c in self.by_purpose.items()
        )
        return line + (f"\n  {parts}" if parts else "")
