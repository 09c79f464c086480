import random
import re
import tracemalloc
from pathlib import Path

import pytest

from webagent.llm.client import BackendReply, LLMClient, ModelCallError, Reply
from webagent.llm.testing import ScriptedBackend, fake_client
from webagent.text import (
    PaginationStats,
    iter_pages,
    iter_pages_uniform,
    iter_paragraphs,
    paginate,
    paginate_uniform,
    parse_label,
)

FIXTURE = Path(__file__).parent / "fixtures" / "text" / "qmsum_meeting_excerpt.txt"
LABEL = re.compile(r"⟨(\d+)⟩")


def words(text: str) -> int:
    return len(text.split())


def offered(messages) -> list[int]:
    """Labels in the passage (the instructions' examples are numbers not offered)."""
    return [int(n) for n in LABEL.findall(messages[0]["content"].split("Passage:", 1)[1])]


def passage_parts(prompt: str) -> list[str]:
    """The window's paragraphs and labels, without the '...' context around them."""
    passage = prompt.split("Passage:\n\n", 1)[1].rstrip("\n")
    parts = passage.split("\n\n")
    if parts[0].startswith("... "):
        parts = parts[1:]
    if parts[-1].endswith(" ..."):
        parts = parts[:-1]
    return parts


def page_paragraphs(pages) -> list[str]:
    return [p for page in pages for p in page.text.split("\n\n")]


@pytest.fixture
def paragraphs():
    return list(iter_paragraphs(FIXTURE))


# --- the paper's algorithm ----------------------------------------------------------------------


async def test_pages_cover_the_text_exactly_in_order(paragraphs):
    rng = random.Random(7)
    client = fake_client(lambda messages, params, purpose: {"label": rng.choice(offered(messages))})
    result = await paginate(client, paragraphs)
    assert page_paragraphs(result.pages) == paragraphs
    assert [p.index for p in result.pages] == list(range(len(result.pages)))
    assert all(p.words <= 600 for p in result.pages)
    assert all(p.words >= 280 for p in result.pages[:-1] if p.metadata["pause"] in ("model", "single_label"))
    spans = [(p.metadata["paragraph_start"], p.metadata["paragraph_end"]) for p in result.pages]
    assert spans[0][0] == 0 and spans[-1][1] == len(paragraphs)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert result.calls == len(client.backend.requests) > 3
    assert result.fallbacks == 0
    assert {r["purpose"] for r in client.backend.requests} == {"pagination"}


async def test_labels_are_offered_only_after_min_words(paragraphs):
    client = fake_client(lambda messages, params, purpose: {"label": offered(messages)[-1]})
    await paginate(client, paragraphs, min_words=280, max_words=600)
    assert client.backend.requests
    for request in client.backend.requests:
        parts = passage_parts(request["messages"][0]["content"])
        seen, first_label_at = 0, None
        labels = []
        for part in parts:
            m = LABEL.fullmatch(part)
            if m:
                labels.append(int(m.group(1)))
                first_label_at = seen if first_label_at is None else first_label_at
            else:
                seen += words(part)
        window_paragraphs = [p for p in parts if not LABEL.fullmatch(p)]
        assert first_label_at is not None and first_label_at >= 280
        # ...and it is the first position that has min_words before it
        before_first = parts[: parts.index(f"⟨{labels[0]}⟩") - 1]
        assert sum(words(p) for p in before_first if not LABEL.fullmatch(p)) < 280
        assert seen <= 600
        assert labels == list(range(labels[0], len(window_paragraphs) + 1))  # ⟨k⟩ after the k-th paragraph
        assert (
            request["params"]["response_format"]["json_schema"]["schema"]["properties"]["break_point"]["enum"] == labels
        )


