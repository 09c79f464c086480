"""One evaluation loop for every evaluator (issue 46, item 4).

An evaluator (``Evaluator``) says what it runs: its configuration (pinned whole in
``OUT/config.json``), ``plan()`` (its keyed items), ``run_item`` (one item's row) and
``error_row`` (the row of an item that could not run). ``evaluate`` does the rest, the same
for every evaluator: it pins the configuration in the results folder (``webagent.results_folder``),
skips the items already done (resume), runs the others on a backend, appends each row as it
comes and says a line per finished item. The backends are interchangeable and run the same
``run_rows`` on the same items: ``Serial`` in this process (``concurrency`` workers at once),
``webagent.cluster.OnRay`` one Ray task per item.

An item gives one typed row (``run_item``: an app's task, a MiniWoB++ episode) or several
(``run_rows``: a document's questions, a Mind2Web task's steps), each written as it comes
(on Ray, when the item is back); such an evaluator resumes row by row (``pending`` keeps of
each item what is not done yet).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

from webagent.durations import format_duration
from webagent.results_folder import ResultsFolder

if TYPE_CHECKING:
    from webagent.cluster import OnRay

T = TypeVar("T")  # what an item holds (an app's task, a task and seed...)
W = TypeVar("W")  # what one worker holds (a browser, an app's instance, the client)
R = TypeVar("R", bound=BaseModel)  # one row of the results (typed: an evaluator's own row model)


@dataclass(frozen=True)
class Item(Generic[T]):
    """One planned item: its row's key, its name in progress lines, what the evaluator runs
    (``of``) and its trace folder's name under OUT/traces (default: its label)."""

    key: Hashable
    label: str
    of: T
    folder: str = ""


class Evaluator(ABC, Generic[T, W, R]):
    """What one evaluation runs (see the module docstring). An evaluator is sent to Ray
    workers as it is: it holds plain data, never the driver's client or browser."""

    config: BaseModel  # what decides the results, pinned whole
    results: Callable[[Path], ResultsFolder]  # the evaluator's results folder at a path
    noun = "episodes"  # what an item is, in progress lines
    traces = True  # a trace folder per item (OUT/traces/<item.folder>)

    @abstractmethod
    def plan(self) -> list[Item[T]]:
        """Every item of the run (done ones too), in the order of the rows ``evaluate`` returns."""

    def pending(self, items: list[Item[T]], done: set[Hashable]) -> list[Item[T]]:
        """What is left to run of ``items``, given the keys of the rows ``done``: the items whose
        key is not done (an evaluator of several rows per item keeps each item's undone part)."""
        return [item for item in items if item.key not in done]

    async def run_item(self, worker: W, item: Item[T], trace: Path | None) -> R:
        """One item's row (an item that fails is an error row, never an exception)."""
        raise NotImplementedError

    async def run_rows(self, worker: W, item: Item[T], trace: Path | None, emit: Callable[[R], None]) -> None:
        """Run ``item``, ``emit`` each of its rows as it finishes (default: its one row, ``run_item``)."""
        emit(await self.run_item(worker, item, trace))

    def error_row(self, item: Item[T], trace: Path | None, why: str) -> R:
        """The row of an item that could not run (its worker lost): run again on resume."""
        raise NotImplementedError

    def error_rows(self, item: Item[T], trace: Path | None, why: str) -> list[R]:
        """The rows of an item that could not run (default: its one ``error_row``)."""
        return [self.error_row(item, trace, why)]

    def outcome(self, row: R) -> str:
        """A finished item's progress line, after its label (from its row)."""
        raise NotImplementedError

    def failed(self, row: R) -> bool:
        return not getattr(row, "success", False)

    def item_outcome(self, rows: list[R]) -> str:
        """A finished item's progress line from all its rows (default: its one row's ``outcome``)."""
        return self.outcome(rows[-1]) if rows else "no rows"

    def worker(self, client: Any, remote: bool) -> AbstractAsyncContextManager[W]:
        """What one worker holds for its items (default: the model's client); ``remote``: in a
        Ray worker process, with the client it opened."""
        return contextlib.nullcontext(client)

    def clients(self, held: W) -> tuple:
        """A worker's clients besides the model's, whose use a Ray worker reports (qa-eval: the
        --gist-model's)."""
        return ()

    def serving(self) -> AbstractAsyncContextManager[Any]:
        """What a serial run's workers share (MiniWoB++: one browser), entered once."""
        return contextlib.nullcontext()

    def next_item(self, pending: list[Item[T]], last: Item[T] | None) -> Item[T]:
        """The item a serial worker takes next after ``last`` (MiniWoB++: the same task)."""
        return pending[0]

    def open_model(self, endpoint: Any) -> AbstractAsyncContextManager[Any]:
        """A Ray worker's client for ``endpoint`` (None: the evaluator needs none, as the ceiling)."""
        if endpoint is None:
            return contextlib.nullcontext()
        from webagent.llm.endpoint import open_client

        return open_client(endpoint)


