"""Episode pagination (ReadAgent §3.1, Appendix A), streamed.

A window of paragraphs is filled up to `max_words`. Numbered pause labels ⟨k⟩ are put
after the k-th paragraph of the window wherever at least `min_words` words precede it
(the window's end counts as a position too), and the model picks the label that is the
most natural pause point; the page is the paragraphs before it and the next window
starts there. No call is made when there is nothing to choose: the rest of the document
fits in one window (the last page), no position has `min_words` before it (the whole
window is a page), or there is a single label.

Bad replies are re-asked once with the problem stated; a reply that is still unusable
(or a call that failed for good) falls back to the LAST label — the longest page — and
is counted in `fallbacks`.

Paragraphs are consumed lazily: only the current window (≤ 2 × max_words words) is held.
`paginate_uniform` is the paper's Table 5 ablation: fixed-size pages, no model.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass, field

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from webagent.llm.client import LLMClient, Reply
from webagent.llm.reask import ReplyTally, ask_until_usable
from webagent.llm.replies import read_reply
from webagent.memory.pages import Page, first_words, last_words, word_count
from webagent.prompts import render_prompt
from webagent.text.read import split_paragraph

# The paper's example labels (⟨19⟩ for the format, ⟨57⟩ for the answer), or other numbers
# when those are offered: a model that copies the example must not hit a real label.
EXAMPLE_LABELS = (19, 57)


def label_schema(offered: list[int]) -> dict:
    """The break point (one of the offered labels), then the reason, as the paper asks."""
    return {
        "type": "object",
        "properties": {"break_point": {"type": "integer", "enum": list(offered)}, "because": {"type": "string"}},
        "required": ["break_point", "because"],
    }


def label_gist_schema(offered: list[int]) -> dict:
    """Single pass: the break point, then the gist of the page it closes (no reason: it
    comes after the choice, so it cannot inform it, and it costs decoding time). The gist
    is bounded so the JSON closes within the token limit (a small model otherwise ran on
    to the limit and its reply was cut)."""
    return {
        "type": "object",
        "properties": {
            "break_point": {"type": "integer", "enum": list(offered)},
            "gist": {"type": "string", "maxLength": GIST_MAX_CHARS},
        },
        "required": ["break_point", "gist"],
    }


CONTEXT_WORDS = 40  # words of the previous page / next paragraph shown around the window
PAGINATION_MAX_TOKENS = 96
GIST_MAX_TOKENS = 256  # as memory.gist's
GIST_MAX_CHARS = 900  # about 200 tokens of English: fits GIST_MAX_TOKENS with the JSON around it


@dataclass
class PaginationStats:
    calls: int = 0  # model calls, re-asks included
    fallbacks: int = 0  # windows where the last label was used because no usable reply came


@dataclass
class PaginationResult(PaginationStats):
    pages: list[Page] = field(default_factory=list)


# --- reply parsing ----------------------------------------------------------------------------

_BRACKETED = re.compile(r"[⟨<〈‹«\[(]\s*(\d+)\s*[⟩>〉›»\])]")
_AFTER_WORD = re.compile(
    r"\b(?:label|break\s*point|pause\s*point|point)\s*(?:is|at|:|#|=|-)?\s*[⟨<\[]?\s*(\d+)", re.IGNORECASE
)
_NUMBER = re.compile(r"\d+")


def _label_from_text(text: str) -> int | None:
    for pattern in (_BRACKETED, _AFTER_WORD):
        m = pattern.search(text)
        if m:
            return int(m.group(1))
    numbers = _NUMBER.findall(text)
    if len(set(numbers)) == 1:  # "7", "7.", "I choose 7"
        return int(numbers[0])
    return None


class BreakPoint(BaseModel):
    """The pagination reply: "Break point: ⟨k⟩ Because ..." (or its JSON form)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    break_point: int = Field(validation_alias=AliasChoices("break_point", "label", "breakpoint"))
    because: str = ""

    @field_validator("break_point", mode="before")
    @classmethod
    def _label(cls, value: object) -> object:
        if isinstance(value, str):  # "⟨7⟩", "<7>", "label 7"
            found = _label_from_text(value)
            return value if found is None else found
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value


def _break_point_from_text(text: str) -> dict | None:
    label = _label_from_text(text)
    return None if label is None else {"break_point": label}


def parse_label(reply: Reply | str, offered: list[int]) -> tuple[int | None, str | None]:
    """(label, problem): the chosen label if it is one of `offered`, else a problem statement.

    Accepts {"break_point": 7, "because": ...}, {"label": "⟨7⟩"}, "Break point: ⟨7⟩\n Because ...",
    "<7>", "label 7", "7".
    """
    if isinstance(reply, str):
        reply = Reply(reply)
    elif isinstance(reply.data, int | float | str) and not isinstance(reply.data, bool):
        reply = Reply(reply.text, {"break_point": reply.data}, reply.cached)
    choice, problem = read_reply(reply, BreakPoint, _break_point_from_text)
    if choice is None:
        return None, problem if reply.data is not None else "no label number found in the reply"
    if choice.break_point not in offered:
        return None, f"⟨{choice.break_point}⟩ is not one of the labels in the passage"
    return choice.break_point, None


