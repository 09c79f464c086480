"""Scores: QuALITY accuracy, ROUGE F-measures (rouge-score, stemming on, best over the
references) and the paper's LLM raters (section 4.1).

LLM rating of one answer: for each reference, the strict rater (YES/NO) and the
permissive rater (Yes / Yes, partially / No) are asked; "exact" when either says an
exact match, "partial" when the strict says no and the permissive says partially,
else "none"; the best over the references counts. LR-1 = share of exact, LR-2 = share
of exact or partial. A rater reply that stays unusable after the re-ask is a counted
rater failure; a question whose every rating failed is left unrated (not scored as wrong),
and the report says how many questions each method had scored. A rater call lost to the
endpoint (down through every retry) is not a rating: the question is run again on resume.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from functools import lru_cache, partial

from webagent.llm.client import LLMClient, Reply
from webagent.llm.reask import ReplyTally, ask_until_usable
from webagent.prompts import render_prompt

RATINGS = ("none", "partial", "exact")
STRICT_SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": ["YES", "NO"]}},
    "required": ["verdict"],
}
PERMISSIVE_SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": ["Yes", "Yes, partially", "No"]}},
    "required": ["verdict"],
}


@lru_cache(maxsize=1)
def _scorer():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)


def rouge(prediction: str, references: list[str] | tuple[str, ...]) -> dict[str, float]:
    """ROUGE-1/2/L F-measure (0..1), each the best over the references."""
    best = {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
    for ref in references:
        scores = _scorer().score(ref, prediction)
        for k in best:
            best[k] = max(best[k], scores[k].fmeasure)
    return best


def _verdict_text(reply: Reply) -> str:
    if isinstance(reply.data, dict) and isinstance(reply.data.get("verdict"), str):
        return reply.data["verdict"]
    return reply.text


def parse_strict(reply: Reply) -> tuple[bool | None, str | None]:
    words = re.findall(r"\b(yes|no)\b", _verdict_text(reply), re.IGNORECASE)
    if not words:
        return None, "no YES or NO in the reply"
    return words[0].lower() == "yes", None


def parse_permissive(reply: Reply) -> tuple[str | None, str | None]:
    text = _verdict_text(reply)
    m = re.search(r"\b(yes\s*,?\s*partially|partially|yes|no)\b", text, re.IGNORECASE)
    if not m:
        return None, 'no "Yes", "Yes, partially" or "No" in the reply'
    word = m.group(1).lower()
    return ("partial" if "partial" in word else "exact" if word == "yes" else "none"), None


@dataclass
class Rating(ReplyTally):  # endpoint_failed: a rater call failed because the endpoint was down: rate again later
    rating: str | None = None  # "exact" | "partial" | "none"; None when every rater call failed


async def rate_answer(client: LLMClient, question: str, answer: str, references: list[str] | tuple[str, ...]) -> Rating:
    tally = Rating()
    rater = partial(ask_until_usable, client, max_tokens=16, purpose="rater", tally=tally)

    async def one(reference: str) -> str | None:
        values = {"question": question, "answer": answer or "(no answer)", "reference": reference}
        strict, permissive = await asyncio.gather(
            rater(
                render_prompt("rater_strict", **values),
                parse=parse_strict,
                schema=STRICT_SCHEMA,
                instruction="Answer again with YES or NO only.",
            ),
            rater(
                render_prompt("rater_permissive", **values),
                parse=parse_permissive,
                schema=PERMISSIVE_SCHEMA,
                instruction='Answer again with "Yes", "Yes, partially" or "No" only.',
            ),
        )
        if strict is True or permissive == "exact":
            return "exact"
        if permissive == "partial":
            return "partial"
        if strict is None and permissive is None:
            return None
        return "none"

    found = await asyncio.gather(*(one(r) for r in references))
    rated = [r for r in found if r is not None]
    tally.rating = max(rated, key=RATINGS.index) if rated else None
    return tally


def percent(part: int, whole: int) -> float | None:
    return None if whole == 0 else round(100.0 * part / whole, 2)


def summarize_method(rows: list[dict]) -> dict:
    """One method's row of the report from its per-question results."""
    n = len(rows)
    out: dict = {"questions": n}
    mc = [r for r in rows if r.get("gold") is not None]
    if mc:
        out["scored"] = len(mc)  # an unparsed option is scored as wrong
        out["accuracy"] = percent(sum(r["correct"] for r in mc), len(mc))
        hard = [r for r in mc if r.get("difficult")]
        out["accuracy_difficult"] = percent(sum(r["correct"] for r in hard), len(hard))
        out["difficult_questions"] = len(hard)
        out["unparsed_options"] = sum(r.get("option") is None for r in mc)
    free = [r for r in rows if r.get("gold") is None]
    if free:
        for k in ("rouge1", "rouge2", "rougeL"):
            vals = [r[k] for r in free if r.get(k) is not None]
            out[k] = None if not vals else round(100 * sum(vals) / len(vals), 2)
        rated = [r for r in free if r.get("rating") is not None]
        out["rated"] = len(rated)
        out["scored"] = len(rated)
        out["lr1"] = percent(sum(r["rating"] == "exact" for r in rated), len(rated))
        out["lr2"] = percent(sum(r["rating"] in ("exact", "partial") for r in rated), len(rated))
        out["rater_failures"] = sum(r.get("rater_failures", 0) for r in free)
    for k, src in (
        ("compression_rate", "compression_rate"),
        ("lookups", "num_lookups"),
        ("response_words", "response_words"),
        ("calls_per_question", "calls"),
        ("prompt_words_per_question", "prompt_words"),
        ("reply_words_per_question", "reply_words"),
        ("prompt_tokens_per_question", "prompt_tokens"),
        ("completion_tokens_per_question", "completion_tokens"),
    ):
        vals = [r[src] for r in rows if r.get(src) is not None]
        out[k] = None if not vals else round(sum(vals) / len(vals), 2)
    notes = [r.get("notes") or {} for r in rows]
    out["cut_to_context"] = sum(bool(n.get("cut")) for n in notes)
    out["navigation_failures"] = sum(bool(n.get("navigation_failed")) for n in notes)
    out["reverts"] = sum(n.get("reverts", 0) for n in notes)
    out["refinement_cap_hit"] = sum(bool(n.get("stopped_by_cap")) for n in notes)
    out["failures"] = sum(r.get("failures", 0) for r in rows)
    out["questions_with_failures"] = sum(1 for r in rows if r.get("failures", 0))
    return out
