"""Reading documents into paragraphs: plain text / Markdown streamed line by line, HTML
parsed whole with lxml. Over-long paragraphs are split at sentence boundaries so that
pagination always has room to place pause labels.

Every problem with the input file is a UserError naming the file, raised when
`iter_paragraphs` is called (not on the first `next()`), except an encoding error deep
inside a large text file, which surfaces when the reader gets there.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from webagent.errors import UserError

DEFAULT_MAX_PARAGRAPH_WORDS = 300
HTML_SUFFIXES = {".html", ".htm", ".xhtml"}

_SNIFF_BYTES = 8192
_READ_CHARS = 1 << 16  # a line longer than this is read in pieces

# A sentence ends at . ! ? … (possibly repeated, possibly followed by closing quotes or
# brackets) followed by whitespace. Tokenised text ("crashed . That") works too.
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’»)\]]*\s+")


# --- splitting ----------------------------------------------------------------------------


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`, whitespace collapsed; never drops words."""
    out, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        sentence = " ".join(text[start : m.end()].split())
        if sentence:
            out.append(sentence)
        start = m.end()
    tail = " ".join(text[start:].split())
    if tail:
        out.append(tail)
    return out


def split_paragraph(text: str, max_words: int = DEFAULT_MAX_PARAGRAPH_WORDS) -> list[str]:
    """`text` as pieces of at most `max_words` words: whole sentences packed greedily,
    a sentence longer than `max_words` cut at word boundaries. A paragraph that already
    fits comes back as one piece (whitespace collapsed)."""
    if max_words < 1:
        raise ValueError("max_words must be >= 1")
    words = text.split()
    if len(words) <= max_words:
        return [" ".join(words)] if words else []
    units: list[list[str]] = []
    for sentence in split_sentences(text):
        sw = sentence.split()
        units += [sw[i : i + max_words] for i in range(0, len(sw), max_words)]
    pieces: list[str] = []
    current: list[str] = []
    for unit in units:
        if current and len(current) + len(unit) > max_words:
            pieces.append(" ".join(current))
            current = []
        current += unit
    if current:
        pieces.append(" ".join(current))
    return pieces


# --- checks -------------------------------------------------------------------------------


def _check_file(path: Path) -> None:
    if not path.exists():
        raise UserError(f"{path}: no such file")
    if path.is_dir():
        raise UserError(f"{path}: is a directory, not a document")
    if not path.is_file():
        raise UserError(f"{path}: is not a regular file")
    if not os.access(path, os.R_OK):
        raise UserError(f"{path}: cannot be read (permission denied)")


def _open_binary(path: Path):
    try:
        return open(path, "rb")
    except PermissionError:
        raise UserError(f"{path}: cannot be read (permission denied)") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def _sniff(path: Path) -> bytes:
    """The first few KB; rejects empty, binary and UTF-16/32 files."""
    with _open_binary(path) as f:
        head = f.read(_SNIFF_BYTES)
    if not head:
        raise UserError(f"{path}: is empty")
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        raise UserError(f"{path}: is UTF-16/UTF-32 text; convert it to UTF-8 (e.g. iconv -t UTF-8)")
    if b"\x00" in head:
        raise UserError(f"{path}: looks like a binary file (NUL bytes), not a text document")
    return head


def _check_utf8(path: Path, head: bytes) -> None:
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError as exc:
        raise UserError(
            f"{path}: is not UTF-8 text (byte 0x{head[exc.start]:02x} at offset {exc.start}); convert it to UTF-8"
        ) from None


