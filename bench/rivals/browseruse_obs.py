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


async def evaluate(session, expression: str):
    cdp = await session.get_or_create_cdp_session()
    out = await cdp.cdp_client.send.Runtime.evaluate(
        params={"expression": expression, "awaitPromise": True, "returnByValue": True}, session_id=cdp.session_id
    )
    if out.get("exceptionDetails"):
        raise RuntimeError(f"setup script failed: {out['exceptionDetails'].get('text')}")
    return out.get("result", {}).get("value")


async def main(spec: dict) -> dict:
    from browser_use import BrowserSession
    from browser_use.dom.service import DomService

    logging.getLogger("browser_use").setLevel(logging.WARNING)
    session = BrowserSession(cdp_url=spec["cdp_url"], keep_alive=True)
    await session.start()
    pages: dict[str, dict] = {}
    result = {"rival": "browser-use", "version": version("browser-use"), "pages": pages}
    try:
        for page in spec["pages"]:
            entry: dict = {"times_s": []}
            pages[page["name"]] = entry
            try:
                await session.navigate_to(page["url"])
                await asyncio.sleep(0.3)
                if page.get("setup_js"):
                    await evaluate(session, page["setup_js"])
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
    finally:
        try:
            await asyncio.wait_for(session.stop(), 20)
        except Exception:
            pass
    return result


if __name__ == "__main__":
    spec = json.loads(open(sys.argv[1]).read())
    out = asyncio.run(main(spec))
    sys.stdout.write("\n" + json.dumps(out) + "\n")
