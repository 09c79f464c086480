"""browser-use's observation, timed on pages of a shared Chromium. Runs in
bench/rivals/.venv-browser-use (``python -m bench.rivals.browseruse_obs SPEC.json`` from the repository root; see
bench/gated/observation.py).

One observation = ``DomService.get_serialized_dom_tree()`` (its parallel CDP snapshot,
``DOM.getDocument(pierce)`` and accessibility trees, the enhanced tree, the serializer)
+ ``SerializedDOMState.llm_representation()`` (the text its agent puts in the prompt).
No screenshot (webagent's observation takes none either).
Prints one JSON object on the last stdout line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from importlib.metadata import version

os.environ.setdefault("ANONYMIZED_TELEMETRY", "false")
os.environ.setdefault("BROWSER_USE_CLOUD_SYNC", "false")
os.environ.setdefault("BROWSER_USE_LOGGING_LEVEL", "warning")


async def main(spec: dict) -> dict:
    from browser_use.dom.service import DomService

    from bench.rivals.browseruse_episode import browser_session, evaluate  # after the settings above

    logging.getLogger("browser_use").setLevel(logging.WARNING)
    pages: dict[str, dict] = {}
    result = {"rival": "browser-use", "version": version("browser-use"), "pages": pages}
    async with browser_session(spec["cdp_url"]) as session:
        for page in spec["pages"]:
            entry: dict = {"times_s": []}
            pages[page["name"]] = entry
            try:
                await session.navigate_to(page["url"])
                await asyncio.sleep(0.3)
                if page.get("setup_js"):
                    await evaluate(session, page["setup_js"], what="setup script")
                service = DomService(session)
                state, _, _ = await service.get_serialized_dom_tree()  # warm-up
                for _ in range(spec["repeat"]):
                    t0 = time.perf_counter()
                    state, _, _ = await service.get_serialized_dom_tree()
                    text = state.llm_representation()
                    entry["times_s"].append(time.perf_counter() - t0)
                entry["chars"] = len(text)
                entry["elements"] = len(state.selector_map)
            except Exception as exc:  # one page failing must not lose the others
                entry["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return result


if __name__ == "__main__":
    spec = json.loads(open(sys.argv[1]).read())
    out = asyncio.run(main(spec))
    sys.stdout.write("\n" + json.dumps(out) + "\n")
