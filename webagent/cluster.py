"""Episodes on Ray (``--ray [ADDRESS]``): ``OnRay``, the Ray backend of
``webagent.evaluation.evaluate``, runs each pending item of an evaluation as one Ray task, on
any node of a cluster (or of a local Ray on this machine), and its row streams back to the
driver's results folder (``webagent.results_folder``) as it finishes, in the order items finish; a
report, ``merge`` and resume read the folder as they read a serial run's.

* **A lost episode** (its worker process died, its node was lost, or it gave no row within
  the per-episode limit: a hung worker, ended) is run again once, elsewhere if Ray can, and
  its row says so (``retried``). Lost twice, it is an error row with the reason, which a
  resume runs again; the run goes on. Ray's own retries are off, so a retry is never silent.
* **A lost driver** loses only the episodes in flight: every finished row is on disk, and
  a rerun resumes from the folder like a serial run.
* **Traces**: a worker on the driver's node writes an episode's trace folder in place; one
  on another node sends it back packed, and the driver unpacks it where a serial run would
  have written it.

A worker runs the evaluator's own ``run_rows`` (the evaluator is shipped as it is, plain
data), on a client it opens itself; every node needs the project installed (its own
``make setup``), and the model is an endpoint every node reaches."""

from __future__ import annotations

import asyncio
import io
import json
import os
import socket
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webagent.errors import UserError, first_line
from webagent.llm.usage import Usage

LOCAL = "local"  # ``--ray`` without an address: a Ray started here for the run
CONNECT_TIMEOUT_S = 5.0
EPISODE_LIMIT_S = 3600.0  # an item with no row after this long is lost: its worker hangs


@dataclass
class Cluster:
    """A connected Ray: ``workers`` episodes in flight at most."""

    address: str
    workers: int
    node: str = ""  # the driver's node id: a worker there writes traces in place
    started_here: bool = False
    usage: Usage = field(default_factory=Usage)  # the workers' model use, summed from their rows

    def close(self) -> None:
        import ray

        ray.shutdown()


