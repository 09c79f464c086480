"""Pages and the gist memory: the ReadAgent core's data, with no knowledge of HTML or files."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field


def word_count(text: str) -> int:
    return len(text.split())


def first_words(text: str, n: int) -> str:
    return " ".join(text.split()[:n])


def last_words(text: str, n: int) -> str:
    """The last `n` words (every word when `n` is 0)."""
    return " ".join(text.split()[-n:])


@dataclass(frozen=True)
class Page:
    index: int
    text: str
    metadata: dict = field(default_factory=dict, compare=False)

    @property
    def words(self) -> int:
        return word_count(self.text)


@dataclass
class GistMemory:
    """Ordered pages with one gist each. Rendering with `expanded` swaps those pages' gists
    for their full text, in place, so the order of the story is kept."""

    pages: list[Page]
    gists: list[str]
    # Pages whose gist is a fallback (the page's first words) because gisting failed: a
    # degraded memory, never cached as a clean one.
    fallback_pages: list[int] = field(default_factory=list)
    endpoint_failed: bool = False  # some gist failed because the endpoint was down

    @property
    def degraded(self) -> bool:
        return bool(self.fallback_pages)

    def __post_init__(self) -> None:
        if len(self.pages) != len(self.gists):
            raise ValueError(f"{len(self.pages)} pages but {len(self.gists)} gists")

    def __len__(self) -> int:
        return len(self.pages)

    def entries(self, expanded: Iterable[int] = ()) -> list[tuple[int, str]]:
        wanted = set(expanded)
        return [(p.index, p.text if p.index in wanted else g) for p, g in zip(self.pages, self.gists)]

    def render_text(self, expanded: Iterable[int] = ()) -> str:
        """`<Page i>` tagged text, the form ReadAgent uses for documents."""
        return "\n\n".join(f"<Page {i}>\n{content}" for i, content in self.entries(expanded))

    def render_indexed(self, expanded: Iterable[int] = ()) -> str:
        """One `{"index": i, "content": ...}` dict per line, the form used for web snippets."""
        return "\n".join(
            json.dumps({"index": i, "content": content}, ensure_ascii=False) for i, content in self.entries(expanded)
        )

    def render(self, style: str, expanded: Iterable[int] = ()) -> str:
        if style == "text":
            return self.render_text(expanded)
        if style == "indexed":
            return self.render_indexed(expanded)
        raise ValueError(f"unknown memory style {style!r}")

    def context_words(self, expanded: Iterable[int] = ()) -> int:
        """Words of the memory as the model reads it (gists, with `expanded` pages in full):
        the "in-context text" of the paper's compression rate."""
        return sum(word_count(content) for _, content in self.entries(expanded))

    @property
    def full_words(self) -> int:
        return sum(p.words for p in self.pages)

    def to_dict(self) -> dict:
        return {
            "pages": [{"index": p.index, "text": p.text, "metadata": p.metadata} for p in self.pages],
            "gists": list(self.gists),
        }

    @classmethod
    def from_dict(cls, data: dict) -> GistMemory:
        pages = [Page(d["index"], d["text"], d.get("metadata") or {}) for d in data["pages"]]
        return cls(pages, list(data["gists"]))


def compression_rate(full_text_words: int, longest_context_words: int) -> float:
    """The paper's definition: 100 × (1 − words in the longest in-context text / words in the full text)."""
    if full_text_words <= 0:
        return 0.0
    return 100.0 * (1.0 - longest_context_words / full_text_words)
