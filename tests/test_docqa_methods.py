"""Each method's control flow with scripted fakes, on the same uniform pages."""

from dataclasses import replace

import pytest

from webagent.docqa.data import Document, Question
from webagent.docqa.methods import Variant, parse_methods, runner_for
from webagent.docqa.methods.kv_memory import parse_tool
from webagent.docqa.methods.memwalker import build_tree
from webagent.docqa.methods.readagent import fit_to_budget
from webagent.docqa.methods.summary_tree import TreeBuilder, left_size
from webagent.docqa.options import QAOptions
from webagent.docqa.reading import DocumentState
from webagent.errors import UserError
from webagent.llm.client import Reply
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.memory import Page

# Eight pages of 20 words each; page i talks about topic{i}.
PARAS = [" ".join([f"topic{i}"] + [f"w{i}x{j}" for j in range(19)]) for i in range(8)]
DOC = Document("d1", PARAS, [])
FREE = Question("q", "What about topic5?", references=("topic5 things",))
MC = Question("m", "Which topic?", ("one", "two", "three", "four"), gold=2)
SETTINGS = QAOptions(min_words=10, max_words=20, pagination="uniform", context_words=6000)


def gist_of(messages):
    text = messages[0]["content"]
    return "gist " + text.split("Passage:\n")[1].split()[0]  # "gist topicN"


def client_with(fn):
    def dispatch(messages, params, purpose):
        if purpose == "gist":
            return gist_of(messages)
        return fn(messages, params, purpose)

    return fake_client(FunctionBackend(dispatch))


async def run(client, variant, question=FREE, opts=None, doc=DOC):
    state = DocumentState(client, doc, opts or SETTINGS)
    v = Variant.parse(variant)
    return await runner_for(v.method)(client, state, question, v), client.backend.requests


def prompts(requests, purpose):
    return [
        r["messages"][-1]["content"] if len(r["messages"]) == 1 else r["messages"]
        for r in requests
        if r["purpose"] == purpose
    ]


def test_method_names():
    assert [v.name for v in parse_methods("readagent-p,bm25@2,full", max_pages=3)] == [
        "readagent-p@3",
        "bm25@2",
        "full",
    ]
    assert "memwalker" in [v.name for v in parse_methods("all")]
    for bad in ("nope", "full@3", "bm25@0"):
        with pytest.raises(UserError):
            parse_methods(bad)


async def test_readagent_p_parses_the_lookup_and_expands_those_pages():
    def fn(messages, params, purpose):
        return "I want to look up Page [5, 2] to check." if purpose == "lookup" else "topic5 things"

    result, requests = await run(client_with(fn), "readagent-p@3")
    assert result.lookups == [5, 2] and result.failures == 0
    answer_prompt = prompts(requests, "answer")[0]
    assert PARAS[5] in answer_prompt and PARAS[2] in answer_prompt and PARAS[3] not in answer_prompt
    assert "gist topic3" in answer_prompt
    assert answer_prompt.rstrip().endswith("Your answer should be short and concise.")


async def test_readagent_p_unusable_lookup_is_reasked_then_counted():
    def fn(messages, params, purpose):
        return "hmm, hard to say" if purpose == "lookup" else "an answer"

    result, requests = await run(client_with(fn), "readagent-p@3")
    assert result.lookups == [] and result.failures == 1 and len(prompts(requests, "lookup")) == 2
    assert result.problem == "no PageChoice found in the reply"


async def test_narrativeqa_lookup_by_importance_stops_at_the_budget():
    memory_words = 8 * 2  # eight two-word gists

    def fn(messages, params, purpose):
        if purpose == "lookup":
            assert "in the order of importance" in messages[0]["content"]
            return "I want to look up Page [6, 1, 3] to ..."
        return "ok"

    # Room for the gists and two pages (each page adds 18 words over its gist).
    opts = replace(SETTINGS, context_words=memory_words + 2 * 18, importance_lookup=True)
    result, _ = await run(client_with(fn), "readagent-p@3", opts=opts)
    assert result.lookups == [6, 1] and result.notes["pages_over_budget"] == 1


