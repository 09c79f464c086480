"""BrowserGym's observation, timed on pages of a shared Chromium. Runs in
bench/rivals/.venv-agentlab (``python -m bench.rivals.browsergym_obs SPEC.json`` from the repository root; see
bench/gated/observation.py).

One observation = what ``BrowserEnv`` takes each step minus the screenshot:
``_pre_extract`` (its in-page element marking, every frame), ``extract_dom_snapshot``,
``extract_merged_axtree``, ``extract_focused_element_bid``, ``extract_dom_extra_properties``,
``_post_extract`` (marks removed), then ``flatten_axtree_to_str`` (the text its GenericAgent
puts in the prompt). Attached through Playwright's ``connect_over_cdp``.
Prints one JSON object on the last stdout line.
"""

from __future__ import annotations

import json
import sys
import time
from importlib.metadata import version


def main(spec: dict) -> dict:
    from browsergym.core.observation import (
        _post_extract,
        _pre_extract,
        extract_dom_extra_properties,
        extract_dom_snapshot,
        extract_focused_element_bid,
        extract_merged_axtree,
    )
    from browsergym.utils.obs import flatten_axtree_to_str
    from playwright.sync_api import sync_playwright

    pages: dict[str, dict] = {}
    result = {
        "rival": "browsergym",
        "version": version("browsergym-core"),
        "playwright": version("playwright"),
        "pages": pages,
    }
    with sync_playwright() as pw:
        browser = pw.chromium.connect_over_cdp(spec["cdp_url"])
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = None

        def observe() -> str:
            _pre_extract(page, tags_to_mark="standard_html", lenient=False)  # BrowserEnv's defaults
            dom = extract_dom_snapshot(page)
            axtree = extract_merged_axtree(page)
            extract_focused_element_bid(page)
            extra = extract_dom_extra_properties(dom, scale_factor=getattr(page, "_bgym_scale_factor", 1.0))
            _post_extract(page)
            return flatten_axtree_to_str(axtree, extra_properties=extra)

        for spec_page in spec["pages"]:
            entry: dict = {"times_s": []}
            pages[spec_page["name"]] = entry
            try:
                if page is not None:  # a fresh tab per page: a page that crashed takes no other with it
                    page.close()
                page = context.new_page()
                page.goto(spec_page["url"], wait_until="load")
                page.wait_for_timeout(300)
                if spec_page.get("setup_js"):
                    page.evaluate(spec_page["setup_js"])
                text = observe()  # warm-up
                for _ in range(spec["repeat"]):
                    t0 = time.perf_counter()
                    text = observe()
                    entry["times_s"].append(time.perf_counter() - t0)
                entry["chars"] = len(text)
            except Exception as exc:  # one page failing must not lose the others
                entry["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        context.close()
    return result


if __name__ == "__main__":
    spec = json.loads(open(sys.argv[1]).read())
    out = main(spec)
    sys.stdout.write("\n" + json.dumps(out) + "\n")
