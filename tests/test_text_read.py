import hashlib
import os
from pathlib import Path

import pytest

from webagent.errors import UserError
from webagent.text import read
from webagent.text.read import document_hash, iter_paragraphs, split_paragraph, split_sentences

FIXTURE = Path(__file__).parent / "fixtures" / "text" / "qmsum_meeting_excerpt.txt"


def write(tmp_path, name, content):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


# --- plain text / markdown ------------------------------------------------------------------


def test_fixture_paragraphs_keep_every_word_in_order():
    paragraphs = list(iter_paragraphs(FIXTURE))
    raw_turns = [t for t in FIXTURE.read_text(encoding="utf-8").split("\n\n") if t.strip()]
    assert len(raw_turns) == 160
    assert len(paragraphs) > 160  # the 394-word turn was split
    assert paragraphs[0] == "Professor E: So . OK . Doesn't look like it crashed . That 's great ."
    assert " ".join(paragraphs).split() == FIXTURE.read_text(encoding="utf-8").split()
    assert max(len(p.split()) for p in paragraphs) <= 300


def test_long_turn_is_split_at_sentence_boundaries():
    long_turn = next(t for t in FIXTURE.read_text(encoding="utf-8").split("\n\n") if len(t.split()) > 300)
    pieces = split_paragraph(long_turn, 300)
    assert len(pieces) == 2
    assert " ".join(pieces).split() == long_turn.split()
    assert all(len(p.split()) <= 300 for p in pieces)
    assert pieces[0].endswith((".", "?", "!"))  # cut after a sentence, not mid-sentence


def test_txt_blank_lines_separate_paragraphs_and_whitespace_collapses(tmp_path):
    path = write(tmp_path, "doc.txt", "First  line\n   continues\there.\n\n\n  \nSecond paragraph.\n \t\nThird")
    assert list(iter_paragraphs(path)) == ["First line continues here.", "Second paragraph.", "Third"]


def test_crlf_and_utf8_bom_are_accepted(tmp_path):
    path = write(tmp_path, "doc.txt", "\ufeffOne\r\ntwo\r\n\r\nthree\r\n".encode("utf-8"))
    assert list(iter_paragraphs(path)) == ["One two", "three"]


def test_markdown_is_read_as_text(tmp_path):
    path = write(tmp_path, "notes.md", "# Title\n\nSome *text*\nwrapped.\n\n- item one\n- item two\n")
    assert list(iter_paragraphs(path)) == ["# Title", "Some *text* wrapped.", "- item one - item two"]


@pytest.mark.parametrize("name", ["notes.log", "README", "chapter.rst", "data.weird-ext"])
def test_unknown_extensions_are_text_when_they_sniff_as_text(tmp_path, name):
    path = write(tmp_path, name, "Hello there.\n\nGeneral Kenobi.\n")
    assert list(iter_paragraphs(path)) == ["Hello there.", "General Kenobi."]


def test_paragraph_over_the_limit_is_split_by_sentences(tmp_path):
    sentences = [f"Sentence number {i} has exactly seven words." for i in range(10)]  # 7 words each
    path = write(tmp_path, "doc.txt", " ".join(sentences) + "\n\nShort one.\n")
    paragraphs = list(iter_paragraphs(path, max_paragraph_words=20))
    assert paragraphs[:-1] == [" ".join(sentences[i : i + 2]) for i in range(0, 10, 2)]
    assert paragraphs[-1] == "Short one."


def test_a_sentence_longer_than_the_limit_is_split_at_words():
    text = " ".join(f"w{i}" for i in range(25)) + ". Next sentence."
    pieces = split_paragraph(text, 10)
    assert [len(p.split()) for p in pieces] == [10, 10, 7]
    assert " ".join(pieces).split() == text.split()


def test_split_sentences_handles_quotes_and_tokenised_text():
    assert split_sentences('He said "Stop!" Then left. Why ? Because .') == [
        'He said "Stop!"',
        "Then left.",
        "Why ?",
        "Because .",
    ]
    assert split_paragraph("   ", 5) == []
    with pytest.raises(ValueError):
        split_paragraph("x", 0)


def test_a_file_without_blank_lines_streams_in_bounded_pieces(tmp_path, monkeypatch):
    monkeypatch.setattr(read, "_READ_CHARS", 64)  # also exercises lines cut mid-word
    sentence = "Alpha beta gamma delta epsilonlongword zeta eta theta."
    path = write(tmp_path, "one.txt", "\n".join([sentence] * 200) + " " + "x" * 150 + " tail")
    paragraphs = list(iter_paragraphs(path, max_paragraph_words=30))
    assert all(len(p.split()) <= 30 for p in paragraphs)
    assert " ".join(paragraphs).split() == path.read_text().split()
    assert paragraphs[0] == " ".join([sentence] * 3)


def test_a_line_longer_than_the_read_size_keeps_its_words(tmp_path, monkeypatch):
    monkeypatch.setattr(read, "_READ_CHARS", 7)
    path = write(tmp_path, "doc.txt", "abcdefghijkl mnopq rstuvwxyz\n" + " " * 20 + "\nnext para\n")
    assert list(iter_paragraphs(path)) == ["abcdefghijkl mnopq rstuvwxyz", "next para"]


# --- HTML ---------------------------------------------------------------------------------------