def test_fit_to_budget_keeps_order_of_importance():
    from webagent.memory import GistMemory

    mem = GistMemory([Page(i, " ".join(["w"] * 10)) for i in range(4)], ["g"] * 4)
    assert fit_to_budget(mem, [3, 0, 1], budget_words=4 + 9 * 2) == [3, 0]


async def test_readagent_s_reads_one_page_at_a_time_until_stop():
    steps = iter(['{"stop": false, "page": 4}', "Page 1", "STOP"])

    def fn(messages, params, purpose):
        return next(steps) if purpose == "lookup" else "ok"

    result, requests = await run(client_with(fn), "readagent-s@5")
    assert result.lookups == [4, 1]
    second = prompts(requests, "lookup")[1]
    assert PARAS[4] in second and PARAS[1] not in second  # page 4 already expanded when choosing the next


async def test_gistmem_answers_from_gists_only():
    result, requests = await run(client_with(lambda m, p, purpose: "ok"), "gistmem")
    prompt = prompts(requests, "answer")[0]
    assert "gist topic7" in prompt and PARAS[7] not in prompt and result.lookups == []
    assert result.context_words == 16


async def test_full_is_cut_to_the_context_and_reported_as_cut():
    opts = replace(SETTINGS, context_words=50)
    result, requests = await run(client_with(lambda m, p, purpose: "ok"), "full", opts=opts)
    assert result.notes["cut"] is True and result.context_words == 50
    result, _ = await run(client_with(lambda m, p, purpose: "ok"), "full")
    assert result.notes["cut"] is False and result.context_words == 160


async def test_truncate_first_and_last():
    _, req = await run(client_with(lambda m, p, purpose: "ok"), "truncate-first@25")
    assert "topic0" in prompts(req, "answer")[0] and "topic1 " in prompts(req, "answer")[0]
    assert "topic2" not in prompts(req, "answer")[0]
    _, req = await run(client_with(lambda m, p, purpose: "ok"), "truncate-last@25")
    context = prompts(req, "answer")[0].split("Question:")[0]
    assert context.split() == " ".join(PARAS).split()[-25:]


async def test_bm25_retrieves_the_matching_page():
    result, req = await run(client_with(lambda m, p, purpose: "ok"), "bm25@1")
    assert result.lookups == [5] and PARAS[5] in prompts(req, "answer")[0]


async def test_multiple_choice_goes_through_the_option_parser():
    result, _ = await run(client_with(lambda m, p, purpose: "Answer: (C) three"), "gistmem", question=MC)
    assert result.option == 2


# --- MemWalker ---------------------------------------------------------------------------------


async def test_memwalker_tree_levels():
    client = client_with(lambda m, p, purpose: "a summary")
    state = DocumentState(client, DOC, SETTINGS)
    tree, failures = await build_tree(client, await state.memory(), max_children=3)
    # 8 leaves → 3 summaries (3+3+2) → a root over those 3
    assert failures == 0 and len(tree.nodes) == 8 + 3 + 1
    assert tree.nodes[tree.root]["children"] == [8, 9, 10] and tree.nodes[8]["children"] == [0, 1, 2]


async def test_memwalker_reverts_from_a_wrong_leaf_and_answers_from_another():
    def fn(messages, params, purpose):
        text = messages[-1]["content"]
        if purpose == "memwalker-tree":
            return "a summary"
        if purpose == "memwalker-triage":
            return "Reasoning: the first one.\nAction: 0"
        if purpose == "memwalker-leaf":
            if "topic0" in text:
                return "Reasoning: not here.\nAction: -1"
            return "Reasoning: found it.\nAction: -2\nAnswer: topic1 things"
        raise AssertionError(purpose)

    result, requests = await run(client_with(fn), "memwalker", opts=replace(SETTINGS, max_children=3))
    assert result.answer == "topic1 things" and result.notes["reverts"] == 1
    assert result.lookups == [0, 1] and not result.notes["navigation_failed"] and result.failures == 0
    # after the revert, the parent offers only the unexplored children
    triage = prompts(requests, "memwalker-triage")
    assert "Summary 2" in triage[1] and "Summary 2" not in triage[2]
    leaf1 = prompts(requests, "memwalker-leaf")[1]
    assert "Story background information: a summary" in leaf1  # the working memory of the path


