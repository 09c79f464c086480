"""Element ids that survive a reload of the same page.

An element's id is the browser's node id, and a reload (a "Show All" link that leads back to
the same list, a form the server renders again at the same URL) gives every node a new one.
The model then read every line of an unchanged page as new: the conversation re-sent the
whole page (~1,300 tokens a step on roundup's issue list), and the id it had just used was
gone. Here the next observation of the same URL takes the previous one's ids for the
controls that are still there: the same kind, name and options, counted in page order (the
third "Quantity" select keeps the third one's id). Only the names change; what each id
points at (``Observation.elements``) comes from the new capture, so an action always reaches
the new document's node."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from webagent.browser import Observation

_ID = re.compile(r'backend_node_id="([^"]+)"')


def by_place(controls: Mapping) -> dict[tuple, str]:
    """Each control's id under (kind, name, options, how many alike came before it)."""
    seen: dict[tuple, int] = {}
    out: dict[tuple, str] = {}
    for cid, control in controls.items():
        what = (control.kind, control.name, control.options)
        out[(*what, seen.get(what, 0))] = cid
        seen[what] = seen.get(what, 0) + 1
    return out


def keep_ids(
    before: Observation | None, after: Observation, controls_of: Callable[[Observation], Mapping]
) -> Observation:
    """``after`` with the ids its controls had in ``before`` when both show the same URL;
    ``after`` itself when nothing is to be renamed or a kept id would collide with another
    element's (node ids only grow within a page's process, so that is rare)."""
    if before is None or before is after or before.url != after.url:
        return after
    old = by_place(controls_of(before))
    rename = {cid: old[place] for place, cid in by_place(controls_of(after)).items() if old.get(place, cid) != cid}
    if not rename:
        return after
    ids = [rename.get(i, i) for i in after.elements]
    if len(set(ids)) != len(ids):
        return after

    def renamed(html: str) -> str:
        return _ID.sub(lambda m: f'backend_node_id="{rename.get(m.group(1), m.group(1))}"', html)

    return after.model_copy(
        update={
            "cleaned_html": renamed(after.cleaned_html),
            "raw_html": renamed(after.raw_html),
            "elements": {rename.get(i, i): ref for i, ref in after.elements.items()},
        }
    )
