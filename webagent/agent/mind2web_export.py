"""Live steps saved as a Mind2Web task (``DIR/live/<run>.json``, a list of one task), so
``mind2web eval --data DIR`` scores models on the user's own sites.

Only executed CLICK / TYPE / SELECT steps that succeeded are recorded (Mind2Web has no
other operations); the acted-on element is the positive candidate, with its raw
attributes as a JSON string. The file is rewritten after every step, so an interrupted run
keeps what it did.

Every string written (``confirmed_task``, pages, values, action descriptions) goes through
the trace's ``scrub`` with the run's secrets (values typed into password fields), as
``run.json`` does: the task that carried the password keeps it only as ``REDACTED``.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from webagent.agent import elements
from webagent.browser import Observation, redact
from webagent.trace.writer import scrub

SPLIT = "live"


def action_repr(description: str, op: str, value: str | None) -> str:
    """Mind2Web's form: ``[textbox]  Search -> TYPE: gardens``."""
    return f"{description} -> {op}" + (f": {value}" if op in ("TYPE", "SELECT") else "")


class Mind2WebRecorder:
    def __init__(
        self, folder: str | Path, task: str, start_url: str, run_id: str | None = None, secrets: set[str] | None = None
    ):
        self.secrets = secrets if secrets is not None else set()  # shared with the run's trace when given
        self.folder = Path(folder) / SPLIT
        self.folder.mkdir(parents=True, exist_ok=True)
        self.annotation_id = run_id or uuid.uuid4().hex
        self.path = self.folder / f"{self.annotation_id}.json"
        host = urlsplit(start_url).hostname or "local"
        self.task: dict[str, Any] = {
            "annotation_id": self.annotation_id,
            "website": host,
            "domain": "live",
            "subdomain": host,
            "confirmed_task": task,
            "action_reprs": [],
            "actions": [],
        }

    @property
    def steps(self) -> int:
        return len(self.task["actions"])

    def add(self, obs: Observation, op: str, element_id: str, value: str | None, secret: bool) -> None:
        if secret and value:
            self.secrets.add(value)
        value = redact(value, secret)
        tag, attrs = elements.attributes(obs.raw_html, element_id)
        candidate = {
            "tag": tag or obs.elements[element_id].tag,
            "backend_node_id": element_id,
            "attributes": json.dumps(attrs),
            "is_original_target": True,
            "is_top_level_target": True,
        }
        self.task["actions"].append(
            {
                "action_uid": f"{self.annotation_id}-{self.steps}",
                "raw_html": obs.raw_html,
                "cleaned_html": obs.cleaned_html,
                "operation": {"op": op, "original_op": op, "value": value},
                "pos_candidates": [candidate],
                "neg_candidates": [],
            }
        )
        self.task["action_reprs"].append(action_repr(elements.describe(obs.cleaned_html, element_id), op, value))
        self.write()

    def write(self) -> None:
        """(Re)write the file, every string scrubbed of every secret known by now."""
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps([scrub(self.task, self.secrets)], ensure_ascii=False))
        tmp.replace(self.path)