async def test_memwalker_unparseable_replies_end_in_no_answer_and_a_counted_failure():
    def fn(messages, params, purpose):
        return "a summary" if purpose == "memwalker-tree" else "I would like to think about it."

    result, requests = await run(client_with(fn), "memwalker", opts=replace(SETTINGS, max_children=3))
    assert result.answer == "no answer" and result.notes["navigation_failed"] and result.failures == 1
    assert len(prompts(requests, "memwalker-triage")) == 2  # asked, re-asked once, given up


async def test_memwalker_multiple_choice_leaf_answer():
    def fn(messages, params, purpose):
        if purpose == "memwalker-tree":
            return "s"
        if purpose == "memwalker-triage":
            return "Action: 0"
        return "Reasoning: yes\nAction: -2\nAnswer: (C) three"

    result, _ = await run(client_with(fn), "memwalker", question=MC, opts=replace(SETTINGS, max_children=3))
    assert result.option == 2


async def test_memwalker_leaf_answer_in_words_is_not_option_a():
    """MemWalker's leaves answer "Answer: a ...": the article is not option A. An answer in
    words with its option in parentheses is that option; without one it is re-asked."""
    leaf = iter(
        [
            "Reasoning: yes\nAction: -2\nAnswer: a thing numbered three, so (C)",
            "Reasoning: yes\nAction: -2\nAnswer: a third thing",
            "Action: -2\nAnswer: (C)",
        ]
    )

    def fn(messages, params, purpose):
        if purpose == "memwalker-tree":
            return "s"
        if purpose == "memwalker-triage":
            return "Action: 0"
        return next(leaf)

    result, _ = await run(client_with(fn), "memwalker", question=MC, opts=replace(SETTINGS, max_children=3))
    assert result.option == 2
    result, requests = await run(client_with(fn), "memwalker", question=MC, opts=replace(SETTINGS, max_children=3))
    assert result.option == 2 and len(prompts(requests, "memwalker-leaf")) == 2  # re-asked once, then (C)


# --- summary tree ------------------------------------------------------------------------------


def test_left_heavy_split():
    assert [left_size(n) for n in (2, 3, 4, 5, 6, 8, 9)] == [1, 2, 2, 4, 4, 4, 8]


async def test_appending_pages_only_summarizes_the_new_nodes():
    calls = []

    def fn(messages, params, purpose):
        calls.append(messages[0]["content"])
        return f"summary {len(calls)}"

    pages = [Page(i, PARAS[i]) for i in range(8)]
    memo = {}
    five = TreeBuilder(fake_client(FunctionBackend(fn)), memo)
    await five.build(pages[:5])
    assert five.summaries_made == 4  # ((0,1),(2,3)) = 3 summaries, then (that, 4) = 1
    six = TreeBuilder(fake_client(FunctionBackend(fn)), memo)
    nodes, _ = await six.build(pages[:6])
    assert six.summaries_made == 2  # (4,5) and the new root; the left four are reused
    prior = calls[-2].split("<prior_context>")[1].split("</prior_context>")[0]
    assert "summary 3" in prior  # the (4,5) summary had the left subtree's summary as prior context


async def test_summary_tree_refines_the_cut_up_to_the_cap():
    def fn(messages, params, purpose):
        if purpose == "summary-tree":
            return "a summary of some pages"
        if purpose == "summary-tree-cut":
            return "Questions: ... INSUFFICIENT DETAIL 1"
        return "ok"

    result, requests = await run(client_with(fn), "summary-tree", opts=replace(SETTINGS, max_refinements=2))
    assert result.notes["refinements"] == 2 and result.notes["stopped_by_cap"]
    assert result.notes["cut_size"] == 3 and len(prompts(requests, "summary-tree-cut")) == 2
    assert result.failures == 0


