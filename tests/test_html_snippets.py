"""split_snippets / choose_depth: depth-based DOM snippets and their invariants."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from lxml import etree

from webagent.errors import UserError
from webagent.html import (
    choose_depth,
    clean_html,
    parse_cleaned,
    render_element,
    render_page,
    split_by_budget,
    split_snippets,
)
from webagent.html.dom import is_interactive

FIXTURES = Path(__file__).parent / "fixtures"
ID = "backend_node_id"


def _fixture_pages() -> dict[str, str]:
    """Every distinct cleaned page in the Mind2Web fixtures, plus the raw pages cleaned."""
    by_digest: dict[str, tuple[str, str]] = {}
    for path in sorted((FIXTURES / "html").glob("*.html")):
        html = clean_html(path.read_text(encoding="utf-8"))
        by_digest.setdefault(hashlib.sha1(html.encode()).hexdigest(), (path.stem, html))
    for path in sorted((FIXTURES / "mind2web").glob("*/*.json")):
        for task in json.loads(path.read_text(encoding="utf-8")):
            for n, action in enumerate(task["actions"]):
                html = action["cleaned_html"]
                name = f"{task['website']}-{task['annotation_id'][:4]}-{n}"
                by_digest.setdefault(hashlib.sha1(html.encode()).hexdigest(), (name, html))
    return dict(by_digest.values())


PAGES = _fixture_pages()
DEPTHS = [3, 4, 5, 6, 7, 8, "auto"]


_SHOWN = re.compile(r"<([^\s<>/]+) id=([^\s<>/]+)")


def _interactive(el) -> bool:
    return is_interactive(el.tag, el.get("role"), el.get("is_clickable"))


def _depth(el) -> int:
    return sum(1 for _ in el.iterancestors())


def check_common(cleaned: str, snippets) -> tuple[dict, dict, list]:
    """What holds for every cut: ids, order, words, rendering."""
    root = parse_cleaned(cleaned)
    elements = list(root.iter(tag=etree.Element))
    by_id = {el.get(ID): el for el in elements}

    # every id in exactly one snippet, snippets in document order
    assert [i for s in snippets for i in s.ids] == [el.get(ID) for el in elements]
    owner = {i: s.index for s in snippets for i in s.ids}
    assert [s.index for s in snippets] == list(range(len(snippets)))

    # nothing lost or duplicated: the snippets' words are exactly the page's words
    page_words = Counter(render_page(cleaned).split())
    assert Counter(w for s in snippets for w in s.text.split()) == page_words

    for s in snippets:
        assert s.words == len(s.text.split()) and s.text == " ".join(s.text.split())
        # each element's id is shown, with its tag, in its own snippet (Mind2Web
        # text nodes render as bare text)
        shown = set(_SHOWN.findall(s.text))
        for i in s.ids:
            if by_id[i].tag != "text":
                assert (by_id[i].tag, i) in shown, i
    return by_id, owner, elements


def check_paper_cut(cleaned: str, snippets, depth: int) -> None:
    """The paper's cut: depth-N subtrees, one snippet each; leftover runs between them."""
    by_id, _, elements = check_common(cleaned, snippets)
    at_depth = [el for el in elements if _depth(el) == depth]
    subtrees = {el.get(ID): [d.get(ID) for d in el.iter(tag=etree.Element)] for el in at_depth}
    kinds = []
    for s in snippets:
        first = s.ids[0]
        if first in subtrees:  # exactly one depth-N element and its descendants
            assert s.ids == subtrees[first]
            assert s.text == render_element(by_id[first])
            kinds.append("cut")
        else:  # a leftover holds only elements above depth N
            assert all(_depth(by_id[i]) < depth for i in s.ids)
            kinds.append("leftover")
    assert kinds.count("cut") == len(at_depth)
    # leftovers are maximal runs: never two in a row
    assert all(not (a == b == "leftover") for a, b in zip(kinds, kinds[1:]))