@pytest.mark.parametrize(
    "style", ['{"label": %d}', "⟨%d⟩", "<%d>", "Break point: <%d>", "label %d", "%d", '```json\n{"label": "%d"}\n```']
)
async def test_the_chosen_label_is_honoured(paragraphs, style):
    chosen = []

    def first_label(messages, params, purpose):
        chosen.append(offered(messages)[0])
        return style % chosen[-1]

    result = await paginate(fake_client(first_label), paragraphs)
    model_pages = [p for p in result.pages if p.metadata["pause"] == "model"]
    assert len(model_pages) == len(chosen) > 0
    for page, label in zip(model_pages, chosen):
        assert page.metadata["paragraph_end"] - page.metadata["paragraph_start"] == label
    assert result.fallbacks == 0
    assert page_paragraphs(result.pages) == paragraphs


async def test_garbage_replies_fall_back_to_the_last_label_after_one_reask(paragraphs):
    lasts = []

    def garbage(messages, params, purpose):
        if len(messages) == 1:
            lasts.append(offered(messages)[-1])
        return "I think this passage is about meetings."

    client = fake_client(garbage)
    result = await paginate(client, paragraphs)
    windows = len(lasts)
    assert windows > 0
    assert result.fallbacks == windows
    assert result.calls == 2 * windows  # each window re-asked once
    fallback_pages = [p for p in result.pages if p.metadata["pause"] == "fallback"]
    assert [p.metadata["paragraph_end"] - p.metadata["paragraph_start"] for p in fallback_pages] == lasts
    reask = client.backend.requests[1]["messages"]
    assert [m["role"] for m in reask] == ["user", "assistant", "user"]
    assert "no label number" in reask[2]["content"]
    assert page_paragraphs(result.pages) == paragraphs


async def test_a_label_not_offered_is_reasked_then_falls_back():
    paragraphs = [" ".join(["word"] * 100) + f" p{i}." for i in range(9)]  # 101 words each
    client = fake_client([{"label": 1}, {"label": 999}])  # ⟨1⟩ has < min_words before it; 999 is absurd
    stats = PaginationStats()
    pages = [p async for p in iter_pages(client, paragraphs[:7], min_words=250, max_words=600, stats=stats)]
    # window = 5 paragraphs (505 words; a 6th would make 606); labels ⟨3⟩ ⟨4⟩ ⟨5⟩
    assert offered(client.backend.requests[0]["messages"]) == [3, 4, 5]
    assert "⟨1⟩ is not one of the labels" in client.backend.requests[1]["messages"][2]["content"]
    assert stats.fallbacks == 1 and stats.calls == 2
    assert [p.metadata["paragraph_end"] for p in pages] == [5, 7]
    assert [p.metadata["pause"] for p in pages] == ["fallback", "end"]


async def test_a_failed_call_falls_back_without_reask():
    paragraphs = [" ".join(["word"] * 100) for _ in range(8)]
    client = fake_client([ModelCallError("endpoint down")], max_retries=0)
    result = await paginate(client, paragraphs, min_words=200, max_words=500)
    assert result.fallbacks == 1 and result.calls == 0
    assert [p.words for p in result.pages] == [500, 300]


async def test_short_documents_need_no_calls(paragraphs):
    client = fake_client([])  # any call would fail: the script is empty
    short = await paginate(client, paragraphs[:3])
    assert len(short.pages) == 1 and short.calls == 0 and short.pages[0].metadata["pause"] == "end"
    assert short.pages[0].text == "\n\n".join(paragraphs[:3])
    # exactly max_words in total is still one page
    exact = await paginate(client, ["a " * 300, "b " * 300], max_words=600)
    assert [p.words for p in exact.pages] == [600] and exact.calls == 0
    assert (await paginate(client, [])).pages == []
    assert (await paginate(client, ["", "   "])).pages == []


async def test_windows_without_a_choice_need_no_call():
    client = fake_client([])
    # 200 words, then a 500-word paragraph that does not fit: no label (< min_words) -> a page
    result = await paginate(client, ["a " * 200, "b " * 500, "c " * 50], min_words=280, max_words=600)
    assert [p.words for p in result.pages] == [200, 550]
    assert [p.metadata["pause"] for p in result.pages] == ["no_label", "end"]
    # a single label (the window's end) is taken without asking
    result = await paginate(client, ["a " * 200, "b " * 250, "c " * 200], min_words=280, max_words=600)
    assert [p.words for p in result.pages] == [450, 200]
    assert result.pages[0].metadata["pause"] == "single_label"
    assert result.calls == 0