_SHORTENED = re.compile(r"^\W*(?:shortened(?:\s+version)?|gist|summary)\s*:\s*", re.IGNORECASE | re.MULTILINE)
_JSON_GIST = re.compile(r'"gist"\s*:\s*"((?:[^"\\]|\\.)*)', re.DOTALL)


def _json_string(body: str) -> str:
    """The value of a JSON string's body, even when cut short mid-escape."""
    for end in range(len(body), max(-1, len(body) - 7), -1):
        try:
            return json.loads(f'"{body[:end]}"')
        except ValueError:
            continue
    return body


def parse_label_gist(reply: Reply | str, offered: list[int]) -> tuple[tuple[int, str] | None, str | None]:
    """Single pass: ((label, gist), problem). The label is read as `parse_label` reads it,
    from the text before the gist; the gist is what follows "Shortened:" (or the JSON's
    "gist", even when the reply was cut short). An empty gist is no problem: the page is
    then gisted on its own."""
    if isinstance(reply, str):
        reply = Reply(reply)
    if isinstance(reply.data, dict):
        gist = reply.data.get("gist")
        gist = gist.strip() if isinstance(gist, str) else ""
        label, problem = parse_label(reply, offered)
        return (None if label is None else (label, gist)), problem
    text = reply.text or ""
    m = _JSON_GIST.search(text)
    if m:  # JSON cut short by the token limit: take the label before it and the gist so far
        head, gist = text[: m.start()], _json_string(m.group(1))
    else:
        s = _SHORTENED.search(text)
        head, gist = (text[: s.start()], text[s.end() :]) if s else (text, "")
    label, problem = parse_label(head, offered)
    return (None if label is None else (label, gist.strip())), problem


def example_labels(offered: list[int]) -> tuple[int, int]:
    """Two distinct numbers for the prompt's examples, neither of them offered."""
    taken = set(offered)
    picks: list[int] = []
    for wanted in EXAMPLE_LABELS:
        n = wanted
        while n in taken or n in picks:
            n += max(taken, default=0) + 1
        picks.append(n)
    return picks[0], picks[1]


# --- the window -----------------------------------------------------------------------------


def _split_input(paragraphs: Iterable[str], max_words: int) -> Iterator[tuple[str, int]]:
    for paragraph in paragraphs:
        n = word_count(paragraph)
        if n == 0:
            continue
        if n <= max_words:
            yield paragraph, n
        else:
            for piece in split_paragraph(paragraph, max_words):
                yield piece, word_count(piece)


def render_window(window: list[str], labels: list[int], before: str = "", after: str = "") -> str:
    """The passage shown to the model: ⟨k⟩ after the k-th paragraph for every k in `labels`,
    with a little context from before and after the window marked by '...'."""
    parts = [f"... {last_words(before, CONTEXT_WORDS)}"] if before else []
    offered = set(labels)
    for k, paragraph in enumerate(window, start=1):
        parts.append(paragraph)
        if k in offered:
            parts.append(f"⟨{k}⟩")
    if after:
        parts.append(f"{first_words(after, CONTEXT_WORDS)} ...")
    return "\n\n".join(parts)


async def _choose(
    client: LLMClient, passage: str, labels: list[int], stats: PaginationStats, single_pass: bool = False
) -> tuple[int, str, str]:
    """(label, how, gist): the gist of the page it closes is asked for only with `single_pass`
    ("" when not asked, not given, or on a fallback: that page is then gisted on its own)."""
    format_label, example_label = example_labels(labels)
    offered = ", ".join(f"⟨{k}⟩" for k in labels)
    name, what = ("pagination_gist", "the shortened part before it") if single_pass else ("pagination", "your reason")
    prompt = render_prompt(name, passage=passage, format_label=format_label, example_label=example_label)
    if single_pass:
        parse, schema = (lambda reply: parse_label_gist(reply, labels)), label_gist_schema(labels)
        max_tokens = PAGINATION_MAX_TOKENS + GIST_MAX_TOKENS
    else:

        def parse(reply: Reply) -> tuple[tuple[int, str] | None, str | None]:
            label, problem = parse_label(reply, labels)
            return (None if label is None else (label, "")), problem

        schema, max_tokens = label_schema(labels), PAGINATION_MAX_TOKENS
    tally = ReplyTally()
    chosen = await ask_until_usable(
        client,
        prompt,
        parse=parse,
        schema=schema,
        max_tokens=max_tokens,
        purpose="pagination",
        tally=tally,
        instruction=(
            f'Answer again with "Break point: ⟨k⟩" and {what}, where k is one of the labels in the passage: {offered}.'
        ),
    )
    stats.calls += tally.calls
    if chosen is None:
        stats.fallbacks += 1
        return labels[-1], "fallback", ""
    return chosen[0], "model", chosen[1]


