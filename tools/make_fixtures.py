"""Build the Mind2Web-layout fixtures in tests/fixtures/mind2web/ from real pages.

    .venv/bin/python -m tools.make_fixtures             # rebuild from tests/fixtures/html/
    .venv/bin/python -m tools.make_fixtures --refresh   # first re-copy the raw pages
                                                        # from their original sources

Each task is a short, hand-written action sequence on one real saved page. For
every step the current raw page is cleaned with ``webagent.html.clean_html``;
the target element is located in the raw page by an XPath and its
``backend_node_id`` read off the cleaned tree, so ``pos_candidates`` always name
the real element. The step's effect (typed text -> ``input_value``, a selected
option, a ticked checkbox) is written into the raw page before the next step, as
a browser snapshot would show it; navigation is not simulated (every step of a
task is on the same page).
"""

from __future__ import annotations

import argparse
import json
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from webagent.html.clean import clean_html, clean_tree, parse_cleaned
from webagent.html.dom import ID_ATTR, is_interactive

ROOT = Path(__file__).resolve().parents[1]
RAW_DIR = ROOT / "tests" / "fixtures" / "html"
OUT_DIR = ROOT / "tests" / "fixtures" / "mind2web"
#: raw_html is stored in the records only for pages up to this size; bigger raw
#: pages live once in tests/fixtures/html/ and the records carry "".
RAW_INLINE_LIMIT = 20_000


@dataclass(frozen=True)
class Page:
    file: str  # name in tests/fixtures/html/
    source: str  # where --refresh copies it from
    origin: str  # what the page is
    licence: str


PAGES = {
    "aa": Page(
        "aa_find_flights.html",
        "miniwob:AA/original.html",
        "aa.com mobile 'Find flights' page (American Airlines), saved by the "
        "MiniWoB++ authors; `miniwob` 1.1.0 wheel, `html/flight/AA/original.html`",
        "MIT (miniwob package metadata: `License: MIT License`; LICENSE in the wheel)",
    ),
    "alaska": Page(
        "alaska_search.html",
        "miniwob:Alaska/original.html",
        "alaskaair.com mobile flight search page (Alaska Airlines), saved by the "
        "MiniWoB++ authors; `miniwob` 1.1.0 wheel, `html/flight/Alaska/original.html`",
        "MIT (miniwob package metadata: `License: MIT License`; LICENSE in the wheel)",
    ),
    "nodejs_os": Page(
        "nodejs_os.html",
        "/usr/share/doc/nodejs/api/os.html",
        "Node.js v20.20.2 API documentation, 'OS' module page (nodejs.org/api/os.html "
        "as shipped by Debian's `nodejs` package in /usr/share/doc/nodejs/api/)",
        "MIT (Node.js licence, /usr/share/doc/nodejs/copyright)",
    ),
    "simple_form": Page(
        "browsergym_simple_form.html",
        "/work/shared/data/web_pages/browsergym/test_page.html",
        "BrowserGym test page 'Simple Form' (browsergym core test pages, test_page.html)",
        "Apache-2.0 (Copyright 2024 ServiceNow)",
    ),
}


@dataclass(frozen=True)
class Step:
    xpath: str  # locates the target in the raw page; must match exactly one element
    op: str  # CLICK | TYPE | SELECT
    label: str  # the element's name as an annotator reads it (action_repr)
    value: str = ""
    original_op: str = ""


@dataclass(frozen=True)
class Task:
    split: str
    file_index: int
    key: str
    page: str
    website: str
    domain: str
    subdomain: str
    confirmed_task: str
    steps: tuple[Step, ...]


AA_FROM = "//input[@id='segments0.origin']"
AA_TO = "//input[@id='segments0.destination']"
AA_SEARCH = "//form[@id='flightSearchView']//button[@type='submit']"
AL_FROM = "//input[@id='geo-from']"
AL_TO = "//input[@id='geo-to']"