def check_budget_cut(cleaned: str, snippets, budget: int, depth) -> None:
    """Our budget-driven cut (``auto`` and ``split_by_budget``)."""
    by_id, owner, elements = check_common(cleaned, snippets)
    for s in snippets:
        # over budget only as one unit: an indivisible subtree, or a shell with
        # too much text of its own
        if s.words > budget:
            first = by_id[s.ids[0]]
            own = len((first.text or "").split()) + sum(len((c.tail or "").split()) for c in first)
            if s.ids == [first.get(ID)] and len(first):
                assert own > budget - 25  # 25: tag, id and at most 20 attribute words
            else:
                assert s.ids == [el.get(ID) for el in first.iter(tag=etree.Element)]
                assert _interactive(first) or len(first) == 0 or own > budget - 25

    # an interactive element is never cut from its subtree
    for el in elements:
        if _interactive(el):
            assert {owner[d.get(ID)] for d in el.iter(tag=etree.Element)} == {owner[el.get(ID)]}

    # the cut: an element at the starting depth that fits the budget stays whole
    if depth != "auto":
        for el in elements:
            if _depth(el) != depth or any(_interactive(a) for a in el.iterancestors()):
                continue
            if len(render_element(el).split()) <= budget:
                assert len({owner[d.get(ID)] for d in el.iter(tag=etree.Element)}) == 1


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("name", sorted(PAGES))
def test_invariants_on_fixture_pages(name, depth):
    cleaned = PAGES[name]
    if depth == "auto":
        for budget in (300, 60):
            snippets = split_snippets(cleaned, depth=depth, budget_words=budget)
            check_budget_cut(cleaned, snippets, budget, depth)
            assert split_snippets(cleaned, depth=depth, budget_words=budget) == snippets
    else:
        snippets = split_snippets(cleaned, depth=depth)
        check_paper_cut(cleaned, snippets, depth)
        # the budget plays no part in the paper's cut
        assert split_snippets(cleaned, depth=depth, budget_words=20) == snippets


@pytest.mark.parametrize("depth", [3, 6])
@pytest.mark.parametrize("name", sorted(PAGES))
def test_budget_cut_invariants_on_fixture_pages(name, depth):
    cleaned = PAGES[name]
    for budget in (300, 60):
        check_budget_cut(cleaned, split_by_budget(cleaned, depth, budget), budget, depth)


def test_paper_cut_differs_from_the_budget_cut_on_a_real_page():
    cleaned = PAGES["aa_find_flights"]
    paper, ours = split_snippets(cleaned, depth=6), split_by_budget(cleaned, 6, 300)
    assert [s.ids for s in paper] != [s.ids for s in ours]
    # no merging: more snippets than the budget cut, and some are tiny
    assert len(paper) > len(ours) and min(s.words for s in paper) < 10


def test_fixtures_include_a_page_over_100kb():
    assert max(len(p.encode()) for p in PAGES.values()) > 100_000


# ---------------------------------------------------------------- hand-written cases
def _page(body: str) -> str:
    return clean_html(f"<html><body>{body}</body></html>")


def _owner(snippets, cleaned: str, xpath: str) -> set[int]:
    root = parse_cleaned(cleaned)
    ids = {d.get(ID) for el in root.xpath(xpath) for d in el.iter(tag=etree.Element)}
    return {s.index for s in snippets if ids & set(s.ids)}


