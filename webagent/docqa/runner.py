"""`webagent qa-eval`: methods × questions with bounded concurrency, results as they finish.

Each finished (method, question) is appended to OUT/results.jsonl at once, so a killed
run resumes without redoing them; OUT/config.json pins the configuration and a changed
one refuses to resume into the same folder. Pages, gists, trees and key-value stores are
built once per document (DocumentState) and shared by all its questions and methods;
what building cost is written per document to OUT/documents.jsonl, apart from the
questions' own cost.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict
from rich import get_console

import webagent.results_folder as results_folder
from webagent.docqa.accounting import CountingClient
from webagent.docqa.data import Document, Question
from webagent.docqa.methods import Variant, runner_for
from webagent.docqa.metrics import rate_answer, rouge
from webagent.docqa.options import QAOptions
from webagent.docqa.reading import DocumentState
from webagent.docqa.rows import DocumentRow, LeftForResume, QARow
from webagent.evaluation import Evaluator, Item, backend, evaluate
from webagent.llm.client import EndpointUnavailable, LLMClient
from webagent.memory import compression_rate, word_count
from webagent.prompts import load_prompt, prompt_hash
from webagent.results_folder import ResultsFolder, cut_torn_tail

RESULTS_FILE = "results.jsonl"
DOCS_FILE = "documents.jsonl"
CONFIG_FILE = results_folder.CONFIG_FILE


class QAConfig(BaseModel):
    """What decides a qa-eval's results (pinned in OUT/config.json)."""

    model_config = ConfigDict(extra="forbid")
    dataset: str
    data: str
    methods: list[str]
    model: str
    # every document-QA option, whole (a folder of before they were one model has none: refused as older)
    reading: QAOptions
    prompts: dict  # prompt file hashes: an edited prompt is another configuration
    split: str | None = None  # NarrativeQA: the split read (valid, test, train)


def results(out: Path) -> ResultsFolder[QAConfig]:
    """A qa-eval results folder (``webagent.results_folder``): a row per (method, question), written
    only when it finished (a question the endpoint failed is left for a resume)."""
    return ResultsFolder(
        out,
        QAConfig,
        QARow,
        key=lambda row: (row.method, row.qid),
        rows_file=RESULTS_FILE,
        what="a qa-eval run",
        finished=lambda row: True,
    )


def make_config(
    dataset: str,
    data: str,
    variants: list[Variant],
    model: str,
    options: QAOptions,
    split: str | None = None,
) -> QAConfig:
    import importlib.resources

    names = sorted(
        p.name[:-3]
        for p in importlib.resources.files("webagent_prompts").iterdir()
        if p.name.endswith(".md") and not p.name.startswith("web_")
    )
    return QAConfig(
        dataset=dataset,
        data=data,
        methods=[v.name for v in variants],
        model=model,
        reading=options,
        prompts={n: prompt_hash(n) for n in names if load_prompt(n)},
        split=split,
    )


def read_jsonl(path: Path) -> list[dict]:
    """Rows of a JSONL file; a torn last line (a run killed mid-write) is dropped."""
    if not path.exists():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def merge(shards: list[Path], out: Path) -> int:
    """Join shard folders of one configuration into ``out`` (their rows, and each document's
    building cost once); returns the row count."""
    n = results_folder.merge(shards, out, results(out))
    documents = {row["doc_id"]: row for shard in shards for row in read_jsonl(shard / DOCS_FILE)}
    (out / DOCS_FILE).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in documents.values()))
    return n


def select(documents: list[Document], limit: int | None, shard: tuple[int, int]) -> list[Document]:
    """Every n-th document for shard i/n, then the first `limit` questions of those."""
    chosen, left = [], sys.maxsize if limit is None else limit
    for doc in results_folder.shard(documents, *shard):
        if left <= 0:
            break
        qs = doc.questions[:left]
        left -= len(qs)
        chosen.append(Document(doc.doc_id, doc.paragraphs, list(qs)))
    return chosen


