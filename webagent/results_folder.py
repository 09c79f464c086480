"""One results folder for every evaluator (issue 35, item 1): ``OUT/config.json`` pins what
decides the results and a run with another configuration is refused, listing what differs;
``OUT/<rows>.jsonl`` gets one line per finished item at once, so a killed run loses at most
the item in flight and a rerun resumes (an ``error`` row is run again; a torn last line, a
run killed mid-write, is dropped); ``shard`` takes every n-th item, and ``merge`` joins the
folders of shards run with one configuration; ``figure`` draws a report's chart.

Each evaluator names its configuration model (pydantic), its row model (``Row``), its rows
file and the key of a row (apps: the task; MiniWoB++: task and seed)."""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from webagent.errors import UserError

C = TypeVar("C", bound=BaseModel)
T = TypeVar("T")
CONFIG_FILE = "config.json"


class Row(BaseModel):
    """One line of a rows file: the fields set, in the model's order (a field a row never had,
    as ``goal_step`` of a task that failed to start, stays out of its line), as JSON with
    ``", "`` and ``": "`` between items."""

    model_config = ConfigDict(extra="forbid")

    def to_line(self) -> str:
        return json.dumps(self.model_dump(mode="json", exclude_unset=True), ensure_ascii=False) + "\n"


def shard(items: Sequence[T], i: int, n: int) -> list[T]:
    """Every n-th item from the i-th (0-based): ``--shard i/n``."""
    return [item for k, item in enumerate(items) if k % n == i]


class ResultsFolder(Generic[C]):
    """One evaluation's results folder (see the module docstring)."""

    def __init__(
        self,
        out: Path,
        config_type: type[C],
        row_type: type[Any],
        key: Callable[[Any], Hashable],
        *,
        rows_file: str = "episodes.jsonl",
        what: str = "an evaluation",
        finished: Callable[[Any], bool] | None = None,
    ):
        self.out, self.config_type, self.row_type, self.key = Path(out), config_type, row_type, key
        self.rows_path = self.out / rows_file
        self.what = what  # "an apps eval run": how a refusal names what the folder holds
        # whether a row's item is done (default: its status is not "error"; an undone item runs again)
        self.finished = finished or (lambda row: getattr(row, "status", "error") != "error")

    def stored(self) -> dict | None:
        """``config.json`` as written (``None`` when nothing is pinned yet)."""
        path = self.out / CONFIG_FILE
        if not path.is_file():
            return None
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}: not valid JSON ({exc.msg}); use another --out or delete the folder") from None
        if not isinstance(stored, dict):
            raise UserError(f"{path}: expected a JSON object; use another --out or delete the folder")
        return stored

    def stored_config(self) -> C | None:
        """The pinned configuration (a setting added since the folder was written reads as its
        default); ``None`` when nothing is pinned yet."""
        stored = self.stored()
        if stored is None:
            return None
        try:
            return self.config_type.model_validate(stored)
        except ValidationError:
            raise UserError(
                f"{self.out / CONFIG_FILE}: not the configuration of {self.what} of this version (fields differ)"
            ) from None

    def check(self, config: C, ignore: tuple[str, ...] = ()) -> dict | None:
        """Refuse a folder holding another configuration (fields in ``ignore`` aside: a CLI
        checks before the model, whose name it does not know yet, is started); returns the
        stored configuration (``None``: nothing pinned yet)."""
        stored = self.stored()
        if stored is None:
            return None
        if missing := [n for n, f in type(config).model_fields.items() if f.is_required() and n not in stored]:
            raise UserError(
                f"{self.out / CONFIG_FILE}: written by an older version for {self.what} (it has no "
                f"{', '.join(missing)}); use another --out"
            )
        if diff := [d for name, d in differences(config, stored) if name not in ignore]:
            raise UserError(
                f"{self.out} holds {self.what} with another configuration ({'; '.join(diff)}); use another --out"
            )
        return stored

    def pin(self, config: C) -> None:
        """Write ``config.json``, or refuse a folder holding another configuration."""
        if self.check(config) is None:
            self.out.mkdir(parents=True, exist_ok=True)
            (self.out / CONFIG_FILE).write_text(json.dumps(config.model_dump(mode="json"), indent=2))

    def rows(self) -> dict[Hashable, Any]:
        """The last row of each key (a ``row_type``); a torn last line (killed mid-write) is
        dropped, a damaged line before it is one error naming the file, the line and the field."""
        rows: dict[Hashable, Any] = {}
        if not self.rows_path.is_file():
            return rows
        text = self.rows_path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = self.row_type.model_validate_json(line)
            except ValidationError as exc:
                if n == len(lines) and not text.endswith("\n"):
                    break  # the row being written when the run was killed: that item runs again
                err = exc.errors()[0]
                why = f"{'.'.join(map(str, err['loc']))}: {err['msg']}" if err["loc"] else "the file is damaged"
                raise UserError(f"{self.rows_path}, line {n}: not a row of {self.what} ({why})") from None
            key = self.key(row)
            rows.pop(key, None)  # a re-run's row replaces the old one, and goes last
            rows[key] = row
        return rows

    def done(self, rows: Mapping[Any, Any] | None = None) -> set[Hashable]:
        """The keys whose last row is finished (an error row is run again); ``rows``: the
        folder's rows when the caller has read them already."""
        return {k for k, row in (self.rows() if rows is None else rows).items() if self.finished(row)}

    def at(self, out: Path) -> ResultsFolder[C]:
        """A folder of the same kind at ``out`` (a shard, a merge's target)."""
        folder = copy.copy(self)
        folder.out, folder.rows_path = Path(out), Path(out) / self.rows_path.name
        return folder

    def append(self, row: Any) -> None:
        """One row, written at once (a torn tail left by a killed run is cut first)."""
        self.out.mkdir(parents=True, exist_ok=True)
        cut_torn_tail(self.rows_path)
        with open(self.rows_path, "a", encoding="utf-8") as f:
            f.write(row.to_line())


