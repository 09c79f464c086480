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
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict
from rich import get_console

import webagent.results_folder as results_folder
from webagent.docqa.accounting import CountingClient
from webagent.docqa.data import Document, Question
from webagent.docqa.methods import Variant, runner_for
from webagent.docqa.metrics import rate_answer, rouge
from webagent.docqa.options import QAOptions
from webagent.docqa.reading import DocumentState
from webagent.evaluation import Evaluator, Item, Progress, backend
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
        key=lambda row: (row["method"], row["qid"]),
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
    documents: dict[str, dict] = {}
    for shard in shards:
        for row in read_jsonl(shard / DOCS_FILE):
            documents[row["doc_id"]] = row
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
) -> dict:
    counting = CountingClient(client)
    result = await runner_for(variant.method)(counting, state, question, variant)
    full_words = state.doc.words
    row = {
        "method": variant.name,
        "doc_id": state.doc.doc_id,
        "qid": question.qid,
        "question": question.text,
        "answer": result.answer,
        "response_words": word_count(result.answer),
        "context_words": result.context_words,
        "full_words": full_words,
        "compression_rate": round(compression_rate(full_words, result.context_words), 2),
        "lookups": result.lookups,
        "num_lookups": len(result.lookups),
        "failures": result.failures,
        "problem": result.problem,
        "notes": result.notes,
        **counting.counts(),
        "gold": question.gold,
        "endpoint_failed": counting.endpoint_failed,
    }
    if question.multiple_choice:
        row.update(
            option=result.option,
            difficult=question.difficult,
            correct=result.option is not None and result.option == question.gold,
        )
    else:
        row.update(rouge(result.answer, question.references))
        row["references"] = list(question.references)
        if rate:
            rating = await rate_answer(client.scoped(), question.text, result.answer, question.references)
            row.update(
                rating=rating.rating,
                rater_calls=rating.calls,
                rater_failures=rating.failures,
                endpoint_failed=row["endpoint_failed"] or rating.endpoint_failed,
            )
    return row


def _document_row(state: DocumentState) -> dict:
    return {
        "doc_id": state.doc.doc_id,
        "words": state.doc.words,
        "questions": len(state.doc.questions),
        "builds": {
            k: {"failures": b.failures, "input_failures": b.input_failures, "from_cache": b.from_cache, **b.usage}
            for k, b in state.built().items()
        },
    }


async def run_document(
    client: LLMClient,
    doc: Document,
    items: list[tuple[Question, Variant]],
    options: QAOptions,
    rate: bool,
    memory_client: LLMClient | None,
    emit,
    failed,
    progress=None,
) -> dict:
    """``items`` (a question and a method each) on one document, whose memory they share;
    ``emit`` gets each finished row, ``failed`` the problem of a question the endpoint failed
    (not written: a resume runs it again). Returns the document's row."""
    state = DocumentState(client, doc, options, memory_client=memory_client, progress=progress)

    async def one(q: Question, v: Variant) -> None:
        # A call that failed because the endpoint was down (the raters' included) is the
        # endpoint's fault, not the method's.
        try:
            row = await run_question(client, state, q, v, rate=rate)
            problem = row["problem"]
        except EndpointUnavailable as exc:
            row, problem = None, str(exc)
        if row is not None and not row["endpoint_failed"]:
            emit(row)
        else:
            failed(problem)

    await asyncio.gather(*(one(q, v) for q, v in items))
    return _document_row(state)


DocumentQuestions = Item[tuple[Document, list[tuple[Question, Variant]]]]  # a document's pending questions


