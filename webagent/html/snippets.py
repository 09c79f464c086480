"""Cut a page's DOM into snippets ("pages" in ReadAgent's Appendix E) by depth.

Depth counts ancestors: the document root ``<html>`` is depth 0, ``<body>``
depth 1, ``<body>``'s children depth 2, and so on (Mind2Web's ``cleaned_html``
is rooted at ``<html>``; its ``<head>`` is already gone). The page is rendered
once (``render.flatten_markup``); cutting is a walk over element numbers, so
both cuts are linear in the page size.

**An integer depth N is the paper's cut** (Appendix E.1: "decomposing the HTML
into snippets with elements at a target depth and their descendants. We test the
depth from 5 to 7"), with no word budget:

* every element at depth N, with its descendants, is one snippet;
* what lies above depth N -- elements shallower than N that contain no depth-N
  element (with their subtrees), and the *shells* of the depth-N elements'
  ancestors (their own tag, attributes, text and children's tail text, without
  the children) -- is kept in *leftover* snippets: each maximal run of such
  pieces between two depth-N subtrees, in document order, is one snippet. So
  every element id is in exactly one snippet, and the snippets' ids in order
  are the page's ids in document order. A page shallower than N is one leftover.

**``depth="auto"`` is ours, not the paper's** (the default): a budget-driven cut,
``split_by_budget`` at the depth ``choose_depth`` picks. Its rules, at a
starting depth d:

* an element at depth d, with its descendants, is one unit;
* an element above depth d that is a leaf, or is interactive (``a``,
  ``button``, ``input``, ``select``, ``option``, ``textarea``, ``label``,
  ``is_clickable="true"`` or a widget role), is one unit with its whole subtree:
  the cut never falls inside an interactive element;
* any other element above depth d contributes a shell unit and its children are
  cut in turn;
* a unit over ``budget_words`` is split the same way (shell + children,
  recursively), unless it is interactive, has no child elements, or its own
  text alone is over the budget while its children fit in it (prose with
  inline markup stays whole);
* so a snippet is over the budget only when it is one such indivisible unit,
  or the shell of an element whose own text alone is over the budget;
* consecutive units are merged into one snippet while the merged snippet stays
  within ``budget_words`` and one side of the merge is "tiny" (under a quarter
  of the budget). Two mid-sized units are never merged.

Each snippet's text is the page's own rendering restricted to its pieces, in
document order (a shell grouped with its children renders as the real nesting).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from lxml import etree

from webagent.errors import UserError
from webagent.html.render import Flat, flatten, flatten_markup, join_tokens

#: ``depth="auto"`` picks the shallowest depth that leaves at most this fraction
#: of the page's words in over-budget (splittable) units.
AUTO_OVERSIZE_FRACTION = 0.10
#: A unit under ``budget_words * TINY_FRACTION`` words may merge with a neighbour.
TINY_FRACTION = 0.25


@dataclass(frozen=True)
class Snippet:
    index: int  # 0-based, document order
    ids: list[str]  # backend_node_id of every element inside, document order
    text: str  # compact deterministic rendering (see render)
    words: int  # len(text.split())


def _oversize_by_depth(flat: Flat, budget_words: int) -> dict[int, int]:
    """Words in splittable over-budget units if the page were cut at each depth.

    An element at depth d is a unit of a depth-d cut when none of its ancestors
    is interactive (an interactive ancestor keeps it whole). It counts if it
    could be split (has children, is not interactive) and is over the budget.
    """
    over: dict[int, int] = {}
    stop, interactive, n = flat.stop, flat.interactive, len(flat)
    i = 0
    while i < n:  # document order; an interactive subtree is skipped whole
        if interactive[i]:
            i = stop[i]
            continue
        if stop[i] > i + 1:
            w = flat.subtree_words(i)
            if w > budget_words:
                d = flat.depth[i]
                over[d] = over.get(d, 0) + w
        i += 1
    return over


def _auto_depth(flat: Flat, budget_words: int) -> int:
    total = flat.words[-1]
    over = _oversize_by_depth(flat, budget_words)
    limit = AUTO_OVERSIZE_FRACTION * total
    max_depth = max(flat.depth) if len(flat) else 0
    for d in range(1, max_depth + 1):
        if over.get(d, 0) <= limit:
            return d
    return max(1, max_depth)


def choose_depth(root, budget_words: int) -> int:
    """The depth ``depth="auto"`` uses (our rule; the paper tests fixed depths 5-7).

    Rule: the shallowest depth d >= 1 at which cutting the page leaves at most
    10% (``AUTO_OVERSIZE_FRACTION``) of the page's rendered words inside units
    that are over ``budget_words`` and could still be split (non-interactive,
    with child elements). Oversized words can only shrink as d grows (a child
    of a splittable over-budget unit is smaller than it), so this is the
    coarsest cut that mostly respects the budget by itself; the few remaining
    oversized units are split by the budget rule, and the many small units a
    deep cut makes are merged. A page within the budget gets depth 1 (``<body>``;
    ``<html>`` is depth 0).
    """
    if isinstance(root, etree._ElementTree):
        root = root.getroot()
    _check_budget(budget_words)
    return _auto_depth(flatten(root), budget_words)


def _check_budget(budget_words) -> None:
    if isinstance(budget_words, bool) or not isinstance(budget_words, int) or budget_words < 1:
        raise UserError(f"budget_words must be a positive integer, got {budget_words!r}")


def _units(flat: Flat, target: int, budget_words: int) -> list[tuple[bool, int]]:
    """The cut, as ``(is_shell, element)`` in document order."""
    units: list[tuple[bool, int]] = []
    stack = [(0, 0)]
    stop, interactive = flat.stop, flat.interactive
    while stack:
        i, d = stack.pop()
        whole = stop[i] == i + 1 or interactive[i]
        if not whole and d >= target:
            words = flat.subtree_words(i)
            if words <= budget_words:
                whole = True
            else:
                # Splitting cannot help when the element's own text alone is over
                # the budget and its children would fit in one snippet (prose
                # with inline markup): keep it whole rather than tear it apart.
                own = _shell_words(flat, i)
                whole = own > budget_words and words - own <= budget_words
        if whole:
            units.append((False, i))
        else:
            units.append((True, i))
            stack.extend((c, d + 1) for c in reversed(flat.children(i)))
    return units


def _shell_ranges(flat: Flat, i: int) -> list[tuple[int, int]]:
    o = flat.open_tok[i]
    ranges = [(o, o + 1)]
    for c in flat.children(i):
        t = flat.tail_tok[c]
        if t >= 0:
            ranges.append((t, t + 1))
    c = flat.close_tok[i]
    if c >= 0:
        ranges.append((c, c + 1))
    return ranges


def _shell_words(flat: Flat, i: int) -> int:
    return sum(flat.token_words(a) for a, _ in _shell_ranges(flat, i))


Unit = tuple[bool, int]  # (is_shell, element number)


def _check_depth(depth) -> None:
    if depth != "auto" and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 0):
        raise UserError(f"depth must be an integer >= 0 or 'auto', got {depth!r}")


def _depth_groups(flat: Flat, target: int) -> list[list[Unit]]:
    """The paper's cut: one group per depth-``target`` subtree, leftovers between."""
    groups: list[list[Unit]] = []
    leftover: list[Unit] = []
    depth, stop, n = flat.depth, flat.stop, len(flat)
    i = 0
    while i < n:  # document order; only elements at depth <= target are visited
        if depth[i] == target:
            if leftover:
                groups.append(leftover)
                leftover = []
            groups.append([(False, i)])
            i = stop[i]
        elif stop[i] == i + 1:  # a leaf above the cut
            leftover.append((False, i))
            i += 1
        else:  # its shell here; its children are visited next
            leftover.append((True, i))
            i += 1
    if leftover:
        groups.append(leftover)
    return groups