LONG = " ".join(f"w{i}" for i in range(400))
# Mind2Web-style ids; depths (<html> = 0): body 1; header, main, footer 2; a, the
# sections, select, p16 3; h2, p8, div10, the options 4; p11, p12 5.
HAND = (
    '<html backend_node_id="1"><body backend_node_id="2">'
    '<header backend_node_id="3">Site <a backend_node_id="4">Home</a></header>'
    '<main backend_node_id="5">Intro words'
    '<section backend_node_id="6"><h2 backend_node_id="7">One</h2>'
    '<p backend_node_id="8">alpha beta</p></section> between '
    '<section backend_node_id="9"><div backend_node_id="10"><p backend_node_id="11">' + LONG + "</p>"
    '<p backend_node_id="12">gamma</p></div></section>'
    '<select backend_node_id="13"><option backend_node_id="14">Red</option>'
    '<option backend_node_id="15">Blue</option></select>'
    '<p backend_node_id="16">short</p>after</main>'
    '<footer backend_node_id="17">c</footer></body></html>'
)


def test_paper_cut_is_exactly_the_depth_subtrees_plus_leftovers():
    snippets = split_snippets(HAND, depth=4)
    assert [s.ids for s in snippets] == [
        ["1", "2", "3", "4", "5", "6"],  # leftover: shells of the ancestors, header (ends above 4)
        ["7"],
        ["8"],  # the depth-4 subtrees, tiny ones not merged
        ["9"],  # leftover: the second section's shell
        ["10", "11", "12"],  # a 400-word depth-4 subtree, not split
        ["13"],
        ["14"],
        ["15"],  # the cut falls inside the select, as in the paper
        ["16", "17"],  # leftover: a shallow leaf and the footer
    ]
    texts = [s.text for s in snippets]
    assert texts[0] == (
        "<html id=1> <body id=2> <header id=3> Site <a id=4> Home </a> </header> "
        "<main id=5> Intro words <section id=6> </section> between after </main> "
        "</body> </html>"
    )
    assert texts[1:4] == ["<h2 id=7> One </h2>", "<p id=8> alpha beta </p>", "<section id=9> </section>"]
    assert texts[4] == f"<div id=10> <p id=11> {LONG} </p> <p id=12> gamma </p> </div>"
    assert texts[5:] == [
        "<select id=13> </select>",
        "<option id=14> Red </option>",
        "<option id=15> Blue </option>",
        "<p id=16> short </p> <footer id=17> c </footer>",
    ]
    check_paper_cut(HAND, snippets, 4)


def test_paper_cut_depth_counts_from_html_as_zero():
    assert [s.ids[0] for s in split_snippets(HAND, depth=2)] == ["1", "3", "5", "17"]
    assert [s.ids for s in split_snippets(HAND, depth=1)] == [["1"], [str(i) for i in range(2, 18)]]
    (whole,) = split_snippets(HAND, depth=0)
    assert whole.text == render_page(HAND)


def test_paper_cut_deeper_than_the_page_is_one_leftover():
    (whole,) = split_snippets(HAND, depth=9)
    assert whole.ids == [str(i) for i in range(1, 18)] and whole.text == render_page(HAND)


def test_budget_cut_of_the_same_page_merges_splits_and_keeps_widgets_whole():
    ours = split_by_budget(HAND, 4, 300)
    owner = {i: s.index for s in ours for i in s.ids}
    assert owner["13"] == owner["14"] == owner["15"]  # the select stays whole
    assert owner["7"] == owner["8"]  # tiny neighbours merged
    assert owner["11"] != owner["12"]  # the 400-word unit split
    check_budget_cut(HAND, ours, 300, 4)


def test_interactive_element_spanning_the_cut_stays_whole():
    # html0 body1 div2 button3 span4 b5: a cut at depth 4 falls inside the button
    cleaned = _page("<div><button><span><b>Deep</b> label text</span> more words here</button><p>other</p></div>")
    snippets = split_by_budget(cleaned, 4, 2)  # tiny budget: no merging
    (i,) = _owner(snippets, cleaned, "//button")
    root = parse_cleaned(cleaned)
    button_ids = [d.get(ID) for d in root.find(".//button").iter()]
    assert snippets[i].ids == button_ids
    assert snippets[i].words > 2  # oversize, but an interactive element is never split
    assert snippets[i].text.startswith("<button id=") and "<b id=" in snippets[i].text


