"""Compact, deterministic rendering of cleaned HTML in Mind2Web's (MindAct's) style.

    <button id=123 submit search> Search </button>

An element renders as its tag, ``id=`` its ``backend_node_id``, then the words of
its informative attributes (role, type, alt, aria_label, label, title, name,
text_value, value, placeholder, input_checked, input_value, option_selected --
MindAct's order; lower-cased, at most ``MAX_ATTR_WORDS`` words per attribute
and ``MAX_META_WORDS`` in all, repeated values and empty/URL values skipped),
then its text, its children and its closing tag. Elements with neither text nor
children self-close (``<a id=5 home />``). Mind2Web's ``<text>`` nodes render
as their bare text. ``class``, ``bounding_box_rect``, ``is_clickable`` and the
HTML ``id`` never show. Whitespace is collapsed. Unlike MindAct, text is not
truncated: snippets are meant to be read (gisted), not squeezed into a prompt.

The page is rendered once into a flat token stream (``flatten_markup``, straight
from parser events; ``flatten`` for a tree); any subtree's rendering and word
count are then slices of that stream, which is what lets ``split_snippets`` cut
a page in linear time.
"""

from __future__ import annotations

from array import array
from itertools import accumulate

from lxml import etree

from webagent.html.clean import load_tree, xml_parser
from webagent.html.dom import EMPTY_VALUES, ID_ATTR, RENDER_ATTRS, is_interactive

MAX_ATTR_WORDS = 5  # words kept from one attribute value (MindAct: 5)
MAX_META_WORDS = 20  # words kept from all attributes of one element (MindAct: 20)
MAX_WORD_CHARS = 20  # longer "words" are hashes, ids or URLs, not language


def attr_words(items) -> str:
    """The rendered attribute words of one element, from its ``(name, value)`` pairs."""
    picked = [(RENDER_ATTRS[k], v) for k, v in items if k in RENDER_ATTRS]
    if not picked:
        return ""
    picked.sort()
    seen: set[str] = set()
    words: list[str] = []
    for _, value in picked:
        value = value.strip().lower()
        if value in EMPTY_VALUES or value.startswith("http"):
            continue
        kept = [w for w in value.split() if len(w) <= MAX_WORD_CHARS][:MAX_ATTR_WORDS]
        if not kept:
            continue
        key = " ".join(kept)
        if key in seen:
            continue
        seen.add(key)
        words.extend(kept)
    return " ".join(words[:MAX_META_WORDS])


class Flat:
    """A page rendered once, as tokens, with per-element bookkeeping.

    Elements are numbered in document (pre-)order; element ``i``'s subtree is the
    elements ``i .. stop[i]-1`` and the tokens ``open_tok[i] .. end_tok[i]-1``;
    its children are ``i+1``, ``stop[i+1]``, ... below ``stop[i]``. A child's tail
    text is one token right after the child's subtree; it belongs to the parent's
    own content. Integer columns are compact arrays: a 1 MB page is ~20k elements.
    """

    __slots__ = (
        "tokens",
        "words",
        "ids",
        "depth",
        "stop",
        "open_tok",
        "end_tok",
        "close_tok",
        "tail_tok",
        "interactive",
        "missing_ids",
    )

    def __init__(self) -> None:
        self.tokens: list[str] = []
        self.words = array("l")  # prefix sums: words in tokens[:k] is words[k]
        self.ids: list[str | None] = []  # backend_node_id per element
        self.depth = array("l")
        self.stop = array("l")
        self.open_tok = array("l")
        self.end_tok = array("l")
        self.close_tok = array("l")  # -1 when the element self-closes
        self.tail_tok = array("l")  # -1 when the element has no tail text
        self.interactive = bytearray()
        self.missing_ids = False  # some element has no backend_node_id

    def __len__(self) -> int:
        return len(self.ids)

    def children(self, i: int) -> list[int]:
        out, c, stop = [], i + 1, self.stop[i]
        while c < stop:
            out.append(c)
            c = self.stop[c]
        return out

    def subtree_words(self, i: int) -> int:
        return self.words[self.end_tok[i]] - self.words[self.open_tok[i]]

    def token_words(self, k: int) -> int:
        return self.words[k + 1] - self.words[k]


