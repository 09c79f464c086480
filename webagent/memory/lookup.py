"""Interactive look-up: ReadAgent-P (several pages in one call) and ReadAgent-S (one at a time).

Models answer messily ("I want to look up Page [3, 7] to ...", "pages 3 and 7", "[3]",
"Snippet 10, 12", "STOP", out-of-range or repeated ids). Every reply goes one way: the JSON
the schema asked for, else the text, into a pydantic model (webagent.llm.replies); then
the range checks. An unusable reply — including one that chooses no page at all, since
the prompt asks for 1..k — is re-asked once with the problem stated; if that fails too it
counts as a look-up failure and no (further) page is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, field_validator

from webagent.llm.client import LLMClient, Reply
from webagent.llm.reask import ReplyTally, ask_until_usable
from webagent.llm.replies import read_reply
from webagent.memory.pages import GistMemory
from webagent.prompts import render_prompt


def pages_schema(num_pages: int, max_pages: int) -> dict:
    """1..max_pages page numbers in range, then the reason ("to ..."), as the paper asks."""
    return {
        "type": "object",
        "properties": {
            "pages": {
                "type": "array",
                "items": {"type": "integer", "minimum": 0, "maximum": max(0, num_pages - 1)},
                "minItems": 1,
                "maxItems": max_pages,
            },
            "reason": {"type": "string"},
        },
        "required": ["pages", "reason"],
    }


NEXT_PAGE_SCHEMA = {
    "type": "object",
    "properties": {"stop": {"type": "boolean"}, "page": {"type": "integer"}},
    "required": ["stop", "page"],
}

_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
_AFTER_KEYWORD = re.compile(
    r"\b(?:pages?|snippets?|index(?:es)?|ids?|sections?)\s*[:#]?\s*((?:\d+\s*(?:,|&|\band\b|\bor\b)?\s*)+)",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"-?\d+")
_NONE = re.compile(r"^\W*(none|no pages?|nothing|n/a)\b|\b(?:don't|do not|no) need to (?:look up|read)", re.IGNORECASE)
_STOP = re.compile(r"\bSTOP\b")


class PageChoice(BaseModel):
    """ReadAgent-P's reply: the pages to read again (and why)."""

    model_config = ConfigDict(extra="ignore")
    pages: list[int]
    reason: str = ""

    @field_validator("pages", mode="before")
    @classmethod
    def _ints(cls, value: object) -> object:
        """[3, "7"] → [3, 7]; a list with anything else (true, "page 3") is not page numbers."""
        if isinstance(value, list) and any(isinstance(v, bool) for v in value):
            raise ValueError("page numbers must be integers")
        if isinstance(value, list) and all(
            (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, str) and v.strip().lstrip("-").isdigit())
            for v in value
        ):
            return [int(v) for v in value]
        return value


class NextPage(BaseModel):
    """ReadAgent-S's reply: one page to read next, or stop."""

    model_config = ConfigDict(extra="ignore")
    stop: bool = False
    page: int | None = None


def _numbers_in_text(text: str) -> list[int] | None:
    for m in _BRACKETS.finditer(text):
        nums = [int(n) for n in _NUMBER.findall(m.group(1))]
        if nums:
            return nums
    found: list[int] = []
    for m in _AFTER_KEYWORD.finditer(text):
        found += [int(n) for n in _NUMBER.findall(m.group(1))]
    if found:
        return found
    if re.fullmatch(r"[\s\d,;&and]*", text) and _NUMBER.search(text):
        return [int(n) for n in _NUMBER.findall(text)]
    return None


def _pages_from_text(text: str) -> dict | None:
    if (numbers := _numbers_in_text(text)) is not None:
        return {"pages": numbers}
    if _NONE.search(text):
        return {"pages": []}
    return None


def _next_page_from_text(text: str) -> dict | None:
    if (numbers := _numbers_in_text(text)) is not None:
        return {"page": numbers[0]}
    if _STOP.search(text):
        return {"stop": True}
    return None


@dataclass
class ParsedPages:
    pages: list[int]
    problem: str | None = None  # None when the reply was usable