async def run_question(
    client: LLMClient,
    state: DocumentState,
    question: Question,
    variant: Variant,
    rate: bool = True,
) -> QARow:
    counting = CountingClient(client)
    result = await runner_for(variant.method)(counting, state, question, variant)
    full_words = state.doc.words
    row = QARow(
        method=variant.name,
        doc_id=state.doc.doc_id,
        qid=question.qid,
        question=question.text,
        answer=result.answer,
        response_words=word_count(result.answer),
        context_words=result.context_words,
        full_words=full_words,
        compression_rate=round(compression_rate(full_words, result.context_words), 2),
        lookups=result.lookups,
        num_lookups=len(result.lookups),
        failures=result.failures,
        problem=result.problem,
        notes=result.notes,
        **counting.counts(),
        gold=question.gold,
        endpoint_failed=counting.endpoint_failed,
    )
    if question.multiple_choice:
        row.option, row.difficult = result.option, question.difficult
        row.correct = result.option is not None and result.option == question.gold
    else:
        for name, value in rouge(result.answer, question.references).items():
            setattr(row, name, value)
        row.references = list(question.references)
        if rate:
            rating = await rate_answer(client.scoped(), question.text, result.answer, question.references)
            row.rating, row.rater_calls, row.rater_failures = rating.rating, rating.calls, rating.failures
            row.endpoint_failed = row.endpoint_failed or rating.endpoint_failed
    return row


def _document_row(state: DocumentState) -> DocumentRow:
    return DocumentRow(
        doc_id=state.doc.doc_id,
        words=state.doc.words,
        questions=len(state.doc.questions),
        builds={
            k: {"failures": b.failures, "input_failures": b.input_failures, "from_cache": b.from_cache, **b.usage}
            for k, b in state.built().items()
        },
    )


QARows = QARow | DocumentRow | LeftForResume  # what a document gives, as its questions finish
DocumentQuestions = Item[tuple[Document, list[tuple[Question, Variant]]]]  # a document's questions (pending ones)


class QAEval(Evaluator[tuple[Document, list[tuple[Question, Variant]]], tuple, QARows]):
    """qa-eval's documents: each document's pending questions one item, in a worker that builds
    its memory once for them (``DocumentState``), sharing it by all its questions and methods;
    its rows are the questions' rows as each finishes, a ``LeftForResume`` for each question the
    endpoint failed, and last the document's row (for documents.jsonl). On Ray the workers open
    the --gist-model's endpoint (``memory``) themselves."""

    config: QAConfig
    noun = "documents"
    traces = False

    def __init__(self, config: QAConfig, documents: list[Document], variants: list[Variant], rate: bool):
        self.config, self.rate = config, rate  # the options: config.reading
        self.documents = [
            Item(d.doc_id, f"document {d.doc_id}", (d, [(q, v) for q in d.questions for v in variants]))
            for d in documents
        ]
        self.memory: Any = None  # the --gist-model's endpoint for a Ray worker (None: the model's)
        self.memory_client: LLMClient | None = None  # a serial run's --gist-model client
        self.progress: Callable[[str], None] | None = None  # a serial run's lines on building documents

    def __getstate__(self) -> dict:  # a Ray worker gets none of the driver's clients
        return {**self.__dict__, "memory_client": None, "progress": None}

    results = staticmethod(results)

    def plan(self) -> list[DocumentQuestions]:
        return self.documents

    def pending(self, items: list[DocumentQuestions], done: set[Hashable]) -> list[DocumentQuestions]:
        left = [(item, [(q, v) for q, v in item.of[1] if (v.name, q.qid) not in done]) for item in items]
        return [Item(item.key, item.label, (item.of[0], todo)) for item, todo in left if todo]

    @contextlib.asynccontextmanager
    async def worker(self, client, remote: bool):
        async with self.open_model(self.memory if remote else None) as memory:
            yield client, memory if remote else self.memory_client

    def clients(self, held: tuple) -> tuple:
        return held[1:]

    async def run_rows(self, worker: tuple, item: DocumentQuestions, trace: Path | None, emit) -> None:
        (client, memory_client), (doc, todo) = worker, item.of
        state = DocumentState(client, doc, self.config.reading, memory_client=memory_client, progress=self.progress)

        async def one(q: Question, v: Variant) -> None:
            # A call that failed because the endpoint was down (the raters' included) is the
            # endpoint's fault, not the method's.
            try:
                row = await run_question(client, state, q, v, rate=self.rate)
            except EndpointUnavailable as exc:
                emit(LeftForResume(problem=str(exc)))
                return
            emit(row if not row.endpoint_failed else LeftForResume(problem=str(row.problem)))

        await asyncio.gather(*(one(q, v) for q, v in todo))
        emit(_document_row(state))

    def error_rows(self, item: DocumentQuestions, trace: Path | None, why: str) -> list[QARows]:
        return [LeftForResume(problem=why) for _ in item.of[1]]

    def item_outcome(self, rows: list[QARows]) -> str:
        left = sum(isinstance(r, LeftForResume) for r in rows)
        answered = sum(isinstance(r, QARow) for r in rows)
        return f"{answered} questions answered" + (f", {left} left for a resume" if left else "")

    def failed(self, row: QARows) -> bool:
        return isinstance(row, LeftForResume)