TASKS = (
    Task(
        "test_task",
        0,
        "aa-oneway-nyc-chi",
        "aa",
        "aa",
        "Travel",
        "Airlines",
        "Search for a one-way flight from New York to Chicago",
        (
            Step("//li[@aria-controls='oneway']/a", "CLICK", "One way"),
            Step(AA_FROM, "TYPE", "From", "New York"),
            Step(AA_TO, "TYPE", "To", "Chicago"),
            Step(AA_SEARCH, "CLICK", "Search"),
        ),
    ),
    Task(
        "test_task",
        0,
        "aa-business-dfw-mia",
        "aa",
        "aa",
        "Travel",
        "Airlines",
        "Find Business or First class flights from Dallas to Miami",
        (
            Step(AA_FROM, "TYPE", "From", "Dallas"),
            Step(AA_TO, "TYPE", "To", "Miami"),
            Step("//select[@id='cabin']", "SELECT", "Class", "Business / First"),
            Step(AA_SEARCH, "CLICK", "Search"),
        ),
    ),
    Task(
        "test_task",
        0,
        "aa-refundable-bos-lax",
        "aa",
        "aa",
        "Travel",
        "Airlines",
        "Look for refundable fares for 3 passengers from Boston to Los Angeles",
        (
            Step(AA_FROM, "TYPE", "From", "Boston"),
            Step(AA_TO, "TYPE", "To", "Los Angeles"),
            Step("//select[@id='passengerCount']", "SELECT", "Passengers", "3"),
            Step("//input[@id='refundable1']", "CLICK", "Show refundable only"),
        ),
    ),
    Task(
        "test_website",
        0,
        "alaska-oneway-sea-bos",
        "alaska",
        "alaskaair",
        "Travel",
        "Airlines",
        "Find one-way flights from Seattle to Boston",
        (
            Step("//input[@id='srh-isow']", "CLICK", "One-way"),
            Step(AL_FROM, "TYPE", "From", "Seattle"),
            Step(AL_TO, "TYPE", "To", "Boston"),
            Step("//input[@type='submit' and @value='Find Flights']", "CLICK", "Find Flights"),
        ),
    ),
    Task(
        "test_website",
        0,
        "alaska-miles-first-pdx-anc",
        "alaska",
        "alaskaair",
        "Travel",
        "Airlines",
        "Search award flights with miles from Portland to Anchorage for two travelers",
        (
            Step("//input[@id='srh-is-miles']", "CLICK", "Use miles"),
            Step(AL_FROM, "TYPE", "From", "Portland"),
            Step(AL_TO, "TYPE", "To", "Anchorage"),
            Step("//div[@class='tnum-button' and normalize-space(.)='+']", "CLICK", "+"),
        ),
    ),
    Task(
        "test_domain",
        0,
        "nodejs-os-uptime",
        "nodejs_os",
        "nodejs",
        "Info",
        "Technology",
        "Check what os.uptime() returns in the Node.js OS module documentation",
        (
            Step("//a[normalize-space(.)='Table of contents']", "CLICK", "Table of contents"),
            Step("//ul[@id='toc-picker']//a[normalize-space(.)='os.uptime()']", "CLICK", "os.uptime()"),
        ),
    ),
    Task(
        "test_domain",
        0,
        "nodejs-os-v22",
        "nodejs_os",
        "nodejs",
        "Info",
        "Technology",
        "Open the OS module documentation for Node.js 22 LTS",
        (
            Step("//a[normalize-space(.)='Other versions']", "CLICK", "Other versions"),
            Step("//a[starts-with(normalize-space(.), '22.x')]", "CLICK", "22.x LTS"),
        ),
    ),
    Task(
        "test_domain",
        1,
        "simple-form-newsletter",
        "simple_form",
        "browsergym-form",
        "Service",
        "Other",
        "Subscribe Jane Doe (jane.doe@example.com) to the newsletter",
        (
            Step("//input[@id='name']", "TYPE", "Name:", "Jane Doe"),
            Step("//input[@id='email']", "TYPE", "Email:", "jane.doe@example.com"),
            Step("//input[@id='subscribe']", "CLICK", "Subscribe to newsletter"),
            Step("//input[@type='submit']", "CLICK", "Submit"),
        ),
    ),
)


def refresh_sources() -> None:
    RAW_DIR.mkdir(parents=True, exist_ok=True)
    for page in PAGES.values():
        if page.source.startswith("miniwob:"):
            import miniwob

            src = Path(miniwob.__file__).parent / "html" / "flight" / page.source.split(":", 1)[1]
        else:
            src = Path(page.source)
        if not src.is_file():
            raise SystemExit(f"source page missing: {src} (needed for {page.file})")
        shutil.copyfile(src, RAW_DIR / page.file)
        print(f"copied {src} -> {RAW_DIR / page.file}")


