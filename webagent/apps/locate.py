"""A gold step's element in the live page, as the agent's ids: the element found the way the
gold check finds it (Playwright's ``get_by_role(role, name=..., exact=True)``, ``nth`` when
given), then its Chromium backend node id, which is the agent's id for it (an element of the
page's own target is ``str(backendNodeId)``; see ``webagent.browser.capture``).

The agent may show the element on a line of its own, or on the line of a control around it
(a link inside a ``role=tab`` item) or inside it: ``gold_ids`` lists the element's own id,
then its descendants', then its nearest ancestors', and the ceiling takes the first that has
a line in the prompt. Nothing here reads the prompt."""

from __future__ import annotations

from webagent.apps.spec import GoldStep

LOCATE_TIMEOUT_MS = 2_000
MAX_DESCENDANTS = 30
MAX_ANCESTORS = 4
_GROUP = "webagent-gold"
_HOLD = "__webagentGold"
# Runs on the element in the page's main world: holds it, its first descendants and its
# nearest ancestors for the CDP side to read (and removes the property right after).
_COLLECT = f"""(el) => {{
  const out = [el, ...Array.from(el.querySelectorAll('*')).slice(0, {MAX_DESCENDANTS})];
  for (let up = el.parentElement, k = 0; up && k < {MAX_ANCESTORS}; up = up.parentElement, k++) out.push(up);
  window.{_HOLD} = out;
}}"""


async def gold_ids(browser, step: GoldStep) -> list[str] | None:
    """The agent ids that stand for ``step``'s element (see the module docstring); ``None``
    when no element has the step's role and name on the active page now."""
    page = browser.page
    loc = page.get_by_role(step.role, name=step.name, exact=True)
    loc = loc.nth(step.nth) if step.nth is not None else loc.first
    try:
        if not await loc.count():
            return None
        handle = await loc.element_handle(timeout=LOCATE_TIMEOUT_MS)
        await handle.evaluate(_COLLECT)
        await handle.dispose()
    except Exception:  # noqa: BLE001 - the page changed under the look-up: not found now
        return None
    cdp = await browser.cdp_session(page)
    ids: list[str] = []
    try:
        held = await cdp.send("Runtime.evaluate", {"expression": f"window.{_HOLD}", "objectGroup": _GROUP})
        array = held.get("result", {}).get("objectId")
        if array:
            props = await cdp.send("Runtime.getProperties", {"objectId": array, "ownProperties": True})
            items = sorted(
                (int(p["name"]), p["value"]["objectId"])
                for p in props.get("result", [])
                if p.get("name", "").isdigit() and (p.get("value") or {}).get("objectId")
            )
            for _, object_id in items:
                node = await cdp.send("DOM.describeNode", {"objectId": object_id})
                ids.append(str(node["node"]["backendNodeId"]))
    finally:
        try:
            await cdp.send("Runtime.evaluate", {"expression": f"delete window.{_HOLD}"})
            await cdp.send("Runtime.releaseObjectGroup", {"objectGroup": _GROUP})
        except Exception:  # noqa: BLE001, S110 - the page navigated away: nothing left to release
            pass
    return ids or None
