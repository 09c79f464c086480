"""Mind2Web records: models and loaders (MindAct's ranker scores are in mind2web.ranker).

Sources understood by :func:`load_tasks`:

* a directory in the official layout, ``DIR/test_task/*.json``, ``DIR/test_website/*.json``,
  ``DIR/test_domain/*.json`` (any subfolder names work; each is one split);
* a directory holding JSON files directly (one split, named after the directory);
* one ``.json`` file (a list of tasks) or ``.jsonl`` file (one task per line);
* ``hf:NAME[:SPLIT]``, e.g. ``hf:osunlp/Mind2Web:train``, through ``datasets.load_dataset``
  (:mod:`mind2web.hub`).
  The split must be named (here or as ``split=``): nothing falls back to train. The hub's
  ``osunlp/Mind2Web`` holds only ``train``; its test splits are a separate download.

Every record is validated; a malformed one raises :class:`DataError` naming the file, the
record (``task 3, action 1`` — 0-based indices into the file's list and the task's
``actions``; ``line 7`` — 1-based — for JSONL) and the field. ``skip_bad=True`` logs the
problem in ``bad_log`` and goes on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from mind2web.hub import hub_split, load_hf_records
from webagent.errors import DataError, UserError

__all__ = [
    "Candidate",
    "Operation",
    "Action",
    "Task",
    "Step",
    "iter_steps",
    "load_tasks",
    "load_hf_tasks",
    "tasks_from_records",
]

HF_PREFIX = "hf:"
DATA_SUFFIXES = (".json", ".jsonl")


class _Record(BaseModel):
    # Real records carry fields we do not model (and the HF export adds more): ignore them.
    model_config = ConfigDict(extra="ignore")


class Candidate(_Record):
    """One candidate element of an action. ``attributes`` is a JSON string in the dataset;
    it is parsed to a dict here (a dict is accepted as is)."""

    tag: str
    backend_node_id: str
    attributes: dict[str, Any]
    is_original_target: bool = False
    is_top_level_target: bool = False
    # Filled in by attach_ranker() from MindAct's scores_all_data.pkl; not in the raw data.
    score: float | None = None
    rank: int | None = None

    @field_validator("backend_node_id", mode="before")
    @classmethod
    def _node_id_to_str(cls, v: Any) -> Any:
        if isinstance(v, bool):
            return v  # let pydantic reject it
        if isinstance(v, int):
            return str(v)
        return v

    @field_validator("attributes", mode="before")
    @classmethod
    def _parse_attributes(cls, v: Any) -> Any:
        if isinstance(v, str):
            try:
                parsed = json.loads(v)
            except json.JSONDecodeError as e:
                raise ValueError(f"not valid JSON ({e.msg} at char {e.pos})") from None
            if not isinstance(parsed, dict):
                raise ValueError(f"must be a JSON object, got {type(parsed).__name__}")
            return parsed
        if v is None:
            return {}
        return v

    @property
    def attributes_json(self) -> str:
        """The attributes re-serialised as the dataset's JSON string form."""
        return json.dumps(self.attributes)


class Operation(_Record):
    op: Literal["CLICK", "TYPE", "SELECT"]
    original_op: str = ""
    value: str = ""

    @field_validator("value", "original_op", mode="before")
    @classmethod
    def _none_to_empty(cls, v: Any) -> Any:
        return "" if v is None else v


class Action(_Record):
    action_uid: str
    raw_html: str | None = None
    cleaned_html: str
    operation: Operation
    pos_candidates: list[Candidate]
    neg_candidates: list[Candidate] = []

    @field_validator("neg_candidates", mode="before")
    @classmethod
    def _none_to_list(cls, v: Any) -> Any:
        return [] if v is None else v

    @property
    def pos_ids(self) -> set[str]:
        return {c.backend_node_id for c in self.pos_candidates}


class Task(_Record):
    annotation_id: str
    website: str
    domain: str
    subdomain: str
    confirmed_task: str
    action_reprs: list[str]
    actions: list[Action]
    split: str = ""

    def steps(self) -> list[Step]:
        return [Step(self, i) for i in range(len(self.actions))]

    @property
    def action_uids(self) -> list[str]:
        return [a.action_uid for a in self.actions]