def _budget_groups(flat: Flat, target: int, budget_words: int) -> list[list[Unit]]:
    """Units of the budget-driven cut at ``target``, merged under the tiny rule."""
    tiny = max(1, int(budget_words * TINY_FRACTION))
    groups: list[list[Unit]] = []
    current: list[Unit] = []
    current_words = 0
    for unit in _units(flat, target, budget_words):
        is_shell, i = unit
        w = _shell_words(flat, i) if is_shell else flat.subtree_words(i)
        if current and current_words + w <= budget_words and (current_words < tiny or w < tiny):
            current.append(unit)
            current_words += w
        else:
            if current:
                groups.append(current)
            current, current_words = [unit], w
    if current:
        groups.append(current)
    return groups


def _render_groups(flat: Flat, groups: list[list[Unit]]) -> list[Snippet]:
    snippets: list[Snippet] = []
    all_ids = cast(list[str], flat.ids)  # flatten_markup cleans a page with elements lacking one
    for index, group in enumerate(groups):
        ranges: list[tuple[int, int]] = []
        ids: list[str] = []
        for is_shell, i in group:
            if is_shell:
                ranges.extend(_shell_ranges(flat, i))
                ids.append(all_ids[i])
            else:
                ranges.append((flat.open_tok[i], flat.end_tok[i]))
                ids.extend(all_ids[i : flat.stop[i]])
        text = join_tokens(flat.tokens, ranges)
        snippets.append(Snippet(index=index, ids=ids, text=text, words=len(text.split())))
    return snippets


def split_snippets(cleaned_html: str, depth: int | str = "auto", budget_words: int = 300) -> list[Snippet]:
    """Cut a page into snippets (rules in the module docstring).

    ``depth`` is an int >= 0 -- the paper's cut at that depth (``<html>`` is
    depth 0), ``budget_words`` unused -- or ``"auto"`` (ours, the default): the
    budget-driven cut of ``split_by_budget`` at the depth ``choose_depth`` picks.
    ``cleaned_html`` is Mind2Web ``cleaned_html`` (used as is) or raw HTML
    (cleaned with ``clean_html`` first if any element lacks ``backend_node_id``).
    Raises ``UserError`` for empty input, input without elements, or bad options.
    """
    _check_depth(depth)
    _check_budget(budget_words)
    flat = flatten_markup(cleaned_html)
    if isinstance(depth, str):  # "auto" (_check_depth refused any other string)
        groups = _budget_groups(flat, _auto_depth(flat, budget_words), budget_words)
    else:
        groups = _depth_groups(flat, depth)
    return _render_groups(flat, groups)


def split_by_budget(cleaned_html: str, depth: int, budget_words: int = 300) -> list[Snippet]:
    """Ours: the budget-driven cut starting at ``depth`` (what ``"auto"`` runs).

    Units at ``depth`` (interactive elements above it kept whole), over-budget
    units split at their children, tiny neighbours merged; see the module docstring.
    """
    if depth == "auto" or isinstance(depth, bool):
        raise UserError(f"split_by_budget needs an integer depth >= 0, got {depth!r}")
    _check_depth(depth)
    _check_budget(budget_words)
    flat = flatten_markup(cleaned_html)
    return _render_groups(flat, _budget_groups(flat, depth, budget_words))