async def iter_pages(
    client: LLMClient,
    paragraphs: Iterable[str],
    *,
    min_words: int = 280,
    max_words: int = 600,
    stats: PaginationStats | None = None,
    single_pass: bool = False,
) -> AsyncIterator[Page]:
    """Pages in document order, as soon as each is decided. Counts go into `stats`.

    Page.metadata: paragraph span [paragraph_start, paragraph_end) over the paragraphs as
    paginated (empty ones dropped, ones over `max_words` split first), words, and how the
    pause was chosen ("model", "fallback", "single_label", "no_label", "end").
    With `single_pass` the pause-point call also writes the gist of the page it closes
    (prompts/pagination_gist.md), kept as metadata["gist"]; a page decided without a call
    (or whose gist came back empty) has none and is gisted on its own.
    """
    if not 0 <= min_words <= max_words or max_words < 1:
        raise ValueError(f"need 0 <= min_words <= max_words and max_words >= 1 (got {min_words}, {max_words})")
    stats = stats if stats is not None else PaginationStats()
    source = _split_input(paragraphs, max_words)
    buffer: deque[tuple[str, int]] = deque()
    buffered_words = 0
    exhausted = False
    start = 0  # index of buffer[0] among all paragraphs
    page_index = 0
    previous = ""  # the last paragraph of the previous page, for context

    while True:
        # Hold one paragraph beyond the window, so we know whether the window ends the document.
        while not exhausted and buffered_words <= max_words:
            try:
                item = next(source)
            except StopIteration:
                exhausted = True
                break
            buffer.append(item)
            buffered_words += item[1]
        if not buffer:
            return

        cut, how, gist = 0, "", ""
        n, total, cumulative = 0, 0, []
        for _, w in buffer:
            if n and total + w > max_words:
                break
            n, total = n + 1, total + w
            cumulative.append(total)
        window = [buffer[i][0] for i in range(n)]

        if exhausted and n == len(buffer):
            cut, how = n, "end"
        else:
            labels = [k for k in range(1, n + 1) if cumulative[k - 1] >= min_words]
            if not labels:
                cut, how = n, "no_label"
            elif len(labels) == 1:
                cut, how = labels[0], "single_label"
            else:
                passage = render_window(window, labels, before=previous, after=buffer[n][0])
                cut, how, gist = await _choose(client, passage, labels, stats, single_pass)

        text = "\n\n".join(window[:cut])
        metadata = {"paragraph_start": start, "paragraph_end": start + cut, "words": cumulative[cut - 1], "pause": how}
        if gist:
            metadata["gist"] = gist
        yield Page(page_index, text, metadata)
        previous = window[cut - 1]
        for _ in range(cut):
            buffered_words -= buffer.popleft()[1]
        start += cut
        page_index += 1


async def paginate(
    client: LLMClient,
    paragraphs: Iterable[str],
    *,
    min_words: int = 280,
    max_words: int = 600,
) -> PaginationResult:
    """ReadAgent pagination of `paragraphs` (consumed lazily) into pages of at most `max_words`."""
    result = PaginationResult()  # the stats counted into it as the pages come
    result.pages = [
        page async for page in iter_pages(client, paragraphs, min_words=min_words, max_words=max_words, stats=result)
    ]
    return result


# --- uniform pages (no model) -------------------------------------------------------------------


def iter_pages_uniform(paragraphs: Iterable[str], words_per_page: int = 600) -> Iterator[Page]:
    """Pages of exactly `words_per_page` words (the last may be shorter), cut at word
    boundaries regardless of paragraphs; paragraph breaks inside a page are kept."""
    if words_per_page < 1:
        raise ValueError("words_per_page must be >= 1")
    parts: list[list[str]] = []  # the current page, as paragraphs of words
    count = 0
    index = 0
    word_start = 0

    def page() -> Page:
        return Page(index, "\n\n".join(" ".join(p) for p in parts), {"word_start": word_start, "words": count})

    for paragraph in paragraphs:
        words = paragraph.split()
        offset = 0
        while offset < len(words):
            take = words[offset : offset + words_per_page - count]
            offset += len(take)
            parts.append(take)
            count += len(take)
            if count == words_per_page:
                yield page()
                index, word_start = index + 1, word_start + count
                parts, count = [], 0
    if count:
        yield page()


def paginate_uniform(paragraphs: Iterable[str], words_per_page: int = 600) -> list[Page]:
    return list(iter_pages_uniform(paragraphs, words_per_page))