@dataclass(frozen=True)
class Step:
    """One action of a task, with the previous actions teacher-forced from the gold
    ``action_reprs[:index]`` (as MindAct does)."""

    task: Task
    index: int

    @property
    def action(self) -> Action:
        return self.task.actions[self.index]

    @property
    def previous_actions(self) -> list[str]:
        return list(self.task.action_reprs[: self.index])

    def last_previous_actions(self, k: int) -> list[str]:
        """The last ``k`` previous actions (MindAct's ``previous_k``, default 5); 0 → none.
        (Upstream slices ``[-previous_k:]``, which for 0 would give all of them.)"""
        return self.previous_actions[-k:] if k > 0 else []

    @property
    def annotation_id(self) -> str:
        return self.task.annotation_id

    @property
    def action_uid(self) -> str:
        return self.action.action_uid

    @property
    def split(self) -> str:
        return self.task.split

    @property
    def key(self) -> tuple[str, str]:
        return (self.task.annotation_id, self.action.action_uid)


def iter_steps(tasks: Iterable[Task]) -> Iterator[Step]:
    for task in tasks:
        yield from task.steps()


# ---------------------------------------------------------------------------
# validation with precise error locations


def _field_name(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _locate(err: Mapping[str, Any], record_label: str, raw: Any) -> tuple[str, str]:
    """pydantic error loc → (record label incl. action index, dotted field name)."""
    loc = tuple(err.get("loc", ()))
    record = record_label
    if isinstance(raw, Mapping) and isinstance(raw.get("annotation_id"), str):
        record += f" ({raw['annotation_id']})"
    if len(loc) >= 2 and loc[0] == "actions" and isinstance(loc[1], int):
        record += f", action {loc[1]}"
        loc = loc[2:]
    return record, _field_name(loc) or "(record)"


def _message(err: Mapping[str, Any]) -> str:
    msg = str(err.get("msg", "invalid"))
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if err.get("type") == "missing":
        return "required field is missing"
    inp = err.get("input")
    if isinstance(inp, (str, int, float, bool)) or inp is None:
        shown = repr(inp)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        msg += f" (got {shown})"
    return msg


class _Sink:
    """Where problems go: raised, or logged and skipped."""

    def __init__(self, skip_bad: bool, bad_log: list | None):
        self.skip_bad = skip_bad
        self.bad_log = bad_log

    def problem(self, file: str, message: str, record: Any = None, fld: str | None = None) -> None:
        if not self.skip_bad:
            raise DataError(file, message, record=record, field=fld)
        if self.bad_log is not None:
            self.bad_log.append({"file": file, "record": record, "field": fld, "message": message})


def _validate(raw: Any, file: str, record_label: str, split: str, sink: _Sink) -> Task | None:
    if not isinstance(raw, Mapping):
        sink.problem(file, f"a task must be a JSON object, got {type(raw).__name__}", record_label)
        return None
    try:
        task = Task.model_validate(raw)
    except ValidationError as e:
        errors = e.errors()
        record, fld = _locate(errors[0], record_label, raw)
        msg = _message(errors[0])
        if len(errors) > 1:
            msg += f" (and {len(errors) - 1} more problem(s) in this task)"
        sink.problem(file, msg, record, fld)
        return None
    task.split = split
    return task


def tasks_from_records(
    records: Iterable[Any],
    *,
    source: str,
    split: str,
    skip_bad: bool = False,
    bad_log: list | None = None,
) -> list[Task]:
    """Validate an iterable of raw task dicts (a parsed JSON list, a ``datasets.Dataset``,
    ...) into :class:`Task` objects. Records are labelled ``task 0``, ``task 1``, ..."""
    sink = _Sink(skip_bad, bad_log)
    out: list[Task] = []
    for i, raw in enumerate(records):
        task = _validate(raw, source, f"task {i}", split, sink)
        if task is not None:
            out.append(task)
    return out


def _read_json_file(path: Path, split: str, sink: _Sink) -> list[Task]:
    file = str(path)
    try:
        with path.open("rb") as f:
            data = json.load(f)
    except json.JSONDecodeError as e:
        sink.problem(file, f"invalid JSON: {e.msg} (line {e.lineno}, column {e.colno})")
        return []
    except UnicodeDecodeError as e:
        sink.problem(file, f"not UTF-8 text: {e}")
        return []
    if not isinstance(data, list):
        sink.problem(file, f"top level must be a JSON list of tasks, got {type(data).__name__}")
        return []
    tasks = tasks_from_records(data, source=file, split=split, skip_bad=sink.skip_bad, bad_log=sink.bad_log)
    del data  # only one file's parsed JSON alive at a time
    return tasks


def _read_jsonl_file(path: Path, split: str, sink: _Sink) -> list[Task]:
    file = str(path)
    out: list[Task] = []
    with path.open("rb") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            label = f"line {lineno}"
            try:
                raw = json.loads(line.strip())
            except json.JSONDecodeError as e:
                sink.problem(file, f"invalid JSON: {e.msg} (column {e.colno})", label)
                continue
            except UnicodeDecodeError as e:
                sink.problem(file, f"not UTF-8 text: {e}", label)
                continue
            task = _validate(raw, file, label, split, sink)
            if task is not None:
                out.append(task)
    return out


_READERS = {".json": _read_json_file, ".jsonl": _read_jsonl_file}  # by suffix (DATA_SUFFIXES)


def _natural_key(path: Path) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path.name)]