async def test_summary_tree_ineligible_choice_is_reasked_then_counted():
    def fn(messages, params, purpose):
        if purpose == "summary-tree":
            return "a summary"
        if purpose == "summary-tree-cut":
            return "INSUFFICIENT DETAIL 7"  # only document 1 (the root) exists
        return "ok"

    result, requests = await run(client_with(fn), "summary-tree")
    assert result.notes["refinements"] == 0 and result.failures == 1
    assert len(prompts(requests, "summary-tree-cut")) == 2


# --- key-value memory --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,call",
    [
        ("[list-keys]", ("list-keys",)),
        ("[read] budget-plan", ("read", "budget-plan")),
        (
            "[write] (budget-plan) They agreed on 12 euros.\nQ3: [EOQ]",
            ("write", "budget-plan", "They agreed on 12 euros."),
        ),
        ("[EOQ]", ("eoq",)),
        ('{"tool": "write", "key": "k", "value": "v"}', ("write", "k", "v")),
    ],
)
def test_parse_tool(text, call):
    import json

    data = json.loads(text) if text.startswith("{") else None
    assert parse_tool(Reply(text, data)) == (call, None)


async def test_kv_memory_tool_calls_build_a_store_shared_by_questions():
    def fn(messages, params, purpose):
        text = messages[-1]["content"]
        if purpose == "kv-read":
            chunk = text.split("Input: (")[1]
            i = int(chunk.split("/")[0])
            transcript = text.rsplit(chunk.split("\n")[0], 1)[1]
            if "Q1:" in transcript and "Q2:" not in transcript:
                return "[list-keys]"
            if "Q2:" in transcript and "Q3:" not in transcript:
                return f"[write] (page-{i}) notes on chunk {i}"
            if "Q3:" in transcript and "Q4:" not in transcript and i == 2:
                return "[read] page-1"
            return "[EOQ]"
        return "ok"

    client = client_with(fn)
    state = DocumentState(client, DOC, SETTINGS)
    v = Variant.parse("kv-memory")
    result = await runner_for("kv-memory")(client, state, FREE, v)
    store = state.built()["kv-memory"].value["store"]
    assert store == {f"page-{i}": f"notes on chunk {i}" for i in range(1, 9)}
    reads = [r["messages"][0]["content"] for r in client.backend.requests if r["purpose"] == "kv-read"]
    assert any("#1: page-1" in t and "Input: (2/8)" in t for t in reads)  # list-keys saw chunk 1's key
    assert any("#3: notes on chunk 1" in t for t in reads)  # read returned the stored value
    answer = [r for r in client.backend.requests if r["purpose"] == "answer"][0]["messages"][0]["content"]
    assert "[page-3]\nnotes on chunk 3" in answer and result.failures == 0 and result.notes["keys"] == 8
    n_reads = len(reads)
    await runner_for("kv-memory")(client, state, MC, v)  # a second question reads nothing again
    assert len([r for r in client.backend.requests if r["purpose"] == "kv-read"]) == n_reads


async def test_kv_memory_that_stores_nothing_is_a_counted_failure():
    def fn(messages, params, purpose):
        return "I don't know how to use tools." if purpose == "kv-read" else "ok"

    result, _ = await run(client_with(fn), "kv-memory-rolling")
    assert result.failures == 1 and result.notes["keys"] == 0 and result.notes["reading_failures"] == 9


@pytest.mark.parametrize("question", [FREE, MC], ids=["free", "multiple-choice"])
async def test_kv_memory_with_an_empty_store_gives_no_answer(question):
    """Nothing answers from nothing: an empty store is "no answer" (as MemWalker's), not a guess
    from the answer prompt that could score (here the model would have said (C), the gold)."""

    def fn(messages, params, purpose):
        if purpose == "kv-read":
            return "[EOQ]"
        return "Answer: (C) three" if purpose == "answer" else "ok"

    result, requests = await run(client_with(fn), "kv-memory", question=question)
    assert result.answer == "no answer" and result.option is None
    assert not prompts(requests, "answer") and result.failures == 1
    assert result.problem == "nothing was written to the store"


