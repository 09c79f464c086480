"""Episodes on Ray (``--ray [ADDRESS]``): each pending episode of an evaluation is one Ray
task, run on any node of a cluster (or of a local Ray on this machine), and its row streams
back to the driver's results folder (``webagent.harness``) as it finishes, in the order
episodes finish; a report, ``merge`` and resume read the folder as they read a serial run's.

* **A lost episode** (its worker process died, its node was lost) is run again once,
  elsewhere if Ray can, and its row says so (``retried``). Lost twice, it is an error row,
  which a resume runs again. Ray's own retries are off, so a retry is never silent.
* **A lost driver** loses only the episodes in flight: every finished row is on disk, and
  a rerun resumes from the folder like a serial run.
* **Traces**: a worker on the driver's node writes an episode's trace folder in place; one
  on another node sends it back packed, and the driver unpacks it where a serial run would
  have written it.

The episode itself is a module-level function of the evaluator (its worker side), called
with plain arguments in the worker process; every node needs the project installed (its
own ``make setup``), and the model is an endpoint every node reaches."""

from __future__ import annotations

import io
import json
import os
import socket
import tarfile
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webagent.durations import format_duration
from webagent.errors import UserError
from webagent.llm.usage import Usage

LOCAL = "local"  # ``--ray`` without an address: a Ray started here for the run
CONNECT_TIMEOUT_S = 5.0
TRACE_KEY = "_trace"  # a row's packed trace folder, from a worker on another node
USAGE_KEY = "_usage"  # a row's worker's model use, by purpose (``with_usage``)


@dataclass(frozen=True)
class Job:
    """One episode for a worker: ``run(*args)`` returns its row. ``label`` names it in
    progress lines; ``trace`` is where its trace folder goes (None: no trace)."""

    key: Hashable
    label: str
    run: Callable[..., dict]
    args: tuple = ()
    trace: str | None = None


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
    bare = address.removeprefix("ray://")
    host, _, port = bare.rpartition(":")
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
        started_here = True
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
            raise UserError(f"cannot join the Ray cluster at {address}: {(str(exc).splitlines() or [''])[0]}") from None
        cpus = int(ray.cluster_resources().get("CPU", 1))
        started_here = False
    node = ray.get_runtime_context().get_node_id()
    return Cluster(address, workers or cpus, node=node, started_here=started_here)


def _call(job_run: Callable[..., dict], args: tuple, trace: str | None, driver_node: str) -> dict:
    """In the worker: run the episode; a trace written on another node than the driver's goes
    back packed in the row."""
    import ray

    here = ray.get_runtime_context().get_node_id() == driver_node
    if trace is None or here:
        return job_run(*args, trace)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="webagent-trace-") as tmp:
        folder = Path(tmp) / "trace"
        row = job_run(*args, str(folder))
        if folder.is_dir():
            row[TRACE_KEY] = pack(folder)
        return row


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


def run_jobs(
    cluster: Cluster,
    jobs: Sequence[Job],
    *,
    on_row: Callable[[Job, dict], None],
    lost_row: Callable[[Job, str], dict],
    describe: Callable[[dict], str],
    failed: Callable[[dict], bool],
    say: Callable[[str], None] = print,
    done_before: int = 0,
) -> None:
    """Run ``jobs`` on ``cluster``, at most ``cluster.workers`` in flight; ``on_row`` gets each
    row as it comes (the evaluator appends it to its folder). A lost episode runs once more
    (``retried`` in its row); lost twice, ``lost_row`` stands for it. A line per finished
    episode: done k of n, failures so far, the time left at the pace so far."""
    import ray

    lost = _lost_errors()
    remote = ray.remote(num_cpus=1, max_retries=0)(_call)
    total, queue = done_before + len(jobs), list(jobs)
    flying: dict[Any, tuple[Job, int]] = {}  # ref -> (job, attempt)
    finished = failures = 0
    started = time.perf_counter()

    def submit(job: Job, attempt: int) -> None:
        flying[remote.remote(job.run, job.args, job.trace, cluster.node)] = (job, attempt)

    while queue or flying:
        while queue and len(flying) < cluster.workers:
            submit(queue.pop(0), 1)
        ready, _ = ray.wait(list(flying), num_returns=1)
        ref = ready[0]
        job, attempt = flying.pop(ref)
        try:
            row = ray.get(ref)
        except lost as exc:
            why = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"
            if attempt == 1:
                say(f"{job.label}: its worker was lost ({why}); running it again")
                submit(job, 2)
                continue
            row = lost_row(job, f"worker lost twice ({why})")
        except ray.exceptions.RayTaskError as exc:  # the episode's code raised: an error row, run again on resume
            cause = exc.cause if isinstance(getattr(exc, "cause", None), BaseException) else exc
            row = lost_row(job, f"{type(cause).__name__}: {(str(cause).splitlines() or [''])[0]}")
        if attempt > 1:
            row["retried"] = "run again after its worker was lost"
        for purpose, counts in row.pop(USAGE_KEY, {}).items():
            cluster.usage.record(purpose, **counts)
        packed = row.pop(TRACE_KEY, None)
        if packed is not None and job.trace is not None:
            unpack(packed, Path(job.trace))
            row["trace_dir"] = job.trace  # where a serial run's row has it
        on_row(job, row)
        finished += 1
        failures += failed(row)
        left = len(queue) + len(flying)
        pace = (time.perf_counter() - started) / finished
        say(
            f"[{done_before + finished}/{total}] {job.label}: {describe(row)}; "
            f"{failures} failed so far; ~{format_duration(pace * left)} left"
        )


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


def with_usage(row: dict, *clients) -> dict:
    """``row`` carrying its worker's model use (by purpose), which the driver sums into
    ``Cluster.usage``: the driver's own client makes none of a Ray run's calls."""
    usage = Usage()
    for client in clients:
        if client is not None:
            for purpose, counter in client.usage.by_purpose.items():
                usage.record(purpose, **counter.to_dict())
    row[USAGE_KEY] = {purpose: counter.to_dict() for purpose, counter in usage.by_purpose.items()}
    return row
