"""render_element / render_page: MindAct-style compact rendering."""

from __future__ import annotations

from webagent.html import clean_html, parse_cleaned, render_element, render_page


def _render(cleaned: str) -> str:
    return render_element(parse_cleaned(cleaned))


def test_button_renders_like_mindact():
    html = (
        '<button backend_node_id="123" class="btn x1" bounding_box_rect="1,2,3,4" '
        'is_clickable="true" type="submit" aria_label="Search">  Search </button>'
    )
    assert _render(html) == "<button id=123 submit search> Search </button>"


def test_empty_element_self_closes():
    assert _render('<a backend_node_id="5" title="Home"></a>') == "<a id=5 home />"
    assert _render('<div backend_node_id="6"></div>') == "<div id=6 />"


def test_select_with_options_matches_the_prompt_example():
    # MindAct's demonstration: <select id=1 type> <option reservations true> Dine in </option> ...
    html = (
        '<select backend_node_id="1" name="type"><option backend_node_id="2" value="reservations" '
        'option_selected="true">Dine in</option><option backend_node_id="3" value="pickup">'
        "Pickup</option></select>"
    )
    assert _render(html) == (
        "<select id=1 type> <option id=2 reservations true> Dine in </option> "
        "<option id=3 pickup> Pickup </option> </select>"
    )


def test_attribute_words_order_case_dedup_and_caps():
    html = (
        '<input backend_node_id="7" placeholder="City or airport" name="origin" '
        'aria_label="Enter your departing city, airport name, or airport code" '
        'type="text" role="combobox" title="https://example.com/x" value="none" '
        'input_value="New York" id="segments0.origin" class="aaAutoComplete"/>'
    )
    # role, type, aria_label (5 words), name, placeholder, input_value; URL and "none" skipped;
    # HTML id and class never shown.
    assert _render(html) == (
        "<input id=7 combobox text enter your departing city, airport origin city or airport new york />"
    )
    dup = '<input backend_node_id="8" type="submit" value="Submit"/>'
    assert _render(dup) == "<input id=8 submit />"


def test_text_nodes_render_as_bare_text_and_whitespace_collapses():
    html = (
        '<div backend_node_id="1"><text backend_node_id="2">Hello\n\n  there</text>'
        '<span backend_node_id="3"> big\tworld </span>  and   more </div>'
    )
    assert _render(html) == "<div id=1> Hello there <span id=3> big world </span> and more </div>"


def test_mixed_content_keeps_document_order():
    html = '<p backend_node_id="1">a <b backend_node_id="2">b</b> c <i backend_node_id="3">d</i> e</p>'
    assert _render(html) == "<p id=1> a <b id=2> b </b> c <i id=3> d </i> e </p>"


def test_render_element_excludes_own_tail():
    root = parse_cleaned('<p backend_node_id="1"><b backend_node_id="2">x</b> tail</p>')
    assert render_element(root.find("b")) == "<b id=2> x </b>"


def test_render_page_cleans_raw_html_and_is_deterministic():
    raw = "<html><head><title>t</title></head><body><h1>Find flights</h1><button>Go</button></body></html>"
    first = render_page(raw)
    assert first == "<html id=1> <body id=2> <h1 id=3> Find flights </h1> <button id=4> Go </button> </body> </html>"
    assert render_page(raw) == first
    assert render_page(clean_html(raw)) == first


def test_entities_in_attribute_values_render_decoded():
    # the parser-event path (what split_snippets uses) once showed "&" as "&#38;"
    cleaned = (
        '<html backend_node_id="1"><body backend_node_id="2"><a backend_node_id="3" '
        'aria_label="Terms &amp; Conditions &lt;2&gt; &amp;amp;">T&amp;C</a></body></html>'
    )
    expected = "<a id=3 terms & conditions <2> &amp;> T&C </a>"
    assert _render(cleaned).split("<body id=2> ")[1].startswith(expected)
    assert expected in render_page(cleaned)


def test_parser_events_and_tree_walk_render_identically():
    # split_snippets renders straight from parser events; render_element walks a tree
    from pathlib import Path

    from webagent.html.render import flatten, flatten_markup

    for path in sorted((Path(__file__).parent / "fixtures" / "html").glob("*.html")):
        cleaned = clean_html(path.read_text(encoding="utf-8"))
        fast, tree = flatten_markup(cleaned), flatten(parse_cleaned(cleaned))
        assert fast.tokens == tree.tokens and fast.ids == tree.ids
        for column in ("depth", "stop", "open_tok", "end_tok", "close_tok", "tail_tok", "words"):
            assert getattr(fast, column) == getattr(tree, column), column
        assert fast.interactive == tree.interactive
