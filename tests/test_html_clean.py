"""clean_html / parse_cleaned: Mind2Web-style cleaning of raw HTML."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from webagent.errors import UserError
from webagent.html import clean_html, parse_cleaned

RAW_DIR = Path(__file__).parent / "fixtures" / "html"


def _tree(html: str):
    # Cleaned HTML must be well-formed XML (MindAct parses it with etree.fromstring).
    return etree.fromstring(clean_html(html))


def _ids(root) -> list[str]:
    return [el.get("backend_node_id") for el in root.iter(tag=etree.Element)]


def test_drops_scripts_styles_comments_head_and_keeps_text():
    raw = """<!doctype html><html><head><title>T</title><meta charset="utf-8">
    <style>p { color: red }</style><script>var x = "<p>no</p>";</script></head>
    <body><!-- a comment --><noscript>enable js</noscript><template><p>tpl</p></template>
    <p>Hello <b>big</b> world</p><script>alert(1)</script> tail text</body></html>"""
    out = clean_html(raw)
    for gone in (
        "script",
        "style",
        "noscript",
        "template",
        "head",
        "meta",
        "title",
        "comment",
        "color",
        "alert",
        "enable js",
        "tpl",
        "no</p>",
    ):
        assert gone not in out
    root = etree.fromstring(out)
    assert [el.tag for el in root.iter(tag=etree.Element)] == ["html", "body", "p", "b"]
    assert " ".join("".join(root.itertext()).split()) == "Hello big world tail text"


def test_keeps_only_mind2web_attributes():
    raw = """<body><a href="https://x.example/" data-track="1" style="color:red" aria-label="Home page"
      aria-describedby="tip" aria-expanded="false" onclick="go()" class="nav  link" id="home">Home</a>
      <input type="checkbox" checked name="opt" value="1" disabled>
      <select name="s"><option value="a">A</option><option value="b" selected>B</option></select>
      <img alt="Logo" src="logo.png" width="10"></body>"""
    root = _tree(raw)
    a = root.find(".//a")
    assert dict(a.attrib) == {
        "aria_label": "Home page",
        "aria_expanded": "false",
        "class": "nav link",
        "id": "home",
        "is_clickable": "true",
        "backend_node_id": a.get("backend_node_id"),
    }
    box = root.find(".//input")
    assert box.get("input_checked") == "true" and "checked" not in box.attrib
    assert "disabled" not in box.attrib and box.get("value") == "1"
    options = root.findall(".//option")
    assert [o.get("option_selected") for o in options] == [None, "true"]
    img = root.find(".//img")
    assert set(img.attrib) == {"alt", "backend_node_id"}


def test_markup_hidden_elements_dropped_unless_recorded():
    raw = """<body><p>shown</p><p hidden>gone1</p><input type="hidden" name="t" value="x">
      <div style="display: none"><a>gone2</a></div><span style="visibility:hidden">gone3</span>
      <div hidden backend_node_id="77">kept, recorded by the dataset</div></body>"""
    out = clean_html(raw)
    assert "shown" in out and "recorded" in out
    for gone in ("gone1", "gone2", "gone3", 'name="t"'):
        assert gone not in out
    assert 'backend_node_id="77"' in out


def test_prunes_invisible_empty_nodes_but_keeps_interactive_and_informative():
    raw = """<body><div class="wrap"><span class="icon"></span></div><br><hr>
      <div><div><input name="q"></div></div><img src="x.png"><img alt="Cart">
      <a href="/x"></a><div title="Close"></div><td></td></body>"""
    root = _tree(raw)
    tags = [el.tag for el in root.iter(tag=etree.Element)]
    assert tags == ["html", "body", "div", "div", "input", "img", "a", "div"]
    assert root.find(".//img").get("alt") == "Cart"


def test_assigns_unique_ids_in_document_order_without_collisions():
    raw = """<html><body><div backend_node_id="3"><p>a</p><p backend_node_id="1">b</p></div>
      <p>c</p><p backend_node_id="3">duplicate id</p><p backend_node_id="x7">d</p></body></html>"""
    root = _tree(raw)
    ids = _ids(root)
    assert len(ids) == len(set(ids)) == 8
    assert all(i for i in ids)
    # recorded ids are kept where unique; new ones are decimal, above the largest
    div = root.find(".//div")
    assert div.get("backend_node_id") == "3"
    assert root.xpath("//p[.='b']")[0].get("backend_node_id") == "1"
    assert root.xpath("//p[.='d']")[0].get("backend_node_id") == "x7"
    fresh = [
        root.get("backend_node_id"),
        root.find("body").get("backend_node_id"),
        root.xpath("//p[.='a']")[0].get("backend_node_id"),
        root.xpath("//p[.='c']")[0].get("backend_node_id"),
        root.xpath("//p[.='duplicate id']")[0].get("backend_node_id"),
    ]
    assert fresh == ["4", "5", "6", "7", "8"]


def test_raw_page_ids_are_1_to_n():
    ids = _ids(_tree("<body><h1>T</h1><p>x <a>y</a></p></body>"))
    assert ids == [str(i) for i in range(1, len(ids) + 1)]


@pytest.mark.parametrize("name", sorted(p.name for p in RAW_DIR.glob("*.html")))
def test_idempotent_on_real_pages(name):
    raw = (RAW_DIR / name).read_text(encoding="utf-8")
    once = clean_html(raw)
    assert clean_html(once) == once
    tags = {el.tag for el in etree.fromstring(once).iter()}  # well-formed XML
    assert not tags & {"script", "style", "head", "noscript", "template", "meta", "link"}


def test_mind2web_cleaned_input_comes_back_equivalent():
    m2w = (
        '<html backend_node_id="10"><body backend_node_id="11"><div backend_node_id="12" '
        'bounding_box_rect="0,0,10,10" class="c"><button backend_node_id="13" type="submit" '
        'aria_label="Search"><text backend_node_id="14">Search</text></button>'
        '<div backend_node_id="15"></div><input backend_node_id="16" input_value="NYC" '
        'input_checked="false"/></div></body></html>'
    )
    out = clean_html(m2w)
    assert out == m2w  # recorded elements are never pruned or renumbered


def test_output_parses_the_same_with_html_and_xml_parsers():
    out = clean_html("<body><div></div><p>x</p><div title='t'></div><input name='a'><p>y</p></body>")
    as_xml = [el.tag for el in etree.fromstring(out).iter()]
    as_html = [el.tag for el in etree.fromstring(out, etree.HTMLParser()).iter()]
    assert as_xml == as_html


@pytest.mark.parametrize("bad", ["", "   \n", "<!-- only a comment -->", "\x00\x01"])
def test_empty_input_raises_user_error(bad):
    with pytest.raises(UserError):
        clean_html(bad)


def test_parse_cleaned_is_robust():
    # fragments with several roots are wrapped by the HTML parser
    root = parse_cleaned('<div backend_node_id="1">a</div><div backend_node_id="2">b</div>')
    assert root.tag == "html" and len(root.findall(".//div")) == 2
    # XML self-closing elements stay siblings, not parents
    root = parse_cleaned('<html backend_node_id="1"><div backend_node_id="2"/><p backend_node_id="3">x</p></html>')
    assert [c.tag for c in root] == ["div", "p"]
    # entities, junk and namespaces
    root = parse_cleaned("<p>caf&eacute; &nbsp;<b>x</p></b></i>")
    assert "café" in "".join(root.itertext())
    root = parse_cleaned('<html xmlns="http://www.w3.org/1999/xhtml"><body><p>x</p></body></html>')
    assert [el.tag for el in root.iter()] == ["html", "body", "p"]
    with pytest.raises(UserError):
        parse_cleaned("")