class _Builder:
    """Parser target (``start``/``data``/``end``/``close``) that renders into a ``Flat``.

    Fed either by lxml's parser directly -- no tree is built, which is what keeps
    a split fast and small -- or by ``_replay`` over an existing tree.
    """

    def __init__(self, amp_escaped: bool = False) -> None:
        # libxml2 (2.14 at least) with a parser target and entity substitution
        # off hands over every "&" in an attribute value as "&#38;" (text is
        # unaffected); see _AMP_ESCAPED.
        self.amp_escaped = amp_escaped
        self.flat = Flat()
        self.stack: list[tuple[int, str]] = []
        self.buf: list[str] = []
        self.pending: tuple[int, str, bool] | None = None  # open token not yet written
        self.last_end = -1  # element whose end was the last event (owns the next text)
        self.closes: dict[str, str] = {}

    def _text(self) -> str:
        if not self.buf:
            return ""
        text = " ".join("".join(self.buf).split())
        self.buf.clear()
        return text

    def _close_token(self, tag: str) -> str:
        tok = self.closes.get(tag)
        if tok is None:
            tok = self.closes[tag] = "</" + tag + ">"
        return tok

    def data(self, data: str) -> None:
        self.buf.append(data)

    def start(self, tag: str, attrib) -> None:
        f = self.flat
        text = self._text()
        if self.pending is not None:  # the parent has a child: write its open token
            i, head, _ = self.pending
            f.open_tok[i] = len(f.tokens)
            f.tokens.append(head + "> " + text if text else head + ">")
            f.close_tok[i] = 0
            self.pending = None
        elif text and self.last_end >= 0:
            f.tail_tok[self.last_end] = len(f.tokens)
            f.tokens.append(text)
        if tag[0] == "{":
            tag = tag.rsplit("}", 1)[1]
        if self.amp_escaped and any("&" in v for v in attrib.values()):
            attrib = {k: v.replace("&#38;", "&") for k, v in attrib.items()}
        i = len(f.ids)
        bid = attrib.get(ID_ATTR)
        if bid is None:
            f.missing_ids = True
        f.ids.append(bid)
        f.depth.append(len(self.stack))
        f.interactive.append(is_interactive(tag, attrib.get("role"), attrib.get("is_clickable")))
        head = "<" + tag
        if bid is not None:
            head += " id=" + bid
        meta = attr_words(attrib.items())
        if meta:
            head += " " + meta
        for column in (f.open_tok, f.end_tok, f.stop):
            column.append(0)
        f.close_tok.append(-1)
        f.tail_tok.append(-1)
        self.pending = (i, head, tag == "text")
        self.stack.append((i, tag))
        self.last_end = -1

    def end(self, _tag: str = "") -> None:
        f = self.flat
        text = self._text()
        i, tag = self.stack.pop()
        tokens = f.tokens
        if self.pending is not None:  # a leaf
            _, head, text_node = self.pending
            self.pending = None
            f.open_tok[i] = len(tokens)
            if text_node:  # Mind2Web text node: its bare text
                tokens.append(text)
            elif text:
                tokens.append(head + "> " + text)
                f.close_tok[i] = len(tokens)
                tokens.append(self._close_token(tag))
            else:
                tokens.append(head + " />")
        else:
            if text and self.last_end >= 0:
                f.tail_tok[self.last_end] = len(tokens)
                tokens.append(text)
            f.close_tok[i] = len(tokens)
            tokens.append(self._close_token(tag))
        f.end_tok[i] = len(tokens)
        f.stop[i] = len(f.ids)
        self.last_end = i

    def close(self) -> Flat:
        f = self.flat
        f.words = array("l", accumulate((len(t.split()) for t in f.tokens), initial=0))
        return f


def _replay(root, builder: _Builder) -> Flat:
    """Feed an existing tree to ``builder`` as parser events."""
    for event, el in etree.iterwalk(root, events=("start", "end"), tag=etree.Element):
        if event == "start":
            builder.start(el.tag, el.attrib)
            if el.text:
                builder.data(el.text)
        else:
            builder.end()
            if el.tail and el is not root:
                builder.data(el.tail)
    return builder.close()


def flatten(root) -> Flat:
    """Render an element and its descendants into a ``Flat`` in one pass."""
    return _replay(root, _Builder())


class _AmpProbe:
    def start(self, _tag, attrib) -> None:
        self.value = attrib["v"]

    def end(self, _tag) -> None:
        pass

    def close(self) -> bool:
        return self.value == "&#38;"


#: Whether this libxml2 hands "&" in attribute values to a parser target as "&#38;".
_AMP_ESCAPED = etree.fromstring(b'<a v="&amp;"/>', xml_parser(_AmpProbe()))


def flatten_markup(html: str) -> Flat:
    """Render a page given as markup, the way ``split_snippets`` reads it.

    Fast path: cleaned HTML (every element has a ``backend_node_id``) that is
    well-formed XML, as Mind2Web's and ``clean_html``'s output are, is rendered
    straight from the parser's events without building a tree. Anything else
    goes through ``load_tree`` (forgiving parse, cleaning when ids are missing).
    """
    if isinstance(html, str) and html.strip()[:1] == "<":
        parser = xml_parser(_Builder(amp_escaped=_AMP_ESCAPED))
        try:
            flat = etree.fromstring(html.encode("utf-8", errors="replace"), parser)
        except (etree.XMLSyntaxError, ValueError):
            flat = None
        if flat is not None and len(flat) and not flat.missing_ids:
            return flat
    return flatten(load_tree(html))


def join_tokens(tokens: list[str], ranges) -> str:
    """Concatenate token ranges ``[(start, stop), ...]`` in document order."""
    parts: list[str] = []
    for start, end in sorted(ranges):
        parts.extend(t for t in tokens[start:end] if t)
    return " ".join(parts)


def render_element(el) -> str:
    """One element with its descendants, compact (see the module docstring)."""
    flat = flatten(el)
    return join_tokens(flat.tokens, [(0, len(flat.tokens))])


def render_page(cleaned_html: str) -> str:
    """The whole page rendered like ``render_element`` (the raw-HTML baseline's view).

    Accepts Mind2Web ``cleaned_html`` or raw HTML (cleaned first)."""
    flat = flatten_markup(cleaned_html)
    return join_tokens(flat.tokens, [(0, len(flat.tokens))])
