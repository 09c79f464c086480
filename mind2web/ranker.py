"""MindAct's candidate ranker output (scores_all_data.pkl), attached to Mind2Web candidates."""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mind2web.data import Task
from webagent.errors import UserError

__all__ = ["RankerResults", "attach_ranker", "load_ranker", "load_ranker_scores"]


@dataclass
class RankerResults:
    """MindAct's candidate-generation output: ``scores[f"{annotation_id}_{action_uid}"]
    [backend_node_id] -> float`` and the matching 0-based ``ranks`` (0 = best)."""

    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    ranks: dict[str, dict[str, int]] = field(default_factory=dict)


_SAFE_GLOBALS = {
    ("builtins", "dict"),
    ("builtins", "list"),
    ("builtins", "tuple"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "float"),
    ("builtins", "int"),
    ("builtins", "str"),
    ("collections", "defaultdict"),
    ("collections", "OrderedDict"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
}


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _SAFE_GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} (only plain data is allowed)")


def load_ranker(path: str | Path) -> RankerResults:
    """Read MindAct's ``scores_all_data.pkl``: a pickled dict ``{"scores": {sample_id:
    {backend_node_id: score}}, "ranks": {sample_id: {backend_node_id: rank}}}`` with
    ``sample_id = f"{annotation_id}_{action_uid}"``. Only plain data is unpickled."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"ranker scores file not found: {p}")
    try:
        with p.open("rb") as f:
            data = _SafeUnpickler(f).load()
    except Exception as e:  # noqa: BLE001 - any unpickling failure is a bad file
        raise UserError(f"{p}: not a readable scores pickle ({type(e).__name__}: {e})") from e
    if not isinstance(data, Mapping) or not isinstance(data.get("scores"), Mapping):
        raise UserError(
            f"{p}: expected a dict with a 'scores' dict (MindAct's scores_all_data.pkl), got {type(data).__name__}"
            + (f" with keys {sorted(map(str, data))[:5]}" if isinstance(data, Mapping) else "")
        )
    out = RankerResults()
    try:
        for sid, per in data["scores"].items():
            out.scores[str(sid)] = {str(k): float(v) for k, v in per.items()}
        raw_ranks = data.get("ranks")
        if isinstance(raw_ranks, Mapping):
            for sid, per in raw_ranks.items():
                out.ranks[str(sid)] = {str(k): int(v) for k, v in per.items()}
    except (AttributeError, TypeError, ValueError) as e:
        raise UserError(f"{p}: 'scores'/'ranks' must map sample ids to {{backend_node_id: number}} ({e})") from e
    for sid, per in out.scores.items():
        if sid not in out.ranks:  # derived from the scores: the best first
            out.ranks[sid] = {k: i for i, k in enumerate(sorted(per, key=lambda k: -per[k]))}
    return out


def load_ranker_scores(path: str | Path) -> dict[str, dict[str, float]]:
    """``{f"{annotation_id}_{action_uid}": {backend_node_id: score}}`` from scores_all_data.pkl."""
    return load_ranker(path).scores


def attach_ranker(tasks: Iterable[Task], ranker: RankerResults) -> int:
    """Set ``score``/``rank`` on every candidate found in ``ranker``; returns how many
    candidates had no entry (left as None)."""
    missing = 0
    for task in tasks:
        for action in task.actions:
            sid = f"{task.annotation_id}_{action.action_uid}"
            scores, ranks = ranker.scores.get(sid, {}), ranker.ranks.get(sid, {})
            for c in (*action.pos_candidates, *action.neg_candidates):
                c.score = scores.get(c.backend_node_id)
                c.rank = ranks.get(c.backend_node_id)
                missing += c.score is None
    return missing