def _check_has_text(path: Path) -> None:
    """Streams until the first non-whitespace character; whitespace-only files are an error."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    with _open_binary(path) as f:
        while True:
            chunk = f.read(_READ_CHARS)
            try:
                text = decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError:
                return  # reported by the reader, with a better position
            if text.strip():
                return
            if not chunk:
                raise UserError(f"{path}: has no text (only whitespace)")


# --- plain text -----------------------------------------------------------------------------


def _text_paragraphs(path: Path, max_words: int) -> Iterator[str]:
    fragments: list[str] = []
    chars = 0
    # A paragraph buffer past this size (a huge paragraph, or a file without blank lines)
    # is cut into its finished pieces right away, so memory stays bounded.
    limit = max(_READ_CHARS, 40 * max_words)

    def flush(final: bool) -> Iterator[str]:
        nonlocal fragments, chars
        raw = "".join(fragments)
        pieces = split_paragraph(raw, max_words)
        fragments, chars = [], 0
        if not final and pieces and len(pieces[-1]) < limit // 2:
            # The last piece may be unfinished: keep it, and whether a space followed it
            # (a line cut at _READ_CHARS may have cut a word in two).
            last = pieces.pop() + (" " if raw[-1:].isspace() else "")
            fragments, chars = [last], len(last)
        yield from pieces

    line_no = 0
    line_has_text = False
    try:
        with open(path, encoding="utf-8-sig", errors="strict", newline=None) as f:
            while fragment := f.readline(_READ_CHARS):
                if fragment.strip():
                    # Full lines keep their newline; a line cut at _READ_CHARS continues directly.
                    fragments.append(fragment)
                    chars += len(fragment)
                    line_has_text = True
                    if chars > limit:
                        yield from flush(final=False)
                elif fragments:
                    fragments.append(" ")
                if fragment.endswith("\n"):
                    if not line_has_text and fragments:  # a blank line ends the paragraph
                        yield from flush(final=True)
                    line_has_text = False
                    line_no += 1
    except UnicodeDecodeError:
        raise UserError(
            f"{path}: is not UTF-8 text (invalid bytes near line {line_no + 1}); convert it to UTF-8"
        ) from None
    except PermissionError:
        raise UserError(f"{path}: cannot be read (permission denied)") from None
    if fragments:
        yield from flush(final=True)


# --- HTML -----------------------------------------------------------------------------------

# What the reader drops and where it breaks a paragraph: the HTML package's tables (``html.dom``;
# its ``base`` holds no text, its ``iframe`` is dropped here), and besides: a title and embedded
# content dropped, table cells joined by a space and a label's words kept in their paragraph, and
# tfoot, center, menu, option and textarea as blocks.
_MORE_DROP = frozenset({"title", "svg", "canvas", "iframe", "object", "embed"})
_NOT_BLOCK = frozenset({"td", "th", "label"})
_MORE_BLOCK = frozenset({"tfoot", "center", "menu", "option", "textarea"})
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_BREAK = object()
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def _html_encoding(path: Path, data: bytes) -> str:
    try:
        data.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError as exc:
        declared = _CHARSET.search(data[:4096])
        if declared:
            name = declared.group(1).decode("ascii")
            try:
                codecs.lookup(name)
                return name
            except LookupError:
                pass
        raise UserError(
            f"{path}: is not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}) and declares "
            "no usable charset; convert it to UTF-8"
        ) from None


def _is_hidden(el) -> bool:
    return (
        el.get("hidden") is not None
        or el.get("aria-hidden") == "true"
        or bool(_HIDDEN_STYLE.search(el.get("style") or ""))
    )


def html_paragraphs(root) -> list[str]:
    """Visible text of an lxml tree, one string per block (whitespace collapsed)."""
    from webagent.html.dom import BLOCK_TAGS, DROP_TAGS  # deferred: a plain-text document needs no lxml

    drop, block = DROP_TAGS | _MORE_DROP, (BLOCK_TAGS - _NOT_BLOCK) | _MORE_BLOCK
    tokens: list[str | object] = []  # text, or _BREAK
    stack: list[tuple[Any, bool]] = [(root, True)]  # (lxml element, opening)
    while stack:
        el, opening = stack.pop()
        tag = el.tag.lower() if isinstance(el.tag, str) else None
        if opening:
            if tag is None or tag in drop or _is_hidden(el):  # comments, PIs, invisible elements
                if el.tail:
                    tokens.append(el.tail)
                continue
            if tag in block:
                tokens.append(_BREAK)
            if el.text:
                tokens.append(el.text)
            stack.append((el, False))
            stack.extend((child, True) for child in reversed(el))
        else:
            if tag in block:
                tokens.append(_BREAK)
            elif tag in ("td", "th"):
                tokens.append(" ")
            if el.tail:
                tokens.append(el.tail)
    paragraphs: list[str] = []
    current: list[str] = []
    for tok in tokens + [_BREAK]:
        if not isinstance(tok, str):  # _BREAK
            text = " ".join("".join(current).split())
            if text:
                paragraphs.append(text)
            current = []
        else:
            current.append(tok)
    return paragraphs


def _html_paragraphs(path: Path, max_words: int) -> list[str]:
    import lxml.html
    from lxml import etree

    with _open_binary(path) as f:
        data = f.read()
    if not data.strip():
        raise UserError(f"{path}: has no text (only whitespace)")
    parser = lxml.html.HTMLParser(encoding=_html_encoding(path, data), remove_comments=True)
    try:
        root = lxml.html.document_fromstring(data, parser=parser)
    except (etree.ParserError, ValueError) as exc:
        raise UserError(f"{path}: cannot be parsed as HTML ({exc})") from None
    out: list[str] = []
    for paragraph in html_paragraphs(root):
        out += split_paragraph(paragraph, max_words)
    return out


# --- public ---------------------------------------------------------------------------------


def iter_paragraphs(
    path: str | os.PathLike, *, max_paragraph_words: int = DEFAULT_MAX_PARAGRAPH_WORDS
) -> Iterator[str]:
    """Paragraphs of a document, in order, each at most `max_paragraph_words` words.

    Text files (any extension that is not HTML, as long as it is UTF-8 text) are streamed:
    paragraphs are separated by blank lines, whitespace inside is collapsed. HTML
    (.html/.htm/.xhtml) yields the visible text of block elements.
    """
    if max_paragraph_words < 1:
        raise ValueError("max_paragraph_words must be >= 1")
    path = Path(path)
    _check_file(path)
    head = _sniff(path)
    if path.suffix.lower() in HTML_SUFFIXES:
        paragraphs = _html_paragraphs(path, max_paragraph_words)
        if not paragraphs:
            raise UserError(f"{path}: has no text (no visible text in the HTML)")
        return iter(paragraphs)
    _check_utf8(path, head)
    _check_has_text(path)
    return _text_paragraphs(path, max_paragraph_words)


def document_hash(path: str | os.PathLike) -> str:
    """sha256 (hex) of the file's bytes, read in chunks."""
    path = Path(path)
    _check_file(path)
    with _open_binary(path) as f:
        return hashlib.file_digest(f, "sha256").hexdigest()