def differences(config: BaseModel, stored: dict) -> list[tuple[str, str]]:
    """(field, what differs) between ``config`` and a stored ``config.json``: ``"steps (15 → 3)"``,
    a dict field by its keys (``"prompt web_gist"``, an edited prompt), a field added since the
    folder was written read as its default, and a stored field this version lacks."""
    mine = config.model_dump(mode="json")
    out: list[tuple[str, str]] = []
    for name, value in mine.items():
        field = type(config).model_fields[name]
        old = stored.get(name, None if field.is_required() else json.loads(json.dumps(field.default, default=list)))
        if is_dataclass(field.annotation) and isinstance(old, dict):  # options pinned whole: each by name
            old = {**json.loads(json.dumps(asdict(field.annotation()))), **old}
            changed = sorted(k for k in set(value) | set(old) if value.get(k) != old.get(k))
            out += [(name, f"{k} ({_short(old.get(k))} → {_short(value.get(k))})") for k in changed]
        elif isinstance(value, dict) and isinstance(old, dict):
            changed = sorted(k for k in set(value) | set(old) if value.get(k) != old.get(k))
            out += [(name, f"{name.removesuffix('s')} {k}") for k in changed]
        elif old != value:
            out.append((name, f"{name} ({_short(old)} → {_short(value)})"))
    out += [(name, f"{name} (not in this version)") for name in stored if name not in mine]
    return out


def _short(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def cut_torn_tail(path: Path) -> None:
    """Cut a last line left without its newline (a run killed mid-write)."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as f:
        data = f.read()
        if not data.endswith(b"\n"):
            f.truncate(data.rfind(b"\n") + 1)


def merge(shards: Sequence[Path], out: Path, like: ResultsFolder) -> int:
    """Join the rows of shard folders run with one configuration into ``out`` (a folder of the
    same kind as ``like``); returns the row count. Another configuration, or a folder with
    none, is one clear line and nothing is written."""
    folders = [like.at(s) for s in shards]
    configs = []
    for folder in folders:
        config = folder.stored_config()
        if config is None:
            raise UserError(f"{folder.out} has no {CONFIG_FILE}: not a results folder of {like.what}")
        configs.append(config)
    for folder in folders[1:]:
        if diff := differences(configs[0], folder.stored() or {}):
            raise UserError(
                f"{folder.out} has another configuration than {folders[0].out} ({'; '.join(d for _, d in diff)}): "
                "merge only shards of one configuration"
            )
    rows: dict[Hashable, Any] = {}
    for folder in folders:
        rows.update(folder.rows())
    target = like.at(out)
    target.pin(configs[0])
    target.rows_path.write_text("".join(r.to_line() for r in rows.values()))
    return len(rows)


@contextlib.contextmanager
def progress(
    description: str, total: int, done: int, what: str, say: Callable[[str], None] | None, console=None
) -> Iterator[Callable[[], int]]:
    """A bar of ``total`` items, ``done`` of them done already (on ``console``, default rich's);
    yields the function to call as one more finishes, which returns how many are done now.
    Without a terminal (a log file, CI) the bar is not drawn: ``say`` gets a line now and then,
    ``"40/200 {what} done"``. ``say`` None: quiet, no bar either."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        disable=say is None,
        console=console,
    ) as bar:
        job = bar.add_task(description, total=total, completed=done)
        plain = None if bar.console.is_terminal else say
        finished = [done]

        def advance() -> int:
            bar.advance(job)
            finished[0] += 1
            if plain and (finished[0] % max(1, total // 20) == 0 or finished[0] == total):
                plain(f"{finished[0]}/{total} {what} done")
            return finished[0]

        yield advance


@contextlib.contextmanager
def figure(path: Path, figsize: tuple[float, float], dpi: int) -> Iterator[Any]:
    """The axes of a report's chart (matplotlib, no display), laid out and saved to ``path``
    at ``dpi`` when the block ends."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figsize)
    yield ax
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
