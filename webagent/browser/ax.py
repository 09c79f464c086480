"""Chromium's accessibility tree: each element's computed role and accessible name.

A control's name is what the browser computes for assistive technology (the accessible
name computation: ``aria-labelledby``, ``aria-label``, a ``<label>`` even when it is hidden,
the element's own text, ``title``, ``alt``, a placeholder...), read through CDP's
``Accessibility.getFullAXTree`` (BrowserGym names its elements the same way). One call per
document of a target: the page's own, and each same-process iframe's by its ``frameId``;
an out-of-process frame is asked through its own session.

``ax_names(cdp)`` -> {backendNodeId: (role, name)} for every node the tree does not ignore
and that has a role other than text or a generic container; a field the tree leaves unnamed
whose ``<label for>`` is hidden is named by that label's text (``_hidden_labels``). It never
fails the capture: a
document whose tree cannot be read is left out (the agent's own naming rules then apply).
"""

from __future__ import annotations

import asyncio

from webagent.browser.actions import call_function
from webagent.browser.timing import within

MAX_HIDDEN_LABELS = 20  # fields named by a hidden label, read one by one (two CDP calls each)
# Roles that name no element of their own (text runs, layout): the agent's rules name these.
_SKIP_ROLES = frozenset(
    """StaticText InlineTextBox LineBreak generic none presentation ignored RootWebArea WebArea document
    paragraph heading list listitem LabelText Legend Section Abbr Pre Ruby Canvas Figcaption DescriptionList
    DescriptionListTerm DescriptionListDetail term definition blockquote code emphasis strong subscript
    superscript time mark deletion insertion main navigation banner contentinfo complementary region article
    section table rowgroup row cell columnheader rowheader caption figure group form separator
    Iframe IframePresentational""".split()
) | {""}


def _frame_ids(tree: dict) -> list[str]:
    out, stack = [], [tree]
    while stack:
        node = stack.pop()
        out.append(node["frame"]["id"])
        stack.extend(node.get("childFrames", []))
    return out


async def _one_tree(cdp, frame_id: str | None, timeout_s: float) -> list[dict]:
    params = {"frameId": frame_id} if frame_id else {}
    try:
        reply = await within(cdp.send("Accessibility.getFullAXTree", params), timeout_s)
    except Exception:  # noqa: BLE001 - an out-of-process or detached frame: its tree is elsewhere
        return []
    return reply.get("nodes", [])


def _hidden_labels(node: dict) -> list[int]:
    """The ``<label for>`` nodes the tree found for an unnamed field but did not read (a
    hidden label: Chromium leaves it out; the accessible-name computation of ARIA 1.2's
    accname, and Playwright's ``get_by_role``, name the field by it)."""
    out = []
    for source in (node.get("name") or {}).get("sources", []):
        if source.get("nativeSource") in ("labelfor", "labelwrapped"):
            related = (source.get("nativeSourceValue") or {}).get("relatedNodes", [])
            out += [r["backendDOMNodeId"] for r in related if r.get("backendDOMNodeId") and not r.get("text")]
    return out


_TEXT_JS = "function () { return this.textContent; }"


async def _label_text(cdp, bid: int, timeout_s: float) -> str:
    try:
        found = await within(cdp.send("DOM.resolveNode", {"backendNodeId": bid}), timeout_s)
        text = await within(call_function(cdp, found["object"]["objectId"], _TEXT_JS), timeout_s)
        return " ".join(str(text or "").split())
    except Exception:  # noqa: BLE001 - a label gone meanwhile: the field stays unnamed
        return ""


async def ax_names(cdp, timeout_s: float) -> dict[int, tuple[str, str]]:
    """{backendNodeId: (role, accessible name)} of the target behind ``cdp`` (see above)."""
    try:
        tree = await within(cdp.send("Page.getFrameTree"), timeout_s)
        frames: list[str | None] = list(_frame_ids(tree["frameTree"]))
    except Exception:  # noqa: BLE001 - a worker or a frame target without the Page domain
        frames = [None]
    trees = await asyncio.gather(*(_one_tree(cdp, f, timeout_s) for f in frames))
    found: dict[int, tuple[str, str]] = {}
    unnamed: dict[int, list[int]] = {}  # a field the tree left unnamed -> its hidden labels
    for nodes in trees:
        for node in nodes:
            bid = node.get("backendDOMNodeId")
            if bid is None or node.get("ignored"):
                continue
            role = str((node.get("role") or {}).get("value") or "")
            if role in _SKIP_ROLES:
                continue
            name = " ".join(str((node.get("name") or {}).get("value") or "").split())
            if not name and (labels := _hidden_labels(node)):
                unnamed[bid] = labels
            found.setdefault(bid, (role, name))
    for bid, labels in list(unnamed.items())[:MAX_HIDDEN_LABELS]:
        texts = [await _label_text(cdp, label, timeout_s) for label in labels]
        if name := " ".join(t for t in texts if t):
            found[bid] = (found[bid][0], name)
    return found