@dataclass
class Serial:
    """Items in this process: ``concurrency`` workers, each taking the next pending item as it
    finishes one; the first failure outside an item cancels the others (awaited) and goes on.
    A backend's ``run`` (this one's or ``OnRay``'s) runs ``items``; ``keep(item, row)`` as each
    row comes, ``finish(item)`` when an item has all its rows; ``say`` gets what the backend has
    to tell."""

    client: Any = None
    concurrency: int = 1

    async def run(
        self,
        evaluator: Evaluator,
        items: list,
        trace_of: Callable,
        keep: Callable,
        finish: Callable,
        say: Callable[[str], None],
    ) -> None:
        pending = list(items)

        def take(last):
            item = evaluator.next_item(pending, last) if pending else None
            if item is not None:
                pending.remove(item)
            return item

        async def worker() -> None:
            item = take(None)
            if item is None:
                return
            async with evaluator.worker(self.client, remote=False) as held:
                while item is not None:
                    await evaluator.run_rows(held, item, trace_of(item), functools.partial(keep, item))
                    finish(item)
                    item = take(item)

        async with evaluator.serving():
            tasks = [asyncio.ensure_future(worker()) for _ in range(self.concurrency)]
            try:
                finished, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            finally:  # a failure, or this run cancelled (Ctrl-C): nobody is left running
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
            for task in tasks:
                if task in finished and not task.cancelled() and (exc := task.exception()) is not None:
                    raise exc


def backend(client: Any = None, cluster: Any = None, endpoint: Any = None, concurrency: int = 1) -> Serial | OnRay:
    """``Serial`` on ``client``, or with ``cluster`` (a connected Ray) ``OnRay``, whose workers
    open the model the driver's ``client`` reaches (``endpoint``: the run's ``EndpointOptions``)."""
    if cluster is None:
        return Serial(client, concurrency)
    from webagent.cluster import OnRay, worker_endpoint

    return OnRay(cluster, None if client is None else worker_endpoint(endpoint, client))


async def evaluate(
    evaluator: Evaluator,
    out: Path,
    backend: Serial | OnRay,
    say: Callable[[str], None] | None = print,
    on_row: Callable[[Any], bool] | None = None,
) -> list:
    """Run what ``evaluator.pending`` leaves of ``evaluator.plan()`` in ``out`` on ``backend``;
    returns the rows of every planned item that has one, in plan order (see the module
    docstring). ``on_row``: the driver's own use of each row as it comes (a bar, counts),
    before it is written; False keeps it out of the rows file (a row of another file)."""
    folder = evaluator.results(out)
    folder.pin(evaluator.config)
    items = evaluator.plan()
    rows = folder.rows()
    pending = evaluator.pending(items, folder.done(rows))
    if say is not None and len(pending) < len(items):
        say(f"{len(items)} {evaluator.noun}, {len(items) - len(pending)} already in {folder.rows_path}")
    of_item: dict[Hashable, list] = {}  # an item's rows so far, for its progress line
    finished, failures, started = 0, 0, time.perf_counter()

    def trace_of(item: Item) -> Path | None:
        return out / "traces" / (item.folder or item.label) if evaluator.traces else None

    def keep(item: Item, row: Any) -> None:
        of_item.setdefault(item.key, []).append(row)
        if on_row is None or on_row(row):
            rows[folder.key(row)] = row
            folder.append(row)

    def finish(item: Item) -> None:
        """A line per finished item: done k of n, failures so far, the time left at the pace so far."""
        nonlocal finished, failures
        rows_of, finished = of_item.pop(item.key, []), finished + 1
        failures += any(evaluator.failed(row) for row in rows_of)
        if say is not None:
            pace = (time.perf_counter() - started) / finished
            say(
                f"[{len(items) - len(pending) + finished}/{len(items)}] {item.label}: {evaluator.item_outcome(rows_of)}; "
                f"{failures} failed so far; ~{format_duration(pace * (len(pending) - finished))} left"
            )

    await backend.run(evaluator, pending, trace_of, keep, finish, say or (lambda line: None))
    return [rows[item.key] for item in items if item.key in rows]