async def test_a_paragraph_longer_than_max_words_is_split_first():
    long = " ".join(f"Sentence {i} has five words." for i in range(300))  # 1500 words
    client = fake_client(lambda messages, params, purpose: {"label": offered(messages)[-1]})
    result = await paginate(client, [long, "End."], min_words=100, max_words=400)
    assert all(p.words <= 400 for p in result.pages)
    assert " ".join(p.text for p in result.pages).split() == (long + " End.").split()


async def test_the_prompt_shows_context_around_the_window():
    paragraphs = [f"Paragraph {i} " + "text " * 98 for i in range(12)]  # 100 words each
    client = fake_client(lambda messages, params, purpose: {"label": offered(messages)[-1]})
    await paginate(client, paragraphs, min_words=200, max_words=450)
    first, second = (r["messages"][0]["content"] for r in client.backend.requests[:2])
    assert "... Paragraph" not in first  # nothing before the first window
    assert "Paragraph 4 text" in first and first.split("Paragraph 4")[1].split("\n")[0].endswith(" ...")
    assert "... " + " ".join(("text " * 98).split()[-40:]) in second
    assert 'answer with "Break point: ⟨' in first  # the paper's example answer


async def test_iter_pages_consumes_paragraphs_lazily():
    pulled = []

    def source():
        for i in range(1000):
            pulled.append(i)
            yield "w " * 100

    client = fake_client(lambda messages, params, purpose: {"label": offered(messages)[-1]})
    pages = iter_pages(client, source(), min_words=280, max_words=600)
    first = await anext(pages)
    assert first.words == 600
    assert len(pulled) == 7  # the 6-paragraph window plus one look-ahead, not the document
    await pages.aclose()


def test_parse_label_formats():
    labels = [5, 6, 7]
    for text in [
        '{"label": 7}',
        "⟨7⟩",
        "<7>",
        "Break point: <7>",
        "label 7",
        "Label: 7",
        "7",
        " 7.\n",
        "The best pause point is ⟨7⟩ because the topic changes after paragraph 3.",
    ]:
        assert parse_label(text, labels) == (7, None), text
    assert parse_label(Reply(text="", data={"label": 6}), labels) == (6, None)
    assert parse_label(Reply(text="", data={"label": "<6>"}), labels) == (6, None)
    assert parse_label(Reply(text="", data={"label": True}), labels)[0] is None
    assert parse_label("no idea", labels) == (None, "no label number found in the reply")
    assert parse_label("between 5 and 6", labels)[0] is None  # ambiguous
    assert parse_label("⟨2⟩", labels)[1] == "⟨2⟩ is not one of the labels in the passage"


async def test_invalid_word_limits():
    with pytest.raises(ValueError):
        await paginate(fake_client([]), ["x"], min_words=700, max_words=600)


# --- uniform pages (Table 5 ablation) ---------------------------------------------------------------


