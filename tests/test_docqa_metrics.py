"""Metrics on hand-computed cases: option parsing, ROUGE, LLM raters, the report's aggregates."""

import pytest

from webagent.docqa.answering import answer_question, parse_option
from webagent.docqa.data import Question
from webagent.docqa.metrics import rate_answer, rouge, summarize_method
from webagent.llm.testing import fake_client

MC = Question("q1", "Who came?", ("Ann", "Bob", "Cy", "Di"), gold=2)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Answer: (C) Cy", 2),
        ("The answer is B.", 1),
        ("(D)", 3),
        ("A", 0),
        ("I think (C) Cy is right", 2),
        ("answer: d", 3),
    ],
)
def test_parse_option(text, expected):
    assert parse_option(text) == (expected, None)


@pytest.mark.parametrize("text", ["I cannot tell.", "(A) or (B), hard to say", ""])
def test_parse_option_refuses_to_guess(text):
    option, problem = parse_option(text)
    assert option is None and problem


@pytest.mark.parametrize(
    "text,expected",
    [
        ("The answer is a bit unclear, but (C)", 2),  # the English word "a" is not option A
        ("Answer is a bit of a guess: (D) Di", 3),
        ("C) Cy", 2),
        ("I pick B) Bob", 1),
        ("Answer: C", 2),
        ("Answer: (c) Cy", 2),
        ("answer: b.", 1),
        ("The answer is: B", 1),
        ("Answer: D.", 3),
    ],
)
def test_parse_option_letters_in_their_usual_forms(text, expected):
    assert parse_option(text) == (expected, None)


@pytest.mark.parametrize(
    "text",
    [
        "Answer: a tin box full of letters",  # MemWalker's leaf answer in words: no option
        "The answer is a bit unclear.",
    ],
)
def test_the_word_a_is_never_option_a(text):
    option, problem = parse_option(text)
    assert option is None and problem, (text, option)


async def test_unparseable_option_is_reasked_once_then_wrong_never_a_default():
    client = fake_client(["I am not sure.", "Still not sure."])
    out = await answer_question(client, "text", MC)
    assert out.option is None and out.failures == 1 and out.calls == 2
    client = fake_client(["I am not sure.", "Answer: (C) Cy"])
    out = await answer_question(client, "text", MC)
    assert out.option == 2 and out.failures == 0


async def test_multiple_choice_prompt_has_the_options_and_the_paper_wording():
    client = fake_client([{"answer": "B"}])
    out = await answer_question(client, "THE ARTICLE", MC)
    prompt = client.backend.requests[0]["messages"][0]["content"]
    assert prompt.startswith("Read the following article and answer a multiple choice question.")
    assert "THE ARTICLE" in prompt and "(A) Ann\n(B) Bob\n(C) Cy\n(D) Di" in prompt
    assert out.option == 1


def test_rouge_hand_computed():
    # prediction "the cat sat", reference "the cat sat on the mat": unigram overlap 3,
    # P = 3/3, R = 3/6, F = 2PR/(P+R) = 2/3; bigrams: 2 of 2 and 2 of 5 → F = 4/7.
    r = rouge("the cat sat", ["the cat sat on the mat"])
    assert r["rouge1"] == pytest.approx(2 / 3)
    assert r["rouge2"] == pytest.approx(4 / 7)
    assert r["rougeL"] == pytest.approx(2 / 3)


def test_rouge_matches_the_package_with_stemming_and_takes_the_best_reference():
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    pred, refs = "The teams were discussing budgets", ["team discussed the budget", "nothing in common"]
    expected = scorer.score(refs[0], pred)
    got = rouge(pred, refs)
    assert got["rouge1"] == pytest.approx(expected["rouge1"].fmeasure)
    assert got["rougeL"] == pytest.approx(expected["rougeL"].fmeasure)
    # stems: "the team were discuss budget" vs "team discuss the budget": 4 shared, P = 4/5, R = 4/4
    assert got["rouge1"] == pytest.approx(8 / 9)


def _rater(verdicts: dict):
    """Replies by (prompt kind, reference)."""

    def fn(messages, params, purpose):
        text = messages[0]["content"]
        kind = "permissive" if "Yes, partially" in text else "strict"
        ref = text.split("The ground truth answer was:\n\n")[1].split("\n")[0]
        return verdicts[(kind, ref)]

    return fn


async def test_llm_rater_combines_strict_and_permissive_over_references():
    verdicts = {
        ("strict", "r1"): "NO",
        ("permissive", "r1"): "Yes, partially",
        ("strict", "r2"): "NO",
        ("permissive", "r2"): "No",
    }
    rating = await rate_answer(fake_client(_rater(verdicts)), "Q?", "ans", ["r1", "r2"])
    assert rating.rating == "partial" and rating.calls == 4
    verdicts[("permissive", "r2")] = "Yes"  # the permissive rater's exact match counts as exact
    rating = await rate_answer(fake_client(_rater(verdicts)), "Q?", "ans", ["r1", "r2"])
    assert rating.rating == "exact"


async def test_rater_failure_is_counted_and_unrated():
    verdicts = {("strict", "r1"): "maybe", ("permissive", "r1"): "hmm"}
    rating = await rate_answer(fake_client(_rater(verdicts)), "Q?", "ans", ["r1"])
    assert rating.rating is None and rating.failures == 2 and rating.calls == 4


def test_summarize_method_accuracy_and_lr():
    mc = [
        {"gold": 0, "option": 0, "correct": True, "difficult": True},
        {"gold": 1, "option": None, "correct": False, "difficult": True},
        {"gold": 2, "option": 2, "correct": True, "difficult": False},
        {"gold": 3, "option": 0, "correct": False, "difficult": False},
    ]
    s = summarize_method(
        [dict(r, compression_rate=50.0, num_lookups=1, calls=2, failures=int(r["option"] is None)) for r in mc]
    )
    assert s["accuracy"] == 50.0 and s["accuracy_difficult"] == 50.0 and s["unparsed_options"] == 1
    assert s["failures"] == 1 and s["calls_per_question"] == 2
    free = [
        {"gold": None, "rating": "exact", "rouge1": 0.5, "rouge2": 0.1, "rougeL": 0.4},
        {"gold": None, "rating": "partial", "rouge1": 0.1, "rouge2": 0.0, "rougeL": 0.1},
        {"gold": None, "rating": "none", "rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0},
        {"gold": None, "rating": None, "rater_failures": 2, "rouge1": 0.2, "rouge2": 0.0, "rougeL": 0.2},
    ]
    s = summarize_method(free)
    assert s["lr1"] == pytest.approx(100 / 3, abs=0.01) and s["lr2"] == pytest.approx(200 / 3, abs=0.01)
    assert s["rated"] == 3 and s["rater_failures"] == 2 and s["rouge1"] == 20.0


def test_summarize_method_counts_navigation_failures_and_cuts():
    rows = [
        {
            "gold": 0,
            "option": None,
            "correct": False,
            "failures": 1,
            "notes": {"navigation_failed": True, "reverts": 2},
        },
        {"gold": 0, "option": 0, "correct": True, "failures": 0, "notes": {"navigation_failed": False, "reverts": 1}},
        {"gold": 0, "option": 0, "correct": True, "failures": 0, "notes": {"cut": True}},
    ]
    s = summarize_method(rows)
    assert (s["navigation_failures"], s["reverts"], s["cut_to_context"], s["failures"]) == (1, 3, 1, 1)