def test_shallow_leaf_above_the_depth_is_kept_in_a_leftover():
    cleaned = _page("<p>Intro text</p><div><div><div><span>deep inside</span></div></div></div>")
    snippets = split_snippets(cleaned, depth=5)
    (i,) = _owner(snippets, cleaned, "//p")
    assert "<p id=" in snippets[i].text and "Intro text" in snippets[i].text
    assert [s.text.split()[0] for s in snippets] == ["<html", "<span"]
    check_paper_cut(cleaned, snippets, 5)


def test_ancestor_text_and_ids_are_kept_in_a_leftover():
    cleaned = _page("<div>Heading words <p>first</p> between <p>second</p> after</div>")
    snippets = split_snippets(cleaned, depth=3)
    root = parse_cleaned(cleaned)
    html_id, body_id, div_id = (el.get(ID) for el in root.iter() if el.tag in ("html", "body", "div"))
    assert snippets[0].ids == [html_id, body_id, div_id]
    assert snippets[0].text == (
        f"<html id={html_id}> <body id={body_id}> <div id={div_id}> Heading words between after </div> </body> </html>"
    )
    assert [s.text.split()[-2] for s in snippets[1:]] == ["first", "second"]


def test_ancestor_text_and_ids_are_kept_in_a_shell():
    cleaned = _page("<div>Heading words <p>first</p> between <p>second</p> after</div>")
    snippets = split_by_budget(cleaned, 3, 3)
    root = parse_cleaned(cleaned)
    div_id = root.find(".//div").get(ID)
    (shell,) = [s for s in snippets if div_id in s.ids]
    assert shell.ids == [div_id]
    assert shell.text == f"<div id={div_id}> Heading words between after </div>"


def test_oversize_snippet_is_split_at_children():
    paragraph = " ".join(f"w{i}" for i in range(40))
    cleaned = _page(f"<div><p>{paragraph}</p><p>{paragraph}</p><p>{paragraph}</p></div>")
    snippets = split_by_budget(cleaned, 1, 60)
    assert len(snippets) == 3
    assert all(s.words <= 60 for s in snippets)
    assert [s.text.count("<p id=") for s in snippets] == [1, 1, 1]
    check_budget_cut(cleaned, snippets, 60, 1)


def test_tiny_neighbours_are_merged_up_to_the_budget():
    cleaned = _page("".join(f"<p>item number {i}</p>" for i in range(20)))
    snippets = split_by_budget(cleaned, 2, 50)
    assert 2 <= len(snippets) < 20
    assert all(s.words <= 50 for s in snippets)
    assert [s.words > 40 for s in snippets[:-1]] == [True] * (len(snippets) - 1)  # packed
    check_budget_cut(cleaned, snippets, 50, 2)


def test_mid_sized_units_are_not_merged():
    words = " ".join(f"w{i}" for i in range(100))
    cleaned = _page(f"<section>{words}</section><section>{words}</section><section>{words}</section>")
    snippets = split_by_budget(cleaned, 2, 300)
    assert [s.text.count("<section id=") for s in snippets] == [1, 1, 1]


def test_mind2web_text_nodes_and_ids():
    cleaned = (
        '<html backend_node_id="1"><body backend_node_id="2"><button backend_node_id="3">'
        '<text backend_node_id="4">Go</text></button></body></html>'
    )
    (only,) = split_snippets(cleaned, depth="auto")
    assert only.ids == ["1", "2", "3", "4"]
    assert only.text == "<html id=1> <body id=2> <button id=3> Go </button> </body> </html>"


def test_raw_html_is_cleaned_first():
    raw = "<html><body><script>x()</script><h1>Title</h1><a href='/'>Home</a></body></html>"
    snippets = split_snippets(raw, depth=2)
    assert [i for s in snippets for i in s.ids] == [el.get(ID) for el in parse_cleaned(clean_html(raw)).iter()]
    assert "x()" not in " ".join(s.text for s in snippets)