class QAOnRay(Evaluator[tuple[Document, list[tuple[Question, Variant]]], tuple]):
    """qa-eval's documents on Ray (``webagent.cluster.OnRay``): each document's pending
    questions one item, in a worker that builds its memory once for them (as a serial run
    builds it), on the endpoints every worker reaches; the row is the questions' rows, the
    problems of those the endpoint failed (left for a resume) and the document's row, which
    the driver writes."""

    config: QAConfig
    noun = "documents"
    traces = False

    def __init__(self, config: QAConfig, todo: list[DocumentQuestions], rate: bool, memory=None):
        self.config, self.todo, self.rate = config, todo, rate  # the options: config.reading
        self.memory = memory  # the --gist-model's endpoint (None: the model's)

    results = staticmethod(results)

    def plan(self) -> list[DocumentQuestions]:
        return self.todo

    @contextlib.asynccontextmanager
    async def worker(self, client, remote: bool):
        from webagent.llm.endpoint import open_client

        async with open_client(self.memory) if self.memory is not None else contextlib.nullcontext() as memory:
            yield client, memory

    async def run_item(self, worker: tuple, item: DocumentQuestions, trace: Path | None) -> dict:
        from webagent.cluster import with_usage

        (client, memory_client), (doc, items) = worker, item.of
        rows: list[dict] = []
        failed: list[str] = []
        document = await run_document(
            client, doc, items, self.config.reading, self.rate, memory_client, rows.append, failed.append
        )
        return with_usage({"rows": rows, "failed": failed, "document": document}, memory_client)

    def error_row(self, item: DocumentQuestions, trace: Path | None, why: str) -> dict:
        return {"rows": [], "failed": [why] * len(item.of[1]), "document": None}

    def outcome(self, row: dict) -> str:
        return f"{len(row['rows'])} questions answered" + (
            f", {len(row['failed'])} left for a resume" if row["failed"] else ""
        )

    def failed(self, row: dict) -> bool:
        return bool(row["failed"])


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
    worker (``QAOnRay``), on `endpoint` (the run's ``EndpointOptions``). `say` takes the Ray
    driver's progress lines (the command gives ``cli_common.status``); without it the run is
    quiet, no bar either."""
    folder = results(out)
    folder.pin(config)
    cut_torn_tail(out / DOCS_FILE)
    done = folder.done()
    todo = [
        (doc, [(q, v) for q in doc.questions for v in variants if (v.name, q.qid) not in done]) for doc in documents
    ]
    total = sum(len(doc.questions) * len(variants) for doc in documents)
    resumed = total - sum(len(items) for _, items in todo)
    semaphore = asyncio.Semaphore(doc_concurrency)
    console = get_console()  # the bar's (stdout): its lines and the documents' progress go there too

    def print_here(line: str) -> None:
        console.print(f"… {line}")

    progress = None if say is None else print_here
    endpoint_failures = [0]
    folder.rows_path.touch()  # the report reads it even when no question finished
    with (
        open(out / DOCS_FILE, "a", encoding="utf-8") as doc_sink,
        results_folder.progress("qa-eval", total, resumed, "method-questions", progress) as advance,
    ):
        finished = [resumed]

        def emit(row: dict) -> None:
            folder.append(row)
            finished[0] = advance()

        def failed(problem: str) -> None:
            endpoint_failures[0] += 1
            if endpoint_failures[0] == 1:
                print_here(f"endpoint failure, question left for a resume: {problem}")

        def document_done(document: dict) -> None:
            doc_sink.write(json.dumps(document, ensure_ascii=False) + "\n")
            doc_sink.flush()

        async def document(doc: Document, items) -> None:
            if not items:
                return
            async with semaphore:
                document_done(
                    await run_document(client, doc, items, config.reading, rate, memory_client, emit, failed, progress)
                )

        if cluster is not None:
            # Each document's pending questions as one Ray task (``QAOnRay``), its rows written as they come back.
            from webagent.cluster import worker_endpoint

            memory = worker_endpoint(endpoint, memory_client) if memory_client is not None else None
            pending = [Item(doc.doc_id, f"document {doc.doc_id}", (doc, items)) for doc, items in todo if items]
            on_ray = QAOnRay(config, pending, rate, memory)
            line = Progress(on_ray, len(pending), 0, say)

            def keep(item: DocumentQuestions, row: dict) -> None:
                for r in row["rows"]:
                    emit(r)
                for problem in row["failed"]:
                    failed(problem)
                if row["document"]:
                    document_done(row["document"])
                line(item, row)

            on = backend(client, cluster, endpoint)
            await on.run(on_ray, pending, lambda item: None, keep, say or (lambda line: None))
        else:
            await asyncio.gather(*(document(d, items) for d, items in todo))
    return {
        "planned": total,
        "resumed": resumed,
        "ran": finished[0] - resumed,
        "endpoint_failures": endpoint_failures[0],
    }
