"""Dataset loaders in their official layouts, and malformed records."""

import json
from pathlib import Path

import pytest

from webagent.docqa.data import cut_story, load, load_narrativeqa, load_qmsum, load_quality
from webagent.errors import DataError, UserError

FIX = Path(__file__).parent / "fixtures" / "docqa"


def test_quality_merges_the_two_writer_lines_of_an_article():
    result = load_quality(FIX / "quality_dev_sample.jsonl")
    assert len(result.documents) == 1
    doc = result.documents[0]
    assert len(doc.questions) == 5 and doc.words > 4000
    q = doc.questions[0]
    assert q.multiple_choice and len(q.options) == 4
    assert q.gold == 1  # gold_label 2 is the second option, 0-based 1
    assert [q.difficult for q in doc.questions] == [True, True, True, True, False]
    assert "(B) " in q.with_options() and q.text in q.with_options()


def _write(tmp_path, name, rows):
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def _quality_row(**changes):
    row = json.loads((FIX / "quality_dev_sample.jsonl").read_text().splitlines()[0])
    row["questions"] = [dict(row["questions"][0], **changes)]
    return row


def test_quality_bad_gold_label_names_file_line_and_field(tmp_path):
    path = _write(tmp_path, "q.jsonl", [_quality_row(), _quality_row(gold_label=5)])
    with pytest.raises(DataError) as err:
        load_quality(path)
    assert str(err.value) == f"{path}, record line 2, field 'questions[0].gold_label': must be 1..4 (got 5)"


def test_quality_skip_bad_keeps_the_bad_record_aside(tmp_path):
    path = _write(tmp_path, "q.jsonl", [_quality_row(), "{not json", _quality_row(options=["a", "b"])])
    result = load_quality(path, skip_bad=True)
    assert result.num_questions == 1
    assert [(s["record"], s["field"]) for s in result.skipped] == [("line 2", None), ("line 3", "questions[0].options")]


def test_qmsum_official_layout():
    result = load_qmsum(FIX / "qmsum_val_sample.jsonl")
    assert len(result.documents) == 2
    doc = result.documents[0]
    assert (
        doc.paragraphs[0].split(":")[0]
        in {"Grad A", "Professor", "PhD A", "PhD B", "PhD C", "PhD D", "PhD E", "Postdoc A", "Grad B", "Grad C"}
        or ":" in doc.paragraphs[0]
    )
    assert [q.text for q in doc.questions][1] == "What was agreed upon on sample transcripts?"
    assert all(len(q.references) == 1 and not q.multiple_choice for q in doc.questions)


def test_qmsum_missing_field(tmp_path):
    row = json.loads((FIX / "qmsum_val_sample.jsonl").read_text().splitlines()[0])
    del row["specific_query_list"][0]["answer"]
    with pytest.raises(DataError, match=r"record line 1, field 'specific_query_list\[0\].answer': missing"):
        load_qmsum(_write(tmp_path, "m.jsonl", [row]))


def test_narrativeqa_cuts_at_the_markers_when_found():
    result = load_narrativeqa(FIX / "narrativeqa")
    docs = {d.doc_id: d for d in result.documents}
    gut = docs["a1b2c3"].text
    assert gut.startswith("THE LIGHTHOUSE KEEPER") and gut.endswith("THE END")
    assert "Produced by" not in gut and "footer" not in gut
    movie = docs["d4e5f6"].text  # its start marker is not in the file: kept whole
    assert movie.startswith("INT. NIGHT TRAIN") and movie.endswith("FADE OUT.")
    refs = docs["a1b2c3"].questions[0].references
    assert refs == ("Her father's letters.", "Letters from her father")


def test_cut_story():
    assert cut_story("junk START story END junk", "START", "END") == "START story END"
    assert cut_story("no markers here", "START", "END") == "no markers here"


def test_narrativeqa_missing_story_file(tmp_path):
    import shutil

    shutil.copytree(FIX / "narrativeqa", tmp_path / "nqa")
    (tmp_path / "nqa" / "tmp" / "d4e5f6.content").unlink()
    with pytest.raises(DataError, match=r"documents.csv, record row 3, field 'document_id': story file .* not found"):
        load_narrativeqa(tmp_path / "nqa")
    kept = load_narrativeqa(tmp_path / "nqa", skip_bad=True)
    assert [d.doc_id for d in kept.documents] == ["a1b2c3"] and len(kept.skipped) == 1


def test_load_checks_the_path():
    with pytest.raises(UserError, match="not found"):
        load("qmsum", "/nonexistent/file.jsonl")
    with pytest.raises(UserError, match="needs its folder"):
        load("narrativeqa", str(FIX / "qmsum_val_sample.jsonl"))


def _nqa_with_three_splits(tmp_path):
    """The fixture folder plus one train and one test story (NarrativeQA splits by story)."""
    import shutil

    folder = tmp_path / "nqa"
    shutil.copytree(FIX / "narrativeqa", folder)
    for doc_id, split in (("t1r2a3", "train"), ("t4e5s6", "test")):
        (folder / "tmp" / f"{doc_id}.content").write_text(f"A {split} story.\n\nIt ends here.\n")
        with open(folder / "documents.csv", "a") as f:
            f.write(
                f"{doc_id},{split},gutenberg,http://example.invalid/{doc_id},50,http://example.invalid/w,"
                f"A {split} story,9,,\n"
            )
        with open(folder / "qaps.csv", "a") as f:
            f.write(f"{doc_id},{split},What kind of story is it?,A {split} story.,{split},,,\n")
    return folder


@pytest.mark.parametrize(
    "split, docs",
    [
        (None, ["a1b2c3", "d4e5f6"]),  # valid unless another split is named: never train and test mixed in
        ("valid", ["a1b2c3", "d4e5f6"]),
        ("test", ["t4e5s6"]),
        ("train", ["t1r2a3"]),
    ],
)
def test_narrativeqa_folder_is_read_by_split(tmp_path, split, docs):
    folder = _nqa_with_three_splits(tmp_path)
    result = load("narrativeqa", str(folder), **({} if split is None else {"split": split}))
    assert [d.doc_id for d in result.documents] == docs
    assert all(q.qid.split(":")[0] in docs for d in result.documents for q in d.questions)


def test_split_is_checked(tmp_path):
    with pytest.raises(UserError, match="--split"):
        load("narrativeqa", str(FIX / "narrativeqa"), split="dev")
    with pytest.raises(UserError, match="--split .*NarrativeQA"):
        load("qmsum", str(FIX / "qmsum_val_sample.jsonl"), split="test")
    with pytest.raises(UserError, match="no usable narrativeqa documents.*split test"):
        load("narrativeqa", str(FIX / "narrativeqa"), split="test")