# --- memories built on degraded input ------------------------------------------------------------

MEMORIES = ("gistmem", "memwalker", "summary-tree", "kv-memory")


def _paging_model(pagination_ok=True, gists_ok=True):
    """Clean pagination breaks at the first pause; a degraded one gets no usable reply and falls
    back to the last pause (other pages). A degraded gist memory has one empty (fallback) gist."""
    import re

    from webagent.llm.client import ModelCallError
    from webagent.llm.testing import heuristic_reply

    def fn(messages, params, purpose):
        text = messages[-1]["content"]
        if purpose == "pagination":
            if not pagination_ok:  # a failed call (a bad reply would be served again from the reply cache)
                raise ModelCallError("the endpoint refused the pagination prompt")
            labels = [int(n) for n in re.findall(r"⟨(\d+)⟩", text.split("Passage:", 1)[-1])]
            return {"break_point": min(labels), "because": "the first pause"}
        if purpose == "gist":
            return "" if not gists_ok and "topic3" in text else gist_of(messages)
        if purpose == "kv-read":
            return "[EOQ]" if "#1:" in text else "[write] (notes) something about the chunk"
        if purpose == "memwalker-triage":
            return "Action: 0"
        if purpose == "memwalker-leaf":
            return "Action: -2\nAnswer: topic things"
        return heuristic_reply(messages, params, purpose)

    return fn


async def _build_every_memory(fn, cache):
    client = fake_client(FunctionBackend(fn), cache=cache)
    state = DocumentState(client, DOC, QAOptions(min_words=30, max_words=70, pagination="llm", max_children=2))
    for method in MEMORIES:
        await runner_for(method)(client, state, FREE, Variant.parse(method))
    return state


async def test_memories_built_on_degraded_pages_carry_their_failures_and_are_not_cached(tmp_path):
    from webagent.llm.cache import Cache

    cache = Cache(tmp_path / "c.sqlite")
    state = await _build_every_memory(_paging_model(pagination_ok=False), cache)
    built = state.built()
    assert built["pages"].failures > 0
    for kind in ("gists", "memwalker-tree", "summary-tree", "kv-memory"):
        assert built[kind].failures == 0 and built[kind].input_failures >= built["pages"].failures, kind
    assert cache.count("docqa-memory") == 0  # nothing built on the fallback pages is kept

    # The next run paginates cleanly (other pages): every method reads those same pages.
    state = await _build_every_memory(_paging_model(), cache)
    texts = [p.text for p in await state.pages()]
    built = state.built()
    assert [p.text for p in (await state.memory()).pages] == texts
    tree = built["memwalker-tree"].value
    assert [n["summary"] for n in tree.nodes if n["page"] is not None] == (await state.memory()).gists
    leaves = [n["text"] for n in built["summary-tree"].value if n["page"] is not None]
    assert leaves == texts
    assert not any(b.input_failures or b.failures for b in built.values())
    assert cache.count("docqa-memory") == 1 + len(MEMORIES)  # pages, gists, the tree, the summary tree, the store


async def test_a_tree_over_a_fallback_gist_is_not_cached(tmp_path):
    from webagent.llm.cache import Cache

    cache = Cache(tmp_path / "c.sqlite")
    state = await _build_every_memory(_paging_model(gists_ok=False), cache)
    built = state.built()
    assert built["gists"].failures == 1 and built["memwalker-tree"].input_failures == 1
    assert built["summary-tree"].input_failures == 0  # built on the pages alone
    state = await _build_every_memory(_paging_model(), cache)
    built = state.built()
    assert not built["gists"].from_cache and not built["memwalker-tree"].from_cache
    assert built["summary-tree"].from_cache and built["kv-memory"].from_cache
    assert "" not in (await state.memory()).gists
