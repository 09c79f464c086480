"""Benchmark: webagent's observation against the peers' observations, in one run, on the
same pages of the same Chromium.

    .venv/bin/python -m bench.gated.observation [--repeat 5]
    bench/rivals/setup.sh          # once: the rivals' venvs (else they are reported missing)

Pages: the ~1 MB page (built, not downloaded: the <body> children of the real pages in
tests/fixtures/html/ appended round-robin under one body), the BrowserGym fixture pages
(tests/fixtures/web_pages/browsergym/: iframes, shadow DOM, a long page, an obstructed
checkbox...), three MiniWoB++ pages (from the ``miniwob`` package, an episode started with
seed 0) and the demo shop (start page and order form), all served from 127.0.0.1.

One Chromium is launched with a CDP port (bench/rivals/chromium.py); each contender
attaches to it and opens the pages itself:

* webagent: ``capture`` (CDP DOM snapshot -> HTML with ids -> ``clean_html``) +
  ``split_snippets`` (what the agent needs before gisting), in this process;
* BrowserGym (``browsergym-core``, bench/rivals/.venv-agentlab): its element marking,
  ``extract_dom_snapshot``, ``extract_merged_axtree``, ``extract_dom_extra_properties``,
  ``flatten_axtree_to_str`` (bench/rivals/browsergym_obs.py, Playwright ``connect_over_cdp``);
* browser-use (bench/rivals/.venv-browser-use): ``DomService.get_serialized_dom_tree`` +
  ``llm_representation`` (bench/rivals/browseruse_obs.py, its own CDP client).

Each figure is the median of ``--repeat`` observations after one warm-up. Two floors are
measured beside webagent, on the same page in the same session: Chromium's
``DOMSnapshot.captureSnapshot`` call alone, and ``clean_html`` + ``split_snippets`` on the
HTML ``page.content()`` returned. Targets (exit status 1 when one is missed; a rival that
cannot run is reported with its reason, and its targets as not measured):

* webagent <= 0.5x BrowserGym and <= 1x browser-use on the 1 MB page, and on the fixture
  pages taken together (sum of the per-page medians);
* our Python side (snapshot -> HTML, clean, split) <= 0.5x the captureSnapshot call it
  follows, on the 1 MB page.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lxml import etree
from lxml import html as lxml_html

from bench.lib import ROOT
from bench.lib.verdict import Targets
from bench.rivals.chromium import shared_chromium
from bench.rivals.episode_process import VENV, error_line, last_json_line, runner_cmd
from webagent.browser import BrowserSession
from webagent.browser.capture import capture
from webagent.demo_site import SITE_DIR, serve_directory
from webagent.html import clean_html, split_snippets
from webagent.miniwob.env import START_EPISODE, miniwob_html_dir

PAGES = ROOT / "tests" / "fixtures" / "html"
FIXTURES = ROOT / "tests" / "fixtures" / "web_pages" / "browsergym"
TARGET_BYTES = 1_000_000
MINIWOB_TASKS = ("click-button", "enter-text", "book-flight")
RIVALS = {  # each rival's venv (episode_process.VENV) and the module it runs there (with -m, from the repository root)
    "BrowserGym": ("agentlab", "bench.rivals.browsergym_obs"),
    "browser-use": ("browser-use", "bench.rivals.browseruse_obs"),
}
TARGETS = {"BrowserGym": 0.5, "browser-use": 1.0}
PYTHON_SIDE_TARGET = 0.5


def build_page(target_bytes: int = TARGET_BYTES) -> str:
    bodies = []
    for path in sorted(PAGES.glob("*.html")):
        doc = lxml_html.fromstring(path.read_bytes())
        body = doc.find("body")
        if body is not None:
            for bad in body.xpath(".//script|.//style|.//iframe"):
                bad.getparent().remove(bad)
            bodies.append([etree.tostring(c, encoding="unicode", method="html") for c in body])
    parts, size, k = [], 0, 0
    while size < target_bytes:
        chunk = "".join(bodies[k % len(bodies)])
        parts.append(f'<section class="copy-{k}">{chunk}</section>')
        size += len(chunk.encode())
        k += 1
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>bench</title></head><body>"
        + "".join(parts)
        + "</body></html>"
    )


def fixture_pages() -> list[Path]:
    """The BrowserGym fixture pages a user opens (frames' inner documents are loaded by them)."""
    return sorted(p for p in FIXTURES.rglob("*.html") if p.name not in ("inner-iframe.html", "outer-iframe.html"))


def page_set(base: str) -> list[dict]:
    """The pages, all under one origin (webagent's navigation guard keeps a run on one site)."""
    big_url, fixtures_url, miniwob_url, shop_url = base, base + "fixtures/", base + "miniwob-html/", base + "shop/"
    seed0 = f"({START_EPISODE})([0, 3600000, 10000])"
    pages = [{"name": "1 MB page", "group": "big", "url": big_url + "big.html"}]
    pages += [
        {"name": str(p.relative_to(FIXTURES)), "group": "fixtures", "url": fixtures_url + str(p.relative_to(FIXTURES))}
        for p in fixture_pages()
    ]
    pages += [
        {"name": f"miniwob/{t}", "group": "miniwob", "url": f"{miniwob_url}miniwob/{t}.html", "setup_js": seed0}
        for t in MINIWOB_TASKS
    ]
    pages += [
        {"name": "shop/index", "group": "shop", "url": shop_url + "index.html"},
        {"name": "shop/order", "group": "shop", "url": shop_url + "order.html?item=b6"},
    ]
    return pages


async def time_webagent(cdp_url: str, pages: list[dict], repeat: int) -> dict:
    out: dict[str, dict] = {}
    async with BrowserSession(cdp_url=cdp_url) as browser:
        for spec in pages:
            entry: dict = {}
            out[spec["name"]] = entry
            try:
                await _time_page(browser, spec, entry, repeat)
            except Exception as exc:  # noqa: BLE001 - one page failing must not lose the others
                entry["error"] = error_line(exc)
    return out


async def _time_page(browser, spec: dict, entry: dict, repeat: int) -> None:
    result = await browser.open(spec["url"])
    if not result.ok:
        entry["error"] = f"could not open: {result.error}"
        return
    await asyncio.sleep(0.3)
    if spec.get("setup_js"):
        await browser.page.evaluate(spec["setup_js"])
    await browser.page.content()
    split_snippets((await capture(browser)).cleaned_html)  # warm-up: CDP session, caches
    content_s, observe_s, snap_s, python_s, landed_s, no_ax_s = [], [], [], [], [], []
    for _ in range(repeat):
        t0 = time.perf_counter()  # the same capture without Chromium's accessibility names: their cost
        split_snippets((await capture(browser, accessible_names=False)).cleaned_html)
        no_ax_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        html = await browser.page.content()
        content_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        obs = await capture(browser)
        snippets = split_snippets(obs.cleaned_html)
        observe_s.append(time.perf_counter() - t0)
        snap_s.append(obs.timings.snapshot_s)
        python_s.append(observe_s[-1] - obs.timings.snapshot_s)
        t0 = time.perf_counter()
        split_snippets(clean_html(html))
        landed_s.append(time.perf_counter() - t0)
    med = statistics.median
    entry.update(
        observe_s=med(observe_s),
        observe_no_ax_s=med(no_ax_s),
        content_s=med(content_s),
        snapshot_s=med(snap_s),
        python_s=med(python_s),
        landed_s=med(landed_s),
        snippets=len(snippets),
        ids=len(obs.elements),
        cleaned_bytes=len(obs.cleaned_html.encode()),
        content_bytes=len(html.encode()),
    )


def time_rival(name: str, cdp_url: str, pages: list[dict], repeat: int, tmp: Path) -> dict:
    """{"pages": {name: {"observe_s", "chars"} | {"error"}}} or {"error": why it cannot run}."""
    venv, module = RIVALS[name]
    cmd = runner_cmd(venv, module, {"cdp_url": cdp_url, "pages": pages, "repeat": repeat}, tmp / f"{name}.log")
    if cmd is None:
        return {"error": f"not installed ({VENV[venv].relative_to(ROOT)} missing): run bench/rivals/setup.sh"}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": "did not finish in 30 minutes"}
    result = last_json_line(proc.stdout)
    if result is None:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exited {proc.returncode}: {tail[:300]}"}
    for entry in result["pages"].values():
        if entry.get("times_s"):
            entry["observe_s"] = statistics.median(entry["times_s"])
    return result


def ms(x) -> str:
    return "–" if x is None else f"{x * 1000:.1f}"


def main(repeat: int) -> int:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        page_html = build_page()
        (tmp / "big.html").write_text(page_html, encoding="utf-8")
        for link, target in (("fixtures", FIXTURES), ("miniwob-html", miniwob_html_dir()), ("shop", SITE_DIR)):
            (tmp / link).symlink_to(target, target_is_directory=True)
        base, stop = serve_directory(tmp)
        try:
            pages = page_set(base)
            with shared_chromium() as cdp_url:
                ours = asyncio.run(time_webagent(cdp_url, pages, repeat))
                rivals = {name: time_rival(name, cdp_url, pages, repeat, tmp) for name in RIVALS}
        finally:
            stop()
    return report(pages, ours, rivals, page_html)


def report(pages: list[dict], ours: dict, rivals: dict, page_html: str) -> int:
    big = ours["1 MB page"]
    print(
        f"1 MB page: {len(page_html.encode()) / 1e6:.2f} MB built, page.content() {big.get('content_bytes', 0) / 1e6:.2f} MB, "
        f"{big.get('ids')} ids, {big.get('snippets')} snippets, cleaned {big.get('cleaned_bytes', 0) / 1e6:.2f} MB"
    )
    for name, r in rivals.items():
        print(
            f"{name}: "
            + (
                f"cannot run here: {r['error']}"
                if "error" in r
                else f"{r.get('rival')} {r.get('version')}"
                + (f" (playwright {r['playwright']})" if r.get("playwright") else "")
            )
        )
    head = (
        f"{'page':46s} {'webagent':>9s} {'BrowserGym':>11s} {'ratio':>6s} {'browser-use':>11s} {'ratio':>6s} "
        f"{'floor:snap':>10s} {'floor:clean+split':>17s} {'content()':>9s}"
    )
    print("\nmedian ms per observation (ratio = webagent / rival)\n" + head + "\n" + "-" * len(head))
    totals: dict[str, dict[str, Any]] = {
        g: {"webagent": 0.0, "BrowserGym": 0.0, "browser-use": 0.0, "n": {}} for g in ("big", "fixtures")
    }

    def rival_s(name, page):
        r = rivals[name]
        return None if "error" in r else r["pages"].get(page, {}).get("observe_s")

    for spec in pages:
        p, w = spec["name"], ours.get(spec["name"], {})
        cells = [w.get("observe_s"), rival_s("BrowserGym", p), rival_s("browser-use", p)]
        ratio = lambda x, c=cells: "–" if x is None or c[0] is None else f"{c[0] / x:.2f}"  # noqa: E731
        print(
            f"{p:46s} {ms(cells[0]):>9s} {ms(cells[1]):>11s} {ratio(cells[1]):>6s} {ms(cells[2]):>11s} {ratio(cells[2]):>6s} "
            f"{ms(w.get('snapshot_s')):>10s} {ms(w.get('landed_s')):>17s} {ms(w.get('content_s')):>9s}"
            + (f"  [{w['error']}]" if w.get("error") else "")
        )
        for name in RIVALS:
            err = None if "error" in rivals[name] else rivals[name]["pages"].get(p, {}).get("error")
            if err:
                print(f"{'':46s} {name} failed on this page: {err}")
        if spec["group"] in totals:
            t = totals[spec["group"]]
            for name, x in zip(("webagent", "BrowserGym", "browser-use"), cells):
                t[name] += x or 0.0
                t["n"][name] = t["n"].get(name, 0) + (x is not None)

    targets = Targets("observation against BrowserGym and browser-use")
    n_fixtures = sum(1 for s in pages if s["group"] == "fixtures")
    for group, label in (("big", "the 1 MB page"), ("fixtures", f"the {n_fixtures} fixture pages together")):
        t = totals[group]
        for name, target in TARGETS.items():
            count = n_fixtures if group == "fixtures" else 1
            goal = f"webagent <= {target:g}x {name} on {label}"
            if "error" in rivals[name]:
                targets.check(goal, "not measured", f"{name} cannot run here: {rivals[name]['error']}", False)
            elif t["n"].get(name, 0) < count or t["n"].get("webagent", 0) < count:
                targets.check(goal, "not measured (a page failed, see above)", name, False)
            else:
                ratio = t["webagent"] / t[name]
                targets.check(
                    goal,
                    f"{ms(t['webagent'])} ms / {ms(t[name])} ms = {ratio:.2f}x",
                    f"{name} {rivals[name].get('version')} (floors: captureSnapshot "
                    f"{ms(totals_floor(pages, ours, group, 'snapshot_s'))} ms, clean+split of content() "
                    f"{ms(totals_floor(pages, ours, group, 'landed_s'))} ms)",
                    ratio <= target,
                )
    if big.get("snapshot_s"):
        side = big["python_s"] / big["snapshot_s"]
        targets.check(
            f"our Python side (snapshot -> HTML, clean, split) <= {PYTHON_SIDE_TARGET:g}x captureSnapshot "
            "on the 1 MB page",
            f"{ms(big['python_s'])} ms / {ms(big['snapshot_s'])} ms = {side:.2f}x",
            "floor: Chromium's captureSnapshot call it follows",
            side <= PYTHON_SIDE_TARGET,
        )
        print(
            f"for scale, on the 1 MB page: observation = {big['observe_s'] / big['content_s']:.1f}x page.content(); "
            f"floors: captureSnapshot alone {big['snapshot_s'] / big['content_s']:.1f}x, "
            f"clean_html + split_snippets of content()'s HTML {big['landed_s'] / big['content_s']:.1f}x; "
            f"accessible names (Accessibility.getFullAXTree): {ms(big['observe_s'])} ms with, "
            f"{ms(big['observe_no_ax_s'])} ms without"
        )
    return targets.report()


def totals_floor(pages: list[dict], ours: dict, group: str, key: str):
    xs = [ours.get(s["name"], {}).get(key) for s in pages if s["group"] == group]
    return None if any(x is None for x in xs) else sum(xs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    sys.exit(main(parser.parse_args().repeat))
