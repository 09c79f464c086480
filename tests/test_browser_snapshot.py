"""The snapshot -> HTML builder on a hand-written CDP snapshot (runs without Chromium)."""

from lxml import etree

from webagent.browser import REDACTED
from webagent.browser.snapshot import build
from webagent.html import clean_html, split_snippets


class _Snap:
    """Writes a DOMSnapshot-shaped dict: one document per ``doc()``."""

    def __init__(self):
        self.strings: list[str] = []
        self.docs: list[dict] = []

    def s(self, text: str) -> int:
        if text not in self.strings:
            self.strings.append(text)
        return self.strings.index(text)

    def doc(self):
        nodes = {k: [] for k in ("parentIndex", "nodeType", "nodeName", "nodeValue", "backendNodeId", "attributes")}
        for k in ("inputValue", "textValue", "contentDocumentIndex"):
            nodes[k] = {"index": [], "value": []}
        for k in ("inputChecked", "optionSelected", "isClickable"):
            nodes[k] = {"index": []}
        d = {"nodes": nodes, "layout": {"nodeIndex": [], "bounds": [], "styles": []}, "bid": 100 * (len(self.docs) + 1)}
        self.docs.append(d)
        return d

    def node(
        self,
        d,
        parent,
        kind,
        name="",
        value=None,
        attrs=(),
        box=None,
        vis="visible",
        opacity="1",
        cursor="auto",
        **rare,
    ):
        n = d["nodes"]
        i = len(n["parentIndex"])
        n["parentIndex"].append(parent)
        n["nodeType"].append(kind)
        n["nodeName"].append(self.s(name))
        n["nodeValue"].append(self.s(value) if value is not None else -1)
        d["bid"] += 1
        n["backendNodeId"].append(d["bid"])
        n["attributes"].append([self.s(x) for pair in attrs for x in pair])
        if box is not None:
            d["layout"]["nodeIndex"].append(i)
            d["layout"]["bounds"].append(list(box))
            d["layout"]["styles"].append([self.s(v) for v in ("block", vis, opacity, "auto", cursor)])
        for key, val in rare.items():
            if val is True:
                n[key]["index"].append(i)
            else:
                n[key]["index"].append(i)
                n[key]["value"].append(val if key == "contentDocumentIndex" else self.s(val))
        return i

    def data(self):
        docs = [{k: v for k, v in d.items() if k != "bid"} for d in self.docs]
        return {"documents": docs, "strings": self.strings}


def _page():
    s = _Snap()
    d = s.doc()
    box = (0, 0, 100, 20)
    doc = s.node(d, -1, 9, "#document")
    html = s.node(d, doc, 1, "HTML", box=(0, 0, 800, 600))
    s.node(d, html, 1, "HEAD")
    body = s.node(d, html, 1, "BODY", box=(0, 0, 800, 600), isClickable=True)
    gone = s.node(d, body, 1, "DIV")  # display:none: no layout
    s.node(d, gone, 1, "BUTTON", attrs=[("id", "ghost")])
    s.node(d, body, 1, "DIV", box=box)  # an empty decorative box
    button = s.node(
        d, body, 1, "BUTTON", attrs=[("id", "go"), ("style", "color:red"), ("@click", "x")], box=box, isClickable=True
    )
    s.node(d, button, 3, "#text", "Go\x01 now", box=box)
    s.node(d, body, 1, "INPUT", attrs=[("type", "password"), ("value", "s3cret")], box=box, inputValue="typed-s3cret")
    s.node(d, body, 1, "INPUT", attrs=[("type", "checkbox")], box=box, opacity="0", inputChecked=True)
    sel = s.node(d, body, 1, "SELECT", box=box)
    for text, chosen in (("Red", False), ("Blue", True)):
        opt = s.node(
            d, sel, 1, "OPTION", attrs=[("value", text.lower())], **({"optionSelected": True} if chosen else {})
        )
        s.node(d, opt, 3, "#text", text)
    hidden = s.node(d, body, 1, "P", box=box, vis="hidden")
    s.node(d, hidden, 3, "#text", "invisible words", box=box, vis="hidden")
    host = s.node(d, body, 1, "MY-WIDGET", box=box)
    shadow = s.node(d, host, 11, "#document-fragment")
    s.node(d, shadow, 1, "A", attrs=[("href", "/x")], box=box, cursor="pointer")
    s.node(d, body, 1, "IFRAME", box=(10, 200, 300, 100), contentDocumentIndex=1)
    d2 = s.doc()
    doc2 = s.node(d2, -1, 9, "#document")
    html2 = s.node(d2, doc2, 1, "HTML", box=(0, 0, 300, 100))
    body2 = s.node(d2, html2, 1, "BODY", box=(0, 0, 300, 100))
    s.node(d2, body2, 1, "TEXTAREA", box=(5, 5, 50, 20), textValue="inner text")
    return s.data()


def test_builder_keeps_what_is_rendered_and_marks_state():
    built = build(_page(), max_nodes=1000)
    root = built.roots[0]
    raw = etree.tostring(root, encoding="unicode")
    assert root.tag == "html" and "head" not in raw
    assert not root.xpath("//*[@id='ghost']")  # display:none subtree left out
    assert "invisible words" not in raw  # visibility:hidden left out
    assert len(root.xpath("//body/div")) == 0  # empty decorative box left out
    go = root.xpath("//button[@id='go']")[0]
    assert go.get("is_clickable") == "true" and go.get("style") is None and go.get("@click") is None
    assert go.text == "Go  now"  # control character made XML-safe
    assert root.find("body").get("is_clickable") is None  # never the page root
    pwd = root.xpath("//input[@type='password']")[0]
    assert pwd.get("value") == REDACTED and pwd.get("input_value") == REDACTED and "s3cret" not in raw
    box = root.xpath("//input[@type='checkbox']")[0]
    assert box.get("input_checked") == "true" and box.get("is_visible") == "false"  # transparent, still there
    sel = root.find(".//select")
    assert sel.get("input_value") == "Blue" and [o.text for o in sel] == ["Red", "Blue"]
    assert sel[1].get("option_selected") == "true"
    link = root.xpath("//my-widget/a")[0]  # shadow root inlined under its host
    assert link.get("is_clickable") == "true"  # cursor:pointer region
    area = root.xpath("//iframe/html/body/textarea")[0]  # frame document inlined
    assert area.get("input_value") == "inner text"
    assert area.get("bounding_box_rect") == "15,205,50,20"  # shifted by the iframe's position
    ids = root.xpath("//@backend_node_id")
    assert len(ids) == len(set(ids)) == len(built.elements)
    assert built.elements[pwd.get("backend_node_id")][2] is True  # marked as a password field


def test_builder_output_goes_through_the_landed_cleaning_and_split():
    built = build(_page(), prefix="t7-")
    raw = etree.tostring(built.roots[0], encoding="unicode")
    cleaned = clean_html(raw)
    assert clean_html(cleaned) == cleaned
    ids = etree.fromstring(cleaned).xpath("//@backend_node_id")
    assert all(i.startswith("t7-") for i in ids) and set(ids) == set(built.elements)
    assert sorted(i for s in split_snippets(cleaned, budget_words=5) for i in s.ids) == sorted(ids)


def test_max_nodes_truncates_in_document_order():
    built = build(_page(), max_nodes=3)
    assert built.truncated and len(built.elements) == 3
    assert [el.tag for el in built.roots[0].iter()] == ["html", "body", "button"]
