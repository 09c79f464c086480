"""keep_ids: a new capture of the same URL takes the previous capture's ids for the controls
still there (same kind, name, options, counted in page order); what an id points at comes
from the new capture."""

from webagent.agent.stable_ids import keep_ids
from webagent.browser.models import ElementRef, Observation
from webagent.web.agent_view import view_snippets


def _obs(url: str, ids: list[int], names: list[str]) -> Observation:
    """A page of links, one per name, with these node ids (the body gets the first id - 1)."""
    links = "".join(f'<a backend_node_id="{i}" href="#">{n}</a>' for i, n in zip(ids, names))
    body = ids[0] - 1
    html = f'<html><body backend_node_id="{body}"><div>{links}</div></body></html>'
    elements = {str(i): ElementRef(target="page", backend_node_id=i, tag="a") for i in ids}
    elements[str(body)] = ElementRef(target="page", backend_node_id=body, tag="body")
    return Observation(url=url, title="t", raw_html=html, cleaned_html=html, elements=elements)


def controls(obs: Observation) -> dict:
    return view_snippets(obs.cleaned_html)[1].controls


def test_a_reload_keeps_the_ids_and_points_them_at_the_new_nodes():
    before = _obs("http://a/list", [11, 12, 13], ["Show All", "Next", "Next"])
    after = _obs("http://a/list", [51, 52, 53], ["Show All", "Next", "Next"])
    kept = keep_ids(before, after, controls)
    assert list(controls(kept)) == ["11", "12", "13"]
    # the kept id 13 is the second "Next" of the new page: node 53
    assert kept.elements["13"].backend_node_id == 53
    assert kept.elements["50"].backend_node_id == 50  # an element that is no control keeps its own id
    assert 'backend_node_id="51"' not in kept.cleaned_html


def test_a_control_new_to_the_page_keeps_its_own_id():
    before = _obs("http://a/list", [11, 12], ["Show All", "Next"])
    after = _obs("http://a/list", [51, 52, 53], ["Show All", "Previous", "Next"])
    assert list(controls(keep_ids(before, after, controls))) == ["11", "52", "12"]


def test_another_url_or_a_collision_renames_nothing():
    before = _obs("http://a/list", [11, 12], ["Show All", "Next"])
    assert keep_ids(before, _obs("http://a/list?page=2", [51, 52], ["Show All", "Next"]), controls).elements.keys() == {
        "50",
        "51",
        "52",
    }
    # the new page's "Previous" already has id 12, which its "Next" would take
    clash = _obs("http://a/list", [12, 13, 14], ["Previous", "Show All", "Next"])
    before = _obs("http://a/list", [20, 11, 12], ["Other", "Show All", "Next"])
    assert keep_ids(before, clash, controls) is clash
