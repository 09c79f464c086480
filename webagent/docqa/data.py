"""Document-QA datasets in their official layouts: QuALITY v1.0.1, QMSum, NarrativeQA.

Every loader yields `Document`s (the text as paragraphs, and its questions). A malformed
record raises `DataError` naming the file, the line (or row) and the field; with
`skip_bad=True` it is kept aside in `LoadResult.skipped` and counted instead.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from webagent.errors import DataError, UserError

DATASETS = ("quality", "qmsum", "narrativeqa")
# NarrativeQA's splits (qaps.csv's `set`); a folder is read by one of them, `valid` unless named.
NARRATIVEQA_SPLITS = ("valid", "test", "train")
DEFAULT_NARRATIVEQA_SPLIT = "valid"
_HUB_SPLITS = {"valid": "validation", "test": "test", "train": "train"}
OPTION_LETTERS = "ABCD"


@dataclass(frozen=True)
class Question:
    qid: str
    text: str
    options: tuple[str, ...] = ()  # multiple choice (QuALITY): four options
    gold: int | None = None  # 0-based index of the correct option
    references: tuple[str, ...] = ()  # free-form reference answers (QMSum, NarrativeQA)
    difficult: bool = False  # QuALITY's hard subset

    @property
    def multiple_choice(self) -> bool:
        return bool(self.options)

    def with_options(self) -> str:
        """The question as the model reads it: with (A)..(D) options when there are any."""
        if not self.options:
            return self.text
        return self.text + "\n" + "\n".join(f"({OPTION_LETTERS[i]}) {o}" for i, o in enumerate(self.options))


@dataclass
class Document:
    doc_id: str
    paragraphs: list[str]
    questions: list[Question] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n\n".join(self.paragraphs)

    @property
    def words(self) -> int:
        return sum(len(p.split()) for p in self.paragraphs)

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:24]


@dataclass
class LoadResult:
    documents: list[Document]
    skipped: list[dict] = field(default_factory=list)  # {"file", "record", "field", "reason"}

    @property
    def num_questions(self) -> int:
        return sum(len(d.questions) for d in self.documents)


def paragraphs_of(text: str) -> list[str]:
    """Blank-line separated paragraphs; a text without blank lines is split at line breaks."""
    parts = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    if len(parts) <= 1:
        parts = [p for p in text.splitlines() if p.strip()]
    return [" ".join(p.split()) for p in parts]


class _Collector:
    def __init__(self, skip_bad: bool):
        self.skip_bad = skip_bad
        self.skipped: list[dict] = []

    def bad(self, exc: DataError) -> None:
        if not self.skip_bad:
            raise exc
        self.skipped.append({"file": exc.file, "record": exc.record, "field": exc.field, "reason": exc.reason})


def _need(obj: dict, key: str, kind: type | tuple, file: Path, record: object, prefix: str = ""):
    if not isinstance(obj, dict) or key not in obj:
        raise DataError(file, "missing", record, prefix + key)
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise DataError(
            file, f"expected {getattr(kind, '__name__', kind)}, got {type(value).__name__}", record, prefix + key
        )
    return value


def _json_lines(path: Path) -> Iterator[tuple[int, dict | DataError]]:
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield n, json.loads(line)
            except json.JSONDecodeError as exc:
                yield n, DataError(path, f"not valid JSON ({exc.msg})", f"line {n}")


# --- QuALITY v1.0.1 -----------------------------------------------------------------------------


def _quality_record(rec: dict, path: Path, where: str) -> tuple[str, str, list[Question]]:
    article_id = str(_need(rec, "article_id", (str, int), path, where))
    article = _need(rec, "article", str, path, where)
    if not article.strip():
        raise DataError(path, "empty article", where, "article")
    questions = []
    for i, q in enumerate(_need(rec, "questions", list, path, where)):
        pre = f"questions[{i}]."
        text = _need(q, "question", str, path, where, pre)
        options = _need(q, "options", list, path, where, pre)
        if len(options) != 4 or not all(isinstance(o, str) for o in options):
            raise DataError(path, "expected four option strings", where, pre + "options")
        gold = _need(q, "gold_label", int, path, where, pre)
        if not 1 <= gold <= 4:
            raise DataError(path, f"must be 1..4 (got {gold})", where, pre + "gold_label")
        difficult = q.get("difficult", 0)
        if difficult not in (0, 1, True, False):
            raise DataError(path, f"must be 0 or 1 (got {difficult!r})", where, pre + "difficult")
        qid = str(q.get("question_unique_id") or f"{rec.get('set_unique_id', article_id)}#{i}")
        questions.append(Question(qid, text, tuple(options), gold - 1, (), bool(difficult)))
    return article_id, article, questions


def load_quality(path: Path, skip_bad: bool = False) -> LoadResult:
    """QuALITY.v1.0.1.htmlstripped.{train,dev} JSONL: one line per (article, writer); the two
    lines of an article are merged into one document."""
    col, docs = _Collector(skip_bad), dict[str, Document]()
    for n, rec in _json_lines(path):
        try:
            if isinstance(rec, DataError):
                raise rec
            article_id, article, questions = _quality_record(rec, path, f"line {n}")
        except DataError as exc:
            col.bad(exc)
            continue
        doc = docs.setdefault(article_id, Document(article_id, paragraphs_of(article)))
        doc.questions += questions
    return LoadResult(list(docs.values()), col.skipped)


# --- QMSum --------------------------------------------------------------------------------------


def load_qmsum(path: Path, skip_bad: bool = False) -> LoadResult:
    """QMSum's official JSONL: `meeting_transcripts` [{speaker, content}], `general_query_list`
    and `specific_query_list` [{query, answer}]. A turn becomes a paragraph "Speaker: content"."""
    col, docs = _Collector(skip_bad), []
    for n, rec in _json_lines(path):
        where = f"line {n}"
        try:
            if isinstance(rec, DataError):
                raise rec
            turns = _need(rec, "meeting_transcripts", list, path, where)
            paragraphs = []
            for i, t in enumerate(turns):
                speaker = _need(t, "speaker", str, path, where, f"meeting_transcripts[{i}].")
                content = _need(t, "content", str, path, where, f"meeting_transcripts[{i}].")
                if content.strip():
                    paragraphs.append(f"{speaker}: {' '.join(content.split())}")
            if not paragraphs:
                raise DataError(path, "no transcript text", where, "meeting_transcripts")
            questions = []
            for kind in ("general_query_list", "specific_query_list"):
                for i, q in enumerate(_need(rec, kind, list, path, where)):
                    query = _need(q, "query", str, path, where, f"{kind}[{i}].")
                    answer = _need(q, "answer", str, path, where, f"{kind}[{i}].")
                    questions.append(Question(f"{n}:{kind.split('_')[0]}:{i}", query, references=(answer,)))
        except DataError as exc:
            col.bad(exc)
            continue
        docs.append(Document(f"meeting-{n}", paragraphs, questions))
    return LoadResult(docs, col.skipped)


# --- NarrativeQA --------------------------------------------------------------------------------


def cut_story(text: str, start: str, end: str) -> str:
    """The story between its `story_start` and `story_end` markers (the end marker kept),
    as the official scripts do; the whole text when a marker is not found."""
    s = text.find(start) if start else -1
    e = text.rfind(end) if end else -1
    if s >= 0 and e > s:
        return text[s : e + len(end)]
    return text


def _csv_rows(path: Path) -> Iterator[tuple[int, dict]]:
    with open(path, encoding="utf-8", newline="") as f:
        yield from enumerate(csv.DictReader(f), 2)  # row 1 is the header


def load_narrativeqa(path: Path, skip_bad: bool = False, split: str | None = None) -> LoadResult:
    """The official layout: documents.csv, qaps.csv and the stories as download_stories.sh
    leaves them (tmp/<document_id>.content). `split` keeps one of train/valid/test."""
    docs_csv, qaps_csv, stories = path / "documents.csv", path / "qaps.csv", path / "tmp"
    for needed in (docs_csv, qaps_csv):
        if not needed.is_file():
            raise UserError(f"{path}: not a NarrativeQA folder (no {needed.name})")
    col, docs = _Collector(skip_bad), dict[str, list[Question]]()
    wanted = set()
    for n, row in _csv_rows(qaps_csv):
        if split and row.get("set") != split:
            continue
        try:
            for key in ("document_id", "question", "answer1", "answer2"):
                if not (row.get(key) or "").strip():
                    raise DataError(qaps_csv, "missing or empty", f"row {n}", key)
        except DataError as exc:
            col.bad(exc)
            continue
        wanted.add(row["document_id"])
        docs.setdefault(row["document_id"], []).append(
            Question(f"{row['document_id']}:{n}", row["question"], references=(row["answer1"], row["answer2"]))
        )
    out = []
    for n, row in _csv_rows(docs_csv):
        doc_id = row.get("document_id") or ""
        if doc_id not in wanted or doc_id not in docs:
            continue
        story = stories / f"{doc_id}.content"
        questions = docs.pop(doc_id)
        try:
            if not story.is_file():
                raise DataError(
                    docs_csv, f"story file {story} not found (run download_stories.sh)", f"row {n}", "document_id"
                )
            text = story.read_text(encoding="utf-8", errors="replace")
            text = cut_story(text, row.get("story_start") or "", row.get("story_end") or "")
            paragraphs = paragraphs_of(text)
            if not paragraphs:
                raise DataError(story, "empty story", f"row {n}", "document_id")
        except DataError as exc:
            col.bad(exc)
            continue
        out.append(Document(doc_id, paragraphs, questions))
    for doc_id in docs:  # questions about a document that documents.csv does not list
        col.bad(DataError(qaps_csv, f"document {doc_id} is not in documents.csv", None, "document_id"))
    return LoadResult(out, col.skipped)


def load_narrativeqa_hub(split: str = "validation") -> LoadResult:
    """`deepmind/narrativeqa` through `datasets` (needs the hub)."""
    try:
        import datasets

        ds = datasets.load_dataset("deepmind/narrativeqa", split=split)
    except Exception as exc:  # noqa: BLE001 - any hub failure is the user's environment
        raise UserError(f"hf:deepmind/narrativeqa could not be loaded ({type(exc).__name__}: {exc})") from None
    docs: dict[str, Document] = {}
    for i, rec in enumerate(ds):
        d = rec["document"]
        doc = docs.get(d["id"])
        if doc is None:
            text = cut_story(d["text"], d.get("start") or "", d.get("end") or "")
            doc = docs[d["id"]] = Document(d["id"], paragraphs_of(text))
        refs = tuple(a["text"] for a in rec["answers"])
        doc.questions.append(Question(f"{d['id']}:{i}", rec["question"]["text"], references=refs))
    return LoadResult(list(docs.values()))


def load(dataset: str, data: str, skip_bad: bool = False, split: str | None = None) -> LoadResult:
    """`split`: NarrativeQA only (valid, test or train; valid when None): a folder or the hub
    holds every split, and one evaluation reads one. QuALITY and QMSum come one split per file."""
    if dataset not in DATASETS:
        raise UserError(f"--dataset must be one of {', '.join(DATASETS)} (got {dataset!r})")
    if dataset != "narrativeqa" and split is not None:
        raise UserError(f"--split applies to NarrativeQA only; {dataset} comes one split per file (pass that file)")
    if dataset == "narrativeqa":
        split = split or DEFAULT_NARRATIVEQA_SPLIT
        if split not in NARRATIVEQA_SPLITS:
            raise UserError(f"--split must be one of {', '.join(NARRATIVEQA_SPLITS)} (got {split!r})")
    if dataset == "narrativeqa" and data.startswith("hf:"):
        return load_narrativeqa_hub(_HUB_SPLITS[split or DEFAULT_NARRATIVEQA_SPLIT])
    path = Path(data)
    if not path.exists():
        raise UserError(f"--data {data}: not found")
    if dataset == "narrativeqa":
        if not path.is_dir():
            raise UserError(f"--data {data}: NarrativeQA needs its folder (documents.csv, qaps.csv, tmp/)")
        result = load_narrativeqa(path, skip_bad, split=split)
    else:
        if not path.is_file():
            raise UserError(f"--data {data}: expected a JSONL file")
        result = (load_quality if dataset == "quality" else load_qmsum)(path, skip_bad)
    if not result.documents:
        raise UserError(
            f"--data {data}: no usable {dataset} documents"
            + (f" in split {split}" if split else "")
            + (f" ({len(result.skipped)} malformed records skipped)" if result.skipped else "")
        )
    return result
