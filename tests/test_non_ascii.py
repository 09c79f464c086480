"""Pages are decoded as UTF-8 wherever their HTML is parsed: an icon glyph and an accented
name reach the model (the history's description, the agent view) and the recorded
fingerprints as the page wrote them, never as mojibake (issue 47, item 7)."""

from webagent.agent.elements import describe
from webagent.trace.fingerprint import candidates, describe_element, element
from webagent.trace.match import find
from webagent.web.agent_view import build_view

GLYPH = "\uf0b0"
PAGE = (
    '<html backend_node_id="1"><body backend_node_id="2">'
    f'<button backend_node_id="3">{GLYPH} Filter</button>'
    '<a backend_node_id="4" href="/people/7">José Núñez</a>'
    '<a backend_node_id="5" href="/people/8">Ana Ruiz</a>'
    "</body></html>"
)


def test_what_the_model_reads_keeps_accents_and_glyphs():
    assert describe(PAGE, "4") == "[link]  José Núñez"
    assert describe(PAGE, "3") == f"[button]  {GLYPH} Filter"
    controls = build_view(PAGE).controls
    assert controls["4"].name == "José Núñez"
    assert controls["3"].name.endswith(" Filter") and "\xef" not in controls["3"].name


def test_a_recorded_accented_name_matches_on_the_live_page():
    recorded = describe_element(element(PAGE, "4"))
    assert recorded.name == "José Núñez" and recorded.text == "José Núñez"
    assert describe_element(element(PAGE, "3")).text == f"{GLYPH} Filter"
    found = find(recorded, PAGE, {el.get("backend_node_id") for el in candidates(PAGE)})
    assert found.element_id == "4", found.why