def test_uniform_pages_have_fixed_size(paragraphs):
    pages = paginate_uniform(paragraphs, words_per_page=600)
    total = sum(words(p) for p in paragraphs)
    assert [p.words for p in pages] == [600] * (total // 600) + ([total % 600] if total % 600 else [])
    assert " ".join(p.text for p in pages).split() == " ".join(paragraphs).split()
    assert [p.index for p in pages] == list(range(len(pages)))
    assert [p.metadata["word_start"] for p in pages] == [600 * i for i in range(len(pages))]
    assert "\n\n" in pages[0].text  # paragraph breaks inside a page are kept


def test_uniform_small_cases():
    assert paginate_uniform([]) == []
    assert [p.text for p in paginate_uniform(["a b c", "d e", "f g h i"], words_per_page=4)] == [
        "a b c\n\nd",
        "e\n\nf g h",
        "i",
    ]
    with pytest.raises(ValueError):
        paginate_uniform(["x"], words_per_page=0)


# --- streaming --------------------------------------------------------------------------------------


def _write_big(path: Path, megabytes: int) -> tuple[int, int]:
    """Writes the file in chunks; returns (bytes, words)."""
    paragraph = ("The meeting went on and on about the recorder. " * 9 + "\n") * 2 + "\n"
    block = paragraph * 500
    written = blocks = 0
    with open(path, "w", encoding="utf-8") as f:
        while written < megabytes * 1024 * 1024:
            f.write(block)
            written, blocks = written + len(block), blocks + 1
    return written, blocks * 500 * len(paragraph.split())


def test_reading_and_uniform_pagination_stream(tmp_path):
    path = tmp_path / "big.txt"
    size, file_words = _write_big(path, 16)  # tracemalloc slows allocation ~15x; 16 MB keeps this ~5 s
    tracemalloc.start()
    try:
        pages = total = 0
        for page in iter_pages_uniform(iter_paragraphs(path), words_per_page=600):
            pages += 1
            total += page.words
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total == file_words
    assert pages == -(-total // 600)
    assert peak < 2 * 1024 * 1024, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.0f} MB file"


class _LastLabelBackend:
    """Always picks the last label; records nothing (FunctionBackend keeps every request)."""

    name = "fake:last-label"
    identity = "fake:last-label"
    description = "fake model (last label)"

    async def chat(self, messages, params, purpose):
        return BackendReply(f'{{"label": {LABEL.findall(messages[-1]["content"])[-1]}}}')

    async def close(self):
        pass


async def test_llm_pagination_streams(tmp_path):
    path = tmp_path / "big.txt"
    size, _ = _write_big(path, 3)
    client = LLMClient(_LastLabelBackend())
    stats = PaginationStats()
    tracemalloc.start()
    try:
        pages = 0
        async for page in iter_pages(client, iter_paragraphs(path), stats=stats):
            assert page.words <= 600
            pages += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert stats.calls > 500 and stats.fallbacks == 0 and pages == stats.calls + 1
    assert peak < 1024 * 1024 < size / 3, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.0f} MB file"


async def test_a_good_answer_to_the_reask_is_used():
    paragraphs = [" ".join(["word"] * 99) + f" p{i}" for i in range(8)]  # 100 words each
    client = fake_client(ScriptedBackend(['{"label": 999}', "Break point: <4>"]))
    result = await paginate(client, paragraphs, min_words=250, max_words=600)
    assert offered(client.backend.requests[0]["messages"]) == [3, 4, 5, 6]
    assert result.calls == 2 and result.fallbacks == 0
    assert [(p.metadata["paragraph_start"], p.metadata["paragraph_end"]) for p in result.pages] == [(0, 4), (4, 8)]
    assert [p.metadata["pause"] for p in result.pages] == ["model", "end"]


async def test_the_examples_in_the_prompt_are_labels_not_offered():
    """A model that copies the example answer must be caught, not take a real label."""
    paragraphs = [" ".join(["word"] * 99) + f" p{i}" for i in range(80)]  # labels up to ⟨6x⟩ offered
    seen = []

    def copy_the_example(messages, params, purpose):
        prompt = messages[-1]["content"] if len(messages) == 1 else messages[0]["content"]
        example = re.search(r'answer with "Break point: ⟨(\d+)⟩', prompt).group(1)
        seen.append((int(example), offered(messages)))
        return f"Break point: ⟨{example}⟩\n Because it is the example."

    client = fake_client(copy_the_example)
    result = await paginate(client, paragraphs, min_words=100, max_words=6000)
    assert seen and all(example not in labels for example, labels in seen)
    assert result.fallbacks >= 1 and result.fallbacks == sum(
        1 for p in result.pages if p.metadata["pause"] == "fallback"
    )