HTML = """<!DOCTYPE html>
<html><head><title>Not shown</title><style>p { color: red }</style>
<script>var hidden = "script text";</script></head>
<body>
  <noscript>Enable JavaScript</noscript>
  <template><p>template text</p></template>
  <h1>The   Heading</h1>
  <p>First <b>bold</b> paragraph &amp; an entity.<!-- a comment --></p>
  <div>Line one<br>Line two</div>
  <ul><li>Item A</li><li>Item <i>B</i></li></ul>
  <table><tr><td>cell 1</td><td>cell 2</td></tr><tr><th>h</th><td>cell 3</td></tr></table>
  <p hidden>hidden paragraph</p><div style="display: none">invisible</div>
  <section>Tail text <span>inline</span></section>
  Loose text at the end
</body></html>"""


@pytest.mark.parametrize("suffix", [".html", ".htm"])
def test_html_visible_text_by_block(tmp_path, suffix):
    path = write(tmp_path, "page" + suffix, HTML)
    assert list(iter_paragraphs(path)) == [
        "The Heading",
        "First bold paragraph & an entity.",
        "Line one",
        "Line two",
        "Item A",
        "Item B",
        "cell 1 cell 2",
        "h cell 3",
        "Tail text inline",
        "Loose text at the end",
    ]


def test_html_declared_charset_is_used(tmp_path):
    page = '<html><head><meta charset="windows-1252"></head><body><p>caf\xe9 \x93quoted\x94</p></body></html>'
    path = write(tmp_path, "old.html", page.encode("latin-1"))
    assert list(iter_paragraphs(path)) == ["café “quoted”"]


def test_html_long_paragraph_is_split(tmp_path):
    body = " ".join(f"Sentence {i} is here." for i in range(100))  # 400 words
    path = write(tmp_path, "long.html", f"<html><body><p>{body}</p></body></html>")
    paragraphs = list(iter_paragraphs(path, max_paragraph_words=100))
    assert [len(p.split()) for p in paragraphs] == [100, 100, 100, 100]


@pytest.mark.parametrize(
    "content",
    [
        "<html><head><script>x()</script></head><body>  </body></html>",
        "<html><body><script>only()</script><!-- nothing --></body></html>",
        "   \n  ",
    ],
)
def test_html_without_visible_text_is_an_error(tmp_path, content):
    path = write(tmp_path, "empty.html", content)
    with pytest.raises(UserError, match="has no text"):
        iter_paragraphs(path)


# --- bad input ------------------------------------------------------------------------------------


def test_missing_file(tmp_path):
    with pytest.raises(UserError, match=r"nope\.txt: no such file"):
        iter_paragraphs(tmp_path / "nope.txt")


def test_directory(tmp_path):
    with pytest.raises(UserError, match="is a directory"):
        iter_paragraphs(tmp_path)


def test_unreadable_file(tmp_path, monkeypatch):
    path = write(tmp_path, "secret.txt", "text")
    monkeypatch.setattr(read.os, "access", lambda p, mode: False)
    with pytest.raises(UserError, match=r"secret\.txt: cannot be read \(permission denied\)"):
        iter_paragraphs(path)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can read any file")
def test_unreadable_file_for_real(tmp_path):
    path = write(tmp_path, "secret.txt", "text")
    path.chmod(0)
    try:
        with pytest.raises(UserError, match="permission denied"):
            iter_paragraphs(path)
    finally:
        path.chmod(0o644)


def test_empty_file(tmp_path):
    with pytest.raises(UserError, match=r"empty\.txt: is empty"):
        iter_paragraphs(write(tmp_path, "empty.txt", ""))


def test_whitespace_only_file(tmp_path):
    with pytest.raises(UserError, match=r"blank\.md: has no text"):
        iter_paragraphs(write(tmp_path, "blank.md", " \n\n\t \r\n" * 1000))


def test_binary_file(tmp_path):
    with pytest.raises(UserError, match=r"image\.txt: looks like a binary file"):
        iter_paragraphs(write(tmp_path, "image.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))


def test_non_utf8_file(tmp_path):
    with pytest.raises(UserError, match=r"latin\.txt: is not UTF-8 text .*convert it to UTF-8"):
        iter_paragraphs(write(tmp_path, "latin.txt", "caf\xe9 au lait".encode("latin-1")))


def test_utf16_file(tmp_path):
    with pytest.raises(UserError, match="UTF-16"):
        iter_paragraphs(write(tmp_path, "wide.txt", "hello".encode("utf-16")))


def test_invalid_bytes_past_the_sniffed_head_fail_while_reading(tmp_path):
    path = write(tmp_path, "late.txt", b"fine text\n\n" * 2000 + b"bad \xff byte\n")
    paragraphs = iter_paragraphs(path)
    with pytest.raises(UserError, match=r"late\.txt: is not UTF-8 text \(invalid bytes near line"):
        list(paragraphs)


def test_errors_are_raised_at_call_time_not_first_next(tmp_path):
    with pytest.raises(UserError):
        iter_paragraphs(tmp_path / "missing.md")  # no next() needed


# --- hashing --------------------------------------------------------------------------------------


def test_document_hash_is_sha256_of_bytes(tmp_path):
    data = os.urandom(3 * (1 << 20) + 17)
    path = write(tmp_path, "blob.bin", data)
    assert document_hash(path) == hashlib.sha256(data).hexdigest()
    assert document_hash(FIXTURE) == hashlib.sha256(FIXTURE.read_bytes()).hexdigest()


def test_document_hash_errors(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        document_hash(tmp_path / "missing.txt")
    with pytest.raises(UserError, match="is a directory"):
        document_hash(tmp_path)