def test_choose_depth_rule():
    items = "".join(f"<li>{' '.join(['word'] * 10)} {i}</li>" for i in range(50))
    cleaned = _page(f"<main><section><ul>{items}</ul></section></main>")
    # html0 body1 main2 section3 ul4 li5: only at depth 5 are the units within 100 words
    assert choose_depth(parse_cleaned(cleaned), 100) == 5
    assert split_snippets(cleaned, "auto", 100) == split_by_budget(cleaned, 5, 100)
    # a page within the budget needs no depth at all
    assert choose_depth(parse_cleaned(_page("<p>short</p>")), 300) == 1
    assert len(split_snippets(_page("<p>short</p>"))) == 1


def test_choose_depth_ignores_a_small_deep_outlier():
    # one oversized-but-splittable block holding < 10% of the words does not force depth
    small = "".join(f"<p>{' '.join(['w'] * 40)}</p>" for _ in range(30))  # 30 x ~44 words
    deep = "<div><div><div><div>" + "<span>x y</span>" * 25 + "</div></div></div></div>"
    cleaned = _page(f"<article>{small}</article><aside>{deep}</aside>")
    assert choose_depth(parse_cleaned(cleaned), 100) == 3


@pytest.mark.parametrize("bad", ["", "  ", "<!-- nothing -->"])
def test_empty_input_raises_user_error(bad):
    with pytest.raises(UserError):
        split_snippets(bad)


@pytest.mark.parametrize(
    "kwargs", [{"depth": -1}, {"depth": "deep"}, {"depth": 2.5}, {"budget_words": 0}, {"budget_words": "300"}]
)
def test_bad_options_raise_user_error(kwargs):
    with pytest.raises(UserError):
        split_snippets("<p>x</p>", **kwargs)
    with pytest.raises(UserError):
        split_by_budget("<p>x</p>", **{"depth": 2, **kwargs})


def test_budget_cut_needs_an_integer_depth():
    with pytest.raises(UserError):
        split_by_budget("<p>x</p>", "auto")


def test_one_megabyte_page_splits_and_keeps_every_id():
    big = max(PAGES.values(), key=len)
    root = parse_cleaned(big)
    body = root.find("body")
    copies = 1_000_000 // len(big) + 1
    for _ in range(copies):
        body.extend(etree.fromstring(etree.tostring(c)) for c in parse_cleaned(big).find("body"))
    for n, el in enumerate(root.iter(tag=etree.Element)):
        el.set(ID, str(n + 1))
    page = etree.tostring(root, encoding="unicode")
    assert len(page) > 1_000_000
    snippets = split_snippets(page)  # speed is measured in bench/gated/snippets.py, not here
    assert len(snippets) > 100
    ids = [i for s in snippets for i in s.ids]
    assert len(ids) == len(set(ids)) == n + 1


def test_cli_snippets_shows_the_paper_cut_and_a_summary():
    from click.testing import CliRunner

    from mind2web.cli import main

    page = FIXTURES / "html" / "aa_find_flights.html"
    cleaned = clean_html(page.read_text(encoding="utf-8"))
    for depth in ("6", "auto"):
        result = CliRunner().invoke(main, ["snippets", str(page), "--depth", depth])
        assert result.exit_code == 0, result.output
        rows = [json.loads(line) for line in result.stdout.splitlines()]
        want = split_snippets(cleaned, depth=int(depth) if depth.isdigit() else depth)
        assert [r["ids"] for r in rows] == [s.ids for s in want]
        sizes = sorted(s.words for s in want)
        how = "paper's cut at depth 6" if depth == "6" else "auto (ours): depth"
        assert f"{len(want)} snippets, {how}" in result.stderr
        assert f"words min {sizes[0]} / " in result.stderr and f"/ max {sizes[-1]}" in result.stderr