async def run_eval(
    client: LLMClient,
    documents: list[Document],
    variants: list[Variant],
    out: Path,
    config: QAConfig,
    *,
    doc_concurrency: int = 2,
    say: Callable[[str], None] | None = None,
    rate: bool = True,
    memory_client: LLMClient | None = None,
    cluster=None,
    endpoint=None,
) -> dict:
    """`memory_client` (--gist-model) builds every document's pages and gists. `cluster`: a
    connected Ray (``webagent.cluster``) runs each document's pending questions instead, in a
    worker, on `endpoint` (the run's ``EndpointOptions``). `say` takes the Ray driver's progress
    lines (the command gives ``cli_common.status``); without it the run is quiet, no bar either."""
    evaluator = QAEval(config, documents, variants, rate)
    folder = results(out)
    folder.pin(config)
    cut_torn_tail(out / DOCS_FILE)
    done = folder.done()
    total = sum(len(doc.questions) * len(variants) for doc in documents)
    resumed = total - sum(len(item.of[1]) for item in evaluator.pending(evaluator.plan(), done))
    console = get_console()  # the bar's (stdout): its lines and the documents' progress go there too

    def print_here(line: str) -> None:
        console.print(f"… {line}")

    if cluster is None:
        evaluator.memory_client, evaluator.progress = memory_client, None if say is None else print_here
    elif memory_client is not None:
        from webagent.cluster import worker_endpoint

        evaluator.memory = worker_endpoint(endpoint, memory_client)
    endpoint_failures = [0]
    folder.rows_path.touch()  # the report reads it even when no question finished
    with (
        open(out / DOCS_FILE, "a", encoding="utf-8") as doc_sink,
        results_folder.progress(
            "qa-eval", total, resumed, "method-questions", None if say is None else print_here
        ) as advance,
    ):
        finished = [resumed]

        def on_row(row: QARows) -> bool:
            """A question's row is written (the bar advances); a document's goes to documents.jsonl."""
            if isinstance(row, QARow):
                finished[0] = advance()
                return True
            if isinstance(row, DocumentRow):
                doc_sink.write(row.to_line())
                doc_sink.flush()
            else:
                endpoint_failures[0] += 1
                if endpoint_failures[0] == 1:
                    print_here(f"endpoint failure, question left for a resume: {row.problem}")
            return False

        on = backend(client, cluster, endpoint, concurrency=doc_concurrency)
        await evaluate(evaluator, out, on, say=say if cluster is not None else None, on_row=on_row)
    return {
        "planned": total,
        "resumed": resumed,
        "ran": finished[0] - resumed,
        "endpoint_failures": endpoint_failures[0],
    }