def _data_files(folder: Path) -> list[Path]:
    return sorted(
        (p for p in folder.iterdir() if p.is_file() and p.suffix in DATA_SUFFIXES and not p.name.startswith(".")),
        key=_natural_key,
    )


def _splits_of(directory: Path) -> dict[str, list[Path]]:
    splits: dict[str, list[Path]] = {}
    direct = _data_files(directory)
    if direct:
        splits[directory.name] = direct
    for sub in sorted((p for p in directory.iterdir() if p.is_dir() and not p.name.startswith(".")), key=_natural_key):
        files = _data_files(sub)
        if files:
            splits[sub.name] = files
    return splits


def load_hf_tasks(
    name: str,
    split: str = "train",
    *,
    skip_bad: bool = False,
    bad_log: list | None = None,
    **load_kwargs: Any,
) -> list[Task]:
    """Load through ``datasets.load_dataset(name, split=split, **load_kwargs)``
    (``mind2web.hub``) and validate each record like a file's."""
    records = load_hf_records(name, split, **load_kwargs)
    return tasks_from_records(records, source=f"hf:{name}:{split}", split=split, skip_bad=skip_bad, bad_log=bad_log)


def load_tasks(
    source: str | Path,
    *,
    split: str | None = None,
    skip_bad: bool = False,
    bad_log: list | None = None,
) -> list[Task]:
    """Load Mind2Web tasks from a directory, a ``.json``/``.jsonl`` file or ``hf:NAME[:SPLIT]``.

    ``split`` selects one subfolder of a directory (or the hub split); for a single file it
    only labels the tasks (default: the file's folder name).
    """
    if isinstance(source, str) and source.startswith(HF_PREFIX):
        spec = source[len(HF_PREFIX) :]
        name, _, hf_split = spec.partition(":")
        if not name:
            raise UserError(f"{source!r}: name a dataset and split, e.g. 'hf:osunlp/Mind2Web:train'")
        return load_hf_tasks(name, split=hub_split(source, name, hf_split, split), skip_bad=skip_bad, bad_log=bad_log)

    path = Path(source)
    if not path.exists():
        raise UserError(
            f"Mind2Web data not found: {path} does not exist (give a directory of split folders, a .json/.jsonl file, or hf:osunlp/Mind2Web)"
        )
    sink = _Sink(skip_bad, bad_log)

    if path.is_file():
        if path.suffix not in DATA_SUFFIXES:
            raise UserError(f"{path}: expected a .json or .jsonl file of Mind2Web tasks")
        return _READERS[path.suffix](path, split or path.resolve().parent.name, sink)

    splits = _splits_of(path)
    if not splits:
        raise UserError(f"no JSON files found in {path} or its subfolders (expected e.g. {path}/test_task/*.json)")
    if split is not None:
        if split not in splits:
            raise UserError(f"no split {split!r} in {path}; available: {', '.join(sorted(splits))}")
        splits = {split: splits[split]}
    tasks: list[Task] = []
    for name, files in splits.items():
        for f in files:
            tasks.extend(_READERS[f.suffix](f, name, sink))
    return tasks
