"""What a qa-eval run folder holds, as typed rows: OUT/results.jsonl a ``QARow`` per (method,
question), appended as each finishes; OUT/documents.jsonl a ``DocumentRow`` per document, what
building its memory cost. ``LeftForResume`` stands for a question the endpoint failed (no row:
a resume runs it again)."""

from __future__ import annotations

from pydantic import BaseModel

from webagent.results_folder import Row


class QARow(Row):
    """A method on a question: its answer, its context and cost, and its score (multiple
    choice: ``option`` to ``correct``; free-form: ``rouge1`` to ``rater_failures``)."""

    method: str
    doc_id: str
    qid: str
    question: str
    answer: str
    response_words: int
    context_words: int
    full_words: int
    compression_rate: float
    lookups: list[int]
    num_lookups: int
    failures: int
    problem: str | None
    notes: dict
    calls: int
    model_calls: int
    cached_calls: int
    prompt_words: int
    reply_words: int
    prompt_tokens: int
    completion_tokens: int
    gold: int | None
    endpoint_failed: bool  # a call failed because the endpoint was down: not written, run again on resume
    option: int | None = None
    difficult: bool = False
    correct: bool = False
    rouge1: float = 0.0
    rouge2: float = 0.0
    rougeL: float = 0.0
    references: list[str] = []
    rating: str | None = None
    rater_calls: int = 0
    rater_failures: int = 0


class DocumentRow(Row):
    """A document's line in documents.jsonl: what building its memory cost, by kind."""

    doc_id: str
    words: int
    questions: int
    builds: dict[str, dict]


class LeftForResume(BaseModel):
    """A question the endpoint failed (the raters' calls included): not written, run again on resume."""

    problem: str
