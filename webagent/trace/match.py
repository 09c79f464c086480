"""Find a fingerprinted element again on a live page: score every actionable element,
take the unique best above a threshold, or say why there is none.

Scoring (weights below): features of the recorded fingerprint that are present count
towards the maximum; each one the candidate shares adds its weight; the score is the
share. A candidate must have the same tag and share at least one *identity* feature
(name, label, id, name attribute, placeholder, aria-label, href path) when the recorded
element had one: a button whose label and id both changed is not "the same button"
because it sits in the same form. Two candidates within ``MARGIN`` of each other are
told apart by position among same-named elements (the 2nd of 3 "Add to cart"), or not
at all ("not found uniquely").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webagent.trace.fingerprint import Fingerprint, candidates, describe_element, place, short
from webagent.web.control_name import visible_name

THRESHOLD = 0.5
MARGIN = 0.12

WEIGHTS = {
    "name": 4.0,
    "label": 3.0,
    "attr:id": 3.0,
    "attr:name": 3.0,
    "attr:href": 2.0,
    "attr:placeholder": 2.0,
    "attr:aria-label": 2.0,
    "attr:type": 1.0,
    "attr:role": 1.0,
    "attr:title": 0.5,
    "attr:alt": 0.5,
    "role": 1.0,
    "form": 1.0,
    "heading": 1.0,
    "landmarks": 0.5,
    "nth": 0.5,
}
IDENTITY = ("name", "label", "attr:id", "attr:name", "attr:placeholder", "attr:aria-label", "attr:href")


@dataclass
class Match:
    element_id: str | None
    score: float = 0.0
    why: str = ""
    shared: list[str] = field(default_factory=list)
    candidates: list[tuple[str, float, str]] = field(default_factory=list)  # (id, score, short) best first

    @property
    def found(self) -> bool:
        return self.element_id is not None

    def to_json(self) -> dict:
        return {
            "element_id": self.element_id,
            "score": round(self.score, 3),
            "why": self.why,
            "shared": self.shared,
            "candidates": [{"id": i, "score": round(s, 3), "element": d} for i, s, d in self.candidates[:3]],
        }


def _norm(text: str | None) -> str:
    """For comparing: case, spacing and icon-font glyphs aside (a name with or without them is one name)."""
    return visible_name(text or "").lower()


def _similar(a: str, b: str) -> bool:
    """Close enough to count half: one contains the other, or most words are shared."""
    a, b = _norm(a), _norm(b)
    if not a or not b:
        return False
    if a in b or b in a:
        return min(len(a), len(b)) / max(len(a), len(b)) >= 0.5
    wa, wb = set(a.split()), set(b.split())
    return len(wa & wb) / len(wa | wb) >= 0.6


def _features(fp: Fingerprint) -> dict[str, Any]:
    out: dict[str, Any] = {key: getattr(fp, key) for key in ("name", "label", "role", "heading") if getattr(fp, key)}
    out |= {f"attr:{attr}": value for attr, value in fp.attrs.items()}
    return out | {key: getattr(fp, key) for key in ("form", "landmarks") if getattr(fp, key)}


def score(recorded: Fingerprint, live: Fingerprint) -> tuple[float, list[str], bool]:
    """(score in 0..1, shared features, shares an identity feature) of one candidate."""
    want, have = _features(recorded), _features(live)
    total = sum(WEIGHTS.get(k, 0.0) for k in want)
    got, shared = 0.0, []
    for key, value in want.items():
        other = have.get(key)
        if other is None:
            continue
        weight = WEIGHTS.get(key, 0.0)
        if key == "form":
            hit = (
                weight if any(value.get(k) and value.get(k) == other.get(k) for k in ("action", "id", "name")) else 0.0
            )
        elif key == "landmarks":
            hit = weight if value == other else 0.0
        elif key in ("name", "label", "heading"):
            hit = weight if _norm(value) == _norm(other) else (weight / 2 if _similar(value, other) else 0.0)
        else:
            hit = weight if _norm(str(value)) == _norm(str(other)) else 0.0
        if hit:
            got += hit
            shared.append(key if hit == weight else key + "~")
    has_identity = any(k in want for k in IDENTITY)
    identity = (not has_identity) or any(s.rstrip("~") in IDENTITY for s in shared)
    return (got / total if total else 0.0), shared, identity


def find(recorded: Fingerprint, raw_html: str, ids=None) -> Match:
    """The element of ``raw_html`` (among ``ids``) that ``recorded`` describes."""
    pool = candidates(raw_html, ids)
    scored = []
    tag = recorded.tag
    for el in pool:
        if el.tag != tag or (el.get("is_visible") == "false" and el.tag != "option"):
            continue
        live = describe_element(el)
        value, shared, identity = score(recorded, live)
        if identity:
            scored.append((value, el, live, shared))
    scored.sort(key=lambda t: -t[0])
    listing = [(el.get("backend_node_id"), value, short(live)) for value, el, live, _ in scored]
    what = short(recorded)
    if not scored or scored[0][0] < THRESHOLD:
        best = f"; best was {listing[0][2]} at {listing[0][1]:.2f}" if scored else ""
        return Match(
            None,
            scored[0][0] if scored else 0.0,
            candidates=listing,
            why=f"no <{tag}> on the page like {what} (none shares its name, label, id or "
            f"attributes above {THRESHOLD}{best})",
        )
    top = [t for t in scored if scored[0][0] - t[0] < MARGIN]
    if len(top) > 1:
        want = recorded.nth.of_name if recorded.nth is not None else None
        if want:
            by_place = [t for t in top if place(t[1], pool, t[2].name).of_name == want]
            if len(by_place) == 1:
                value, el, live, shared = by_place[0]
                return Match(
                    el.get("backend_node_id"),
                    value,
                    shared=[*shared, "nth"],
                    candidates=listing,
                    why=f"{len(top)} alike; told apart by position ({want[0] + 1} of {want[1]})",
                )
        return Match(
            None,
            scored[0][0],
            candidates=listing,
            why=f"not found uniquely: {len(top)} elements match {what} about equally well ("
            + ", ".join(f"{d} {s:.2f}" for _, s, d in listing[: len(top)][:4])
            + ")",
        )
    value, el, live, shared = scored[0]
    return Match(
        el.get("backend_node_id"),
        value,
        shared=shared,
        candidates=listing,
        why=f"matched {short(live)} at {value:.2f} on {', '.join(shared)}",
    )