def _host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of an address to check before Ray tries it (``auto`` is Ray's own search)."""
    if address == "auto":
        return None
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise UserError(
            f"--ray {address!r}: expected HOST:PORT (a Ray head, e.g. 10.0.0.5:6379), ray://HOST:PORT or auto"
        )
    return host, int(port)


def connect(address: str, workers: int | None = None) -> Cluster:
    """Connect to the Ray at ``address`` (``LOCAL``: start one here with ``workers`` CPUs,
    default one per core). An address that cannot be reached is one clear line, before any
    episode starts (Ray itself would wait half a minute and log)."""
    if workers is not None and workers < 1:
        raise UserError(f"--workers must be at least 1 (got {workers})")
    try:
        import ray
    except ImportError:
        raise UserError("--ray needs Ray: run `make setup` (or pip install 'webagent[cluster]')") from None
    quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": "ERROR", "include_dashboard": False}
    if address == LOCAL:
        cpus = workers or os.cpu_count() or 1
        ray.init(num_cpus=cpus, **quiet)
    else:
        target = _host_port(address)
        if target is not None:
            try:
                socket.create_connection(target, timeout=CONNECT_TIMEOUT_S).close()
            except OSError as exc:
                raise UserError(f"cannot reach a Ray cluster at {address}: {exc.strerror or exc}") from None
        quiet.pop("include_dashboard")  # a cluster's head decides its dashboard
        try:
            ray.init(address=address, **quiet)
        except (ConnectionError, RuntimeError) as exc:
            raise UserError(f"cannot join the Ray cluster at {address}: {first_line(exc)}") from None
        cpus = int(ray.cluster_resources().get("CPU", 1))
    node = ray.get_runtime_context().get_node_id()
    return Cluster(address, workers or cpus, node=node, started_here=address == LOCAL)


@dataclass
class Shipped:
    """What a worker sends back for an item: its rows, the model use of its clients (by
    purpose), which the driver sums into ``Cluster.usage`` (the driver's own client makes none
    of a Ray run's calls), and its trace folder packed when written on another node."""

    rows: list
    usage: dict[str, dict]
    trace: bytes | None = None


def _call(evaluator, endpoint, item, trace: str | None, driver_node: str) -> Shipped:
    """In the worker: run the item (``evaluator.run_rows`` in a worker of its own, on the model
    it opens for ``endpoint``); a trace written on another node than the driver's goes back
    packed."""
    import tempfile

    import ray

    async def run(folder: Path | None) -> Shipped:
        rows: list = []
        async with evaluator.open_model(endpoint) as client, evaluator.worker(client, remote=True) as held:
            await evaluator.run_rows(held, item, folder, rows.append)
            return Shipped(rows, usage_of(client, *evaluator.clients(held)))

    if trace is None or ray.get_runtime_context().get_node_id() == driver_node:
        return asyncio.run(run(Path(trace) if trace else None))
    with tempfile.TemporaryDirectory(prefix="webagent-trace-") as tmp:
        folder = Path(tmp) / "trace"
        shipped = asyncio.run(run(folder))
        if folder.is_dir():
            shipped.trace = pack(folder)
        return shipped


def pack(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(folder, arcname=".")
    return buffer.getvalue()


def unpack(data: bytes, folder: Path) -> None:
    """A packed trace into ``folder`` (emptied first), its run.json pointing at its new place."""
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(folder, filter="data")
    run = folder / "run.json"
    if run.is_file():
        info = json.loads(run.read_text(encoding="utf-8"))
        if "trace_dir" in info:
            info["trace_dir"] = str(folder)
            run.write_text(json.dumps(info, indent=2), encoding="utf-8")


def _lost_errors() -> tuple[type[BaseException], ...]:
    """Ray's errors for an episode whose worker or node went away (not the episode's own error)."""
    from ray import exceptions as rx

    return tuple(
        getattr(rx, name)
        for name in ("WorkerCrashedError", "NodeDiedError", "ObjectLostError", "OwnerDiedError", "TaskCancelledError")
        if hasattr(rx, name)
    )


@dataclass
class OnRay:
    """The Ray backend of ``webagent.evaluation.evaluate``: each item one Ray task, at most
    ``cluster.workers`` in flight, on the model ``endpoint`` (None: the evaluator needs none).
    A lost item (its worker died, or gave no row within ``limit_s``, hung) runs once more
    (``retried`` in its row); lost twice, ``error_row`` stands for it and the run goes on."""

    cluster: Cluster
    endpoint: Any = None
    limit_s: float = EPISODE_LIMIT_S

    async def run(
        self, evaluator, items: list, trace_of: Callable, keep: Callable, finish: Callable, say: Callable
    ) -> None:
        import ray

        lost_errors = _lost_errors()
        remote = ray.remote(num_cpus=1, max_retries=0)(_call)
        evaluator_ref = ray.put(evaluator)  # sent to the object store once, not with every item
        queue = list(items)
        flying: dict[Any, tuple[Any, int, float]] = {}  # ref -> (item, attempt, when it started)

        def submit(item, attempt: int) -> None:
            trace = trace_of(item)
            ref = remote.remote(
                evaluator_ref, self.endpoint, item, None if trace is None else str(trace), self.cluster.node
            )
            flying[ref] = (item, attempt, time.monotonic())

        def lost(item, attempt: int, why: str) -> list | None:
            """Run a lost item again (None), or its error rows when it was lost twice."""
            if attempt > 1:
                return evaluator.error_rows(item, trace_of(item), f"worker lost twice ({why})")
            say(f"{item.label}: its worker was lost ({why}); running it again")
            submit(item, 2)
            return None

        while queue or flying:
            while queue and len(flying) < self.cluster.workers:
                submit(queue.pop(0), 1)
            oldest = min(flying, key=lambda ref: flying[ref][2])
            timeout = max(0.0, flying[oldest][2] + self.limit_s - time.monotonic())
            ready, _ = ray.wait(list(flying), num_returns=1, timeout=timeout)
            if not ready:  # the oldest item is past its limit: its worker hangs, and is ended
                ray.cancel(oldest, force=True)
                item, attempt, _ = flying.pop(oldest)
                rows = lost(item, attempt, f"no row after {self.limit_s:g} s: its worker hung")
            else:
                ref = ready[0]
                item, attempt, _ = flying.pop(ref)
                try:
                    shipped: Shipped = ray.get(ref)
                    rows = shipped.rows
                except lost_errors as exc:
                    rows = lost(item, attempt, f"{type(exc).__name__}: {first_line(exc)}")
                except ray.exceptions.RayTaskError as exc:  # the item's code raised: an error row, run again on resume
                    cause = exc.cause if isinstance(getattr(exc, "cause", None), BaseException) else exc
                    rows = evaluator.error_rows(item, trace_of(item), f"{type(cause).__name__}: {first_line(cause)}")
                else:
                    for purpose, counts in shipped.usage.items():
                        self.cluster.usage.record(purpose, **counts)
                    if shipped.trace is not None and (trace := trace_of(item)) is not None:
                        unpack(shipped.trace, trace)
                        for row in rows:
                            row.trace_dir = str(trace)  # where a serial run's row has it
            if rows is None:
                continue
            for row in rows:
                if attempt > 1 and "retried" in type(row).model_fields:
                    row.retried = "run again after its worker was lost"
                keep(item, row)
            finish(item)


def worker_endpoint(endpoint, client):
    """The endpoint a worker opens for itself: the driver's (``endpoint``) with the model server
    it opened (an endpoint every node must reach: the embedded server listens on this machine
    only), or the shipped fake. The answer cache is as the driver's (SQLite in WAL mode: safe for
    the workers of a node at once)."""
    from dataclasses import replace

    backend = client.backend
    if getattr(backend, "base_url", None) is None:  # fake:heuristic: each worker makes its own
        return replace(endpoint.resolved(), model=client.model_name)
    return replace(endpoint.resolved(), base_url=backend.base_url, model=backend.model, gguf=None, embedded=None)


def usage_of(*clients) -> dict[str, dict]:
    """The model use of ``clients`` (None ones aside), summed by purpose."""
    usage = Usage()
    for client in clients:
        if client is not None:
            for purpose, counter in client.usage.by_purpose.items():
                usage.record(purpose, **counter.to_dict())
    return {purpose: counter.to_dict() for purpose, counter in usage.by_purpose.items()}
