import json

import pytest

from webagent.llm.client import ModelCallError, Reply
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.memory import (
    GistMemory,
    Page,
    build_memory,
    compression_rate,
    lookup_parallel,
    lookup_sequential,
    parse_next_page,
    parse_pages,
)


def memory(n=10):
    pages = [Page(i, f"full text of page {i} " + "word " * 20) for i in range(n)]
    return GistMemory(pages, [f"gist {i}" for i in range(n)])


@pytest.mark.parametrize(
    "text,data,expected",
    [
        ("I want to look up Page [3, 7] to check", None, [3, 7]),
        ("pages 3 and 7", None, [3, 7]),
        ("[3]", None, [3]),
        ("I want to look up Snippet 10, 12, 13", None, [10, 12, 13]),
        ('{"pages": [2, 2, 5]}', {"pages": [2, 2, 5]}, [2, 5]),  # repeated ids dropped
        ('{"pages": ["4"]}', {"pages": ["4"]}, [4]),
        ("Page [3, 99]", None, [3]),  # out-of-range id dropped
        ("Look up page 1, 2, 3, 4, 5, 6, 7", None, [1, 2, 3, 4, 5]),  # capped at max_pages
    ],
)
def test_parse_pages_tolerates_messy_replies(text, data, expected):
    parsed = parse_pages(Reply(text, data), num_pages=14, max_pages=5)
    assert parsed.problem is None and parsed.pages == expected


@pytest.mark.parametrize(
    "text,data",
    [
        ("I am not sure what to read.", None),
        ("Page [40, 41]", None),
        ("", None),
        # Choosing nothing is not a look-up: the prompt asks for 1..k (else ReadAgent-P silently becomes GistMem).
        ("none", None),
        ("I don't need to look up any pages.", None),
        ('{"pages": []}', {"pages": []}),
        ('{"pages": [true]}', {"pages": [True]}),
    ],
)
def test_parse_pages_reports_unusable_replies(text, data):
    parsed = parse_pages(Reply(text, data), num_pages=10, max_pages=5)
    assert parsed.problem and parsed.pages == []


async def test_an_empty_lookup_is_reasked_then_counted_as_a_failure():
    client = fake_client(['{"pages": [], "reason": "nothing needed"}', "I don't need to look up any pages."])
    result = await lookup_parallel(client, memory(), prompt="lookup_parallel", values={"question": "q?"})
    assert result.pages == [] and result.failures == 1 and result.calls == 2
    assert "no page chosen" in client.backend.requests[1]["messages"][2]["content"]


def test_parse_next_page():
    assert parse_next_page(Reply('{"stop": true, "page": -1}', {"stop": True, "page": -1}), 5, []) == (None, True, None)
    assert parse_next_page(Reply("STOP", None), 5, []) == (None, True, None)
    assert parse_next_page(Reply('{"stop": false, "page": 2}', {"stop": False, "page": 2}), 5, []) == (2, False, None)
    assert parse_next_page(Reply("Page 3 please", None), 5, [])[0] == 3
    page, stop, problem = parse_next_page(Reply("Page 3", None), 5, [3])
    assert page is None and "already read" in problem
    assert "not between" in parse_next_page(Reply("[9]", None), 5, [])[2]


def test_render_forms_and_expansion_in_place():
    m = memory(3)
    text = m.render_text(expanded=[1])
    assert text.index("<Page 0>\ngist 0") < text.index("<Page 1>\nfull text of page 1") < text.index("<Page 2>\ngist 2")
    lines = [json.loads(line) for line in m.render_indexed(expanded=[2]).splitlines()]
    assert [d["index"] for d in lines] == [0, 1, 2]
    assert lines[0]["content"] == "gist 0" and lines[2]["content"].startswith("full text of page 2")
    assert GistMemory.from_dict(m.to_dict()).render_text() == m.render_text()


def test_compression_rate_paper_definition():
    assert compression_rate(1000, 250) == 75.0
    assert compression_rate(0, 10) == 0.0


async def test_build_memory_gists_every_page_concurrently_with_fallback():
    def fn(messages, params, purpose):
        text = messages[0]["content"]
        if "page 2 " in text:
            raise ModelCallError("down")
        if "page 3 " in text:
            return "   "
        return "short: " + text.split("Passage:\n")[1].split()[4]

    client = fake_client(FunctionBackend(fn))
    pages = [Page(i, f"full text of page {i} and more words") for i in range(5)]
    mem, failures = await build_memory(client, pages)
    assert mem.gists[0] == "short: 0" and mem.gists[4] == "short: 4"
    assert mem.gists[2].startswith("full text of page 2") and mem.gists[3].startswith("full text of page 3")
    assert failures == 2


async def test_conditional_gist_uses_the_task():
    backend = FunctionBackend(lambda m, p, purpose: "g")
    await build_memory(fake_client(backend), [Page(0, "text")], task="find the budget")
    assert "find the budget" in backend.requests[0]["messages"][0]["content"]


async def test_lookup_parallel_reasks_once_then_succeeds():
    client = fake_client(["I would like to read some pages.", '{"pages": [4, 1]}'])
    result = await lookup_parallel(client, memory(), prompt="lookup_parallel", values={"question": "q?"}, max_pages=3)
    assert result.pages == [4, 1] and result.calls == 2 and result.failures == 0
    reask = client.backend.requests[1]["messages"]
    assert reask[1]["content"] == "I would like to read some pages." and "could not be used" in reask[2]["content"]


async def test_lookup_parallel_counts_failure_and_falls_back_to_no_pages():
    client = fake_client(["hmm", "still nothing"])
    result = await lookup_parallel(client, memory(), prompt="lookup_parallel", values={"question": "q?"})
    assert result.pages == [] and result.failures == 1 and result.calls == 2


async def test_lookup_sequential_reads_until_stop_and_refuses_repeats():
    client = fake_client(
        ['{"stop": false, "page": 2}', '{"stop": false, "page": 2}', '{"stop": false, "page": 6}', "STOP"]
    )
    result = await lookup_sequential(
        client, memory(), prompt="lookup_sequential", values={"question": "q?"}, max_pages=5
    )
    assert result.pages == [2, 6] and result.calls == 4 and result.failures == 0
    third_prompt = client.backend.requests[2]["messages"]
    assert "already read" in third_prompt[-1]["content"]
    # the next step shows the page read so far in full, in place
    fourth = client.backend.requests[3]["messages"][0]["content"]
    assert "<Page 2>\nfull text of page 2" in fourth and "<Page 6>\nfull text of page 6" in fourth
    assert "Pages re-read already (DO NOT ask to read them again): 2, 6" in fourth


async def test_lookup_sequential_stops_at_max_pages():
    client = fake_client([f'{{"stop": false, "page": {i}}}' for i in range(3)])
    result = await lookup_sequential(
        client, memory(), prompt="lookup_sequential", values={"question": "q"}, max_pages=3
    )
    assert result.pages == [0, 1, 2] and result.calls == 3