def _one(root, xpath: str, where: str):
    found = root.xpath(xpath)
    if len(found) != 1:
        raise SystemExit(f"{where}: XPath {xpath!r} matched {len(found)} elements, expected 1")
    return found[0]


def _role(el) -> str:
    """The bracketed element kind of a Mind2Web action_repr."""
    tag, typ = el.tag, (el.get("type") or "").lower()
    if el.get("role") and el.get("role") not in ("presentation", "none"):
        return el.get("role")
    if tag == "a":
        return "link"
    if tag == "button" or (tag == "input" and typ in ("submit", "button", "reset", "image")):
        return "button"
    if tag == "input" and typ in ("checkbox", "radio"):
        return typ
    if tag == "input" and typ == "search":
        return "searchbox"
    if tag in ("input", "textarea"):
        return "textbox"
    if tag == "select":
        return "combobox"
    return tag


def _candidate(el, target: bool) -> dict:
    attrs = {ID_ATTR: el.get(ID_ATTR)}
    attrs.update((k, v) for k, v in el.items() if k != ID_ATTR)
    return {
        "tag": el.tag,
        "backend_node_id": el.get(ID_ATTR),
        "attributes": json.dumps(attrs, ensure_ascii=False),
        "is_original_target": target,
        "is_top_level_target": target,
    }


def _apply(root, step: Step, where: str) -> None:
    """Write the step's effect into the raw page, as the next snapshot would show it."""
    el = _one(root, step.xpath, where)
    if step.op == "TYPE":
        el.set("input_value", step.value)
    elif step.op == "SELECT":
        matched = 0
        for option in el.iter("option"):
            if " ".join((option.text or "").split()) == step.value:
                option.set("selected", "selected")
                matched += 1
            elif "selected" in option.attrib:
                del option.attrib["selected"]
        if matched != 1:
            raise SystemExit(f"{where}: no single option {step.value!r}")
    elif step.op == "CLICK" and el.tag == "input" and el.get("type") in ("checkbox", "radio"):
        el.set("input_checked", "true")


def build_task(task: Task, raw: str) -> dict:
    annotation_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"webagent-fixture/{task.key}"))
    # Keeps comments: later steps' raw_html is this tree re-serialised.
    state = etree.fromstring(raw.encode("utf-8"), etree.HTMLParser(encoding="utf-8", huge_tree=True, no_network=True))
    raw_now = raw
    actions, reprs = [], []
    for n, step in enumerate(task.steps):
        where = f"{task.key} step {n}"
        cleaned = clean_html(raw_now)
        work = parse_cleaned(raw_now)
        raw_target = _one(work, step.xpath, where)
        clean_tree(work)
        bid = raw_target.get(ID_ATTR)
        tree = parse_cleaned(cleaned)
        hits = tree.xpath(f"//*[@{ID_ATTR}=$b]", b=bid)
        if len(hits) != 1 or hits[0].tag != raw_target.tag:
            raise SystemExit(f"{where}: target id {bid} not found in clean_html output")
        target = hits[0]
        negatives = [
            _candidate(el, False)
            for el in tree.iter(tag=etree.Element)
            if el is not target
            and el.tag not in ("option", "label")
            and is_interactive(el.tag, el.get("role"), el.get("is_clickable"))
        ]
        actions.append(
            {
                "action_uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{annotation_id}/{n}")),
                "raw_html": raw_now if len(raw) <= RAW_INLINE_LIMIT else "",
                "cleaned_html": cleaned,
                "operation": {"op": step.op, "original_op": step.original_op or step.op, "value": step.value},
                "pos_candidates": [_candidate(target, True)],
                "neg_candidates": negatives,
            }
        )
        arrow = f"{step.op}: {step.value}" if step.op != "CLICK" else "CLICK"
        reprs.append(f"[{_role(target)}]  {step.label} -> {arrow}")
        _apply(state, step, where)
        raw_now = etree.tostring(state.getroottree(), method="html", encoding="unicode")
    return {
        "annotation_id": annotation_id,
        "website": task.website,
        "domain": task.domain,
        "subdomain": task.subdomain,
        "confirmed_task": task.confirmed_task,
        "action_reprs": reprs,
        "actions": actions,
    }


