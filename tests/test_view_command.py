"""``webagent view URL`` (issue 33): a page as the model reads it, then each control's
role and accessible name as Chromium computes them, a control named differently marked."""

from __future__ import annotations

import json

import pytest
from browser_support import requires_chromium, serve_pages
from click.testing import CliRunner

from webagent.agent.view_page import why_differs
from webagent.cli import main

PAGE = """<!doctype html><html><head><title>View test</title></head><body>
<h1>Shop</h1>
<form><label for="q">Search:</label> <input type="search" id="q" placeholder="title">
<button type="submit"><span>&#xf002;</span> Search</button></form>
<p>Quantity <input type="number"></p>
<div onclick="this.textContent='clicked'" style="cursor:pointer">Open menu</div>
<select aria-label="Sort"><option>Price</option><option>Name</option></select>
<p id="late"></p>
<script>setTimeout(() => { document.getElementById('late').textContent = 'Stock updated'; }, 400);</script>
</body></html>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    base, stop = serve_pages(tmp_path_factory.mktemp("view-site"), {"index.html": PAGE})
    yield base
    stop()


def view(*args: str):
    return CliRunner().invoke(main, ["view", *args])


def test_why_a_name_differs():
    assert why_differs("Search", "Search") == ""
    assert why_differs("Search", "\uf002 Search") == "icon-font glyphs dropped"
    assert why_differs("Quantity", "") == "no accessible name: named by the agent's rules"
    assert why_differs("Open menu", None) == "the browser gives it no role: named by the agent's rules"
    assert why_differs("x" * 79 + "…", "x" * 100) == "cut to 80 characters"


@requires_chromium
@pytest.mark.browser
def test_view_prints_the_model_text_then_roles_and_names(site):
    result = view(site + "index.html")
    assert result.exit_code == 0, result.output
    out = result.output
    model_text, controls = out.split("--- the page as the model reads it ---\n")[1].split("\n\n--- ")
    assert model_text.splitlines()[0] == "Shop"
    assert '] search field "Search:" placeholder="title" empty' in model_text
    assert '] submit button "Search"' in model_text and "\uf002" not in model_text
    lines = controls.splitlines()
    assert lines[0] == "5 controls: the name shown, then Chromium's role and accessible name ---"
    by_name = {line.split('"')[1]: line for line in lines[1:6]}
    assert by_name["Search:"].startswith("  [") and 'role=searchbox name="Search:"' in by_name["Search:"]
    assert by_name["Search"].startswith("* [")
    assert by_name["Search"].endswith('role=button name="\\uf002 Search"  (icon-font glyphs dropped)')
    assert by_name["Quantity"].startswith("* [") and 'role=spinbutton name=""' in by_name["Quantity"]
    assert by_name["Open menu"].endswith("role=- name=-  (the browser gives it no role: named by the agent's rules)")
    assert by_name["Sort"].startswith("  [") and 'role=combobox name="Sort"' in by_name["Sort"]
    assert "* 3 shown under another name" in out


@requires_chromium
@pytest.mark.browser
def test_view_json_lines_and_waiting_for_text(site):
    result = view("--json", "--wait-for-text", "Stock updated", site + "index.html")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [r["role"] for r in rows] == ["searchbox", "button", "spinbutton", "", "combobox"]
    sort = next(r for r in rows if r["name"] == "Sort")
    assert sort == {
        "id": sort["id"],
        "kind": "select",
        "op": "SELECT",
        "role": "combobox",
        "name": "Sort",
        "accessible_name": "Sort",
        "value": "Price",
        "options": ["Price", "Name"],
        "differs": "",
    }
    button = next(r for r in rows if r["role"] == "button")
    assert button["accessible_name"] == "\uf002 Search" and button["differs"] == "icon-font glyphs dropped"
    shown = view("--wait-for-text", "Stock updated", site + "index.html")
    assert "Stock updated" in shown.output.split("--- 5 controls")[0]


@requires_chromium
@pytest.mark.browser
def test_view_errors_are_one_line(site):
    for args, words in (
        (["notaurl"], "'notaurl' is not an http(s) or file URL"),
        (["http://no-such-host.invalid/"], "cannot open http://no-such-host.invalid/: net::ERR_NAME_NOT_RESOLVED"),
        (
            ["--wait-for-text", "Never shown", "--wait-timeout", "1", site + "index.html"],
            "--wait-for-text 'Never shown': not shown on",
        ),
    ):
        result = view(*args)
        assert result.exit_code == 2, result.output
        assert result.output.count("\n") == 1 and result.output.startswith("error: ") and words in result.output
        assert "Traceback" not in result.output