def parse_pages(reply: Reply, num_pages: int, max_pages: int) -> ParsedPages:
    """Pages to read again: 1..max_pages distinct numbers in range (more are cut to the
    first max_pages). None chosen, or none in range, is a problem."""
    if isinstance(reply.data, list):  # a bare [2, 5]
        reply = Reply(reply.text, {"pages": reply.data}, reply.cached)
    choice, problem = read_reply(reply, PageChoice, _pages_from_text)
    if choice is None:
        return ParsedPages([], problem or "no page numbers found in the reply")
    if not choice.pages:
        return ParsedPages([], f"no page chosen; choose 1 to {max_pages} pages")
    valid: list[int] = []
    for n in choice.pages:
        if 0 <= n < num_pages and n not in valid:
            valid.append(n)
    if not valid:
        return ParsedPages([], f"pages {choice.pages} are not between 0 and {num_pages - 1}")
    return ParsedPages(valid[:max_pages])


def parse_next_page(reply: Reply, num_pages: int, already_read: list[int]) -> tuple[int | None, bool, str | None]:
    """(page, stop, problem) for one ReadAgent-S step."""
    step, problem = read_reply(reply, NextPage, _next_page_from_text)
    if step is None:
        return None, False, problem or "no page number (or STOP) found in the reply"
    if step.stop:
        return None, True, None
    if step.page is None:
        return None, False, "no page number (or STOP) found in the reply"
    if not 0 <= step.page < num_pages:
        return None, False, f"page {step.page} is not between 0 and {num_pages - 1}"
    if step.page in already_read:
        return None, False, f"page {step.page} was already read; choose another page or STOP"
    return step.page, False, None


@dataclass
class LookupResult(ReplyTally):
    """The pages chosen, and the exchange's tally: ``failures`` are replies still unusable
    after the one re-ask (or calls that failed), ``problem`` what was wrong with the last reply."""

    pages: list[int] = field(default_factory=list)


async def lookup_parallel(
    client: LLMClient,
    memory: GistMemory,
    *,
    prompt: str,
    values: dict,
    max_pages: int = 5,
    style: str = "text",
    purpose: str = "lookup",
) -> LookupResult:
    """ReadAgent-P: one call chooses 1..max_pages pages to expand."""
    n = len(memory)
    text = render_prompt(prompt, memory=memory.render(style), max_pages=max_pages, last_index=n - 1, **values)
    result = LookupResult()

    def parse(reply: Reply):
        parsed = parse_pages(reply, n, max_pages)
        return parsed.pages, parsed.problem

    pages = await ask_until_usable(
        client,
        text,
        parse=parse,
        schema=pages_schema(n, max_pages),
        max_tokens=128,
        purpose=purpose,
        tally=result,
        instruction=(
            f'Answer again with "I want to look up Page [...] to ...", naming 1 to {max_pages} '
            f"page numbers between 0 and {n - 1}."
        ),
    )
    result.pages = pages or []
    return result


async def lookup_sequential(
    client: LLMClient,
    memory: GistMemory,
    *,
    prompt: str,
    values: dict,
    max_pages: int = 5,
) -> LookupResult:
    """ReadAgent-S: one page per call, each time with the pages read so far expanded,
    until the model says STOP or max_pages pages are read."""
    n = len(memory)
    result = LookupResult()

    def parse(reply: Reply):
        page, stop, problem = parse_next_page(reply, n, result.pages)
        return (page, stop), problem

    while len(result.pages) < max_pages and len(result.pages) < n:
        text = render_prompt(
            prompt,
            memory=memory.render_text(expanded=result.pages),
            max_pages=max_pages,
            last_index=n - 1,
            already_read=", ".join(map(str, result.pages)) or "none",
            remaining=max_pages - len(result.pages),
            **values,
        )
        step = await ask_until_usable(
            client,
            text,
            parse=parse,
            schema=NEXT_PAGE_SCHEMA,
            max_tokens=48,
            purpose="lookup",
            tally=result,
            instruction=(
                f'Answer again with "Page N" naming one page between 0 and {n - 1} that was not read yet, or "STOP".'
            ),
        )
        if step is None or step[1]:  # unusable twice, or STOP
            return result
        result.pages.append(step[0])
    return result