def _readme(rows: list[dict], files: dict[str, int]) -> str:
    lines = [
        "# Mind2Web-layout fixtures built from real pages",
        "",
        "Built by `tools/make_fixtures.py` (rebuild: `.venv/bin/python -m tools.make_fixtures`;",
        "`--refresh` re-copies the raw pages from their sources first). The layout is the",
        "official Mind2Web test-split layout: `test_task/`, `test_website/`, `test_domain/`,",
        "each a folder of JSON files holding a list of tasks.",
        "",
        "The tasks and action sequences are hand-written for these pages; the pages are real.",
        "`cleaned_html` is `webagent.html.clean_html` over the raw page; `pos_candidates`",
        "name the real target element's `backend_node_id`; `neg_candidates` are the page's",
        "other interactive elements (options and labels excluded). Each step's page shows",
        "the previous steps' effects (typed text as `input_value`, a selected option, a",
        "ticked box as `input_checked`); navigation is not simulated.",
        "",
        "Differences from the real dataset, on purpose or by necessity:",
        "",
        f"- `raw_html` is inlined only for raw pages up to {RAW_INLINE_LIMIT // 1000} KB; larger raw pages",
        '  are stored once in `tests/fixtures/html/` and their records carry `""`.',
        "- No `bounding_box_rect`: the pages were not rendered in a browser, and a made-up",
        "  box would be worse than none.",
        "- The largest cleaned page is the Node.js page (see sizes below, > 100 KB). The",
        "  airline pages are real but small once scripts are gone (AA's 134 KB raw page is",
        "  mostly inline JavaScript).",
        "",
        "## Pages",
        "",
        "| page | raw file | what it is | licence |",
        "|---|---|---|---|",
    ]
    for page in PAGES.values():
        size = (RAW_DIR / page.file).stat().st_size
        lines.append(f"| {page.file} | {size / 1000:.1f} KB | {page.origin} | {page.licence} |")
    lines += [
        "",
        "## Tasks",
        "",
        "| split file | task | page | steps | ops | cleaned_html per step |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['file']} | {r['task']} | {r['page']} | {r['steps']} | {r['ops']} | {r['cleaned'] / 1000:.1f} KB |"
        )
    lines += ["", "## Files", "", "| file | size |", "|---|---|"]
    for name, size in files.items():
        lines.append(f"| {name} | {size / 1000:.1f} KB |")
    lines += ["", f"Total: {sum(files.values()) / 1e6:.2f} MB of JSON.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--refresh", action="store_true", help="re-copy the raw pages from their original sources first"
    )
    args = parser.parse_args()
    if args.refresh:
        refresh_sources()
    raws = {key: (RAW_DIR / page.file).read_text(encoding="utf-8") for key, page in PAGES.items()}
    by_file: dict[str, list[dict]] = {}
    rows = []
    for task in TASKS:
        record = build_task(task, raws[task.page])
        name = f"{task.split}/{task.split}_{task.file_index}.json"
        by_file.setdefault(name, []).append(record)
        rows.append(
            {
                "file": name,
                "task": task.confirmed_task,
                "page": PAGES[task.page].file,
                "steps": len(task.steps),
                "ops": ", ".join(s.op for s in task.steps),
                "cleaned": len(record["actions"][0]["cleaned_html"].encode()),
            }
        )
    files = {}
    for split in ("test_task", "test_website", "test_domain"):
        folder = OUT_DIR / split
        if folder.is_dir():
            for old in folder.glob("*.json"):
                old.unlink()
    for name, records in by_file.items():
        path = OUT_DIR / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(records, ensure_ascii=False, separators=(",", ":"))
        path.write_text(text, encoding="utf-8")
        files[name] = len(text.encode())
        print(f"wrote {path} ({len(records)} tasks, {files[name] / 1000:.1f} KB)")
    (OUT_DIR / "README.md").write_text(_readme(rows, files), encoding="utf-8")
    print(f"total {sum(files.values()) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
