"""Child-process entry point of the embedded model: llama.cpp's own HTTP server, embedded
by the `xllamacpp` wheel (prebuilt; nothing compiles on install).

    python -m webagent.llm.llama_server --gguf F --host H --port P --slots N --n-ctx C --alias A \
        [--threads T] [--threads-batch B]

`--n-ctx` is per slot: the server gets slots × n-ctx and splits it evenly. The process
serves until it is terminated; webagent.llm.local starts it with PR_SET_PDEATHSIG, so it
also ends when its parent dies. A model that fails to load exits with code 3 and the
reason on stderr (which the parent quotes in one line).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

# The server keeps evicted slot states in host RAM to reuse them for later prompts with the
# same prefix; llama.cpp's default (8 GiB) is too much for a shared laptop-class machine.
PROMPT_CACHE_RAM_MIB = 512


def build_params(args: argparse.Namespace):
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.gguf
    params.model_alias = {args.alias}  # a set of names the server answers to
    params.hostnames = [args.host]
    params.port = args.port
    params.n_parallel = args.slots
    params.n_ctx = args.slots * args.n_ctx  # split evenly: n_ctx per slot
    params.kv_unified = False
    params.cont_batching = True
    params.cache_prompt = True
    params.cache_ram_mib = PROMPT_CACHE_RAM_MIB
    params.endpoint_slots = True
    params.endpoint_metrics = True
    params.endpoint_props = True
    params.fit_params = False  # keep the context the user asked for
    # llama.cpp's "auto" turns flash attention on; on CPU it halved decoding speed here.
    params.flash_attn_type = xllamacpp.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_DISABLED
    params.warmup = False
    decode, batch = server_threads(args.threads, args.threads_batch)
    for cpu, n in ((params.cpuparams, decode), (params.cpuparams_batch, batch)):
        cpu.n_threads = n
        cpu.poll = 0  # sleep, don't spin, between work: spinning threads starve a busy machine
    return params


def usable_cpus() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# Other processes using at least this many cores' worth of CPU make the machine "busy".
BUSY_CORES = 0.5
BUSY_SAMPLE_S = 0.5


def _cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs, from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def busy_cores(sample_s: float = BUSY_SAMPLE_S) -> float | None:
    """How many cores' worth of CPU the machine's other processes use now: /proc/stat over
    `sample_s` while this process sleeps. Not the load average: it lags a minute, so a
    second question right after the first would see the first one's work. None off Linux."""
    import time

    first = _cpu_times()
    if first is None:
        return None
    time.sleep(sample_s)
    second = _cpu_times()
    if second is None or second[1] <= first[1]:
        return None
    return (os.cpu_count() or 1) * (second[0] - first[0]) / (second[1] - first[1])


def server_threads(
    threads: int | None = None, threads_batch: int | None = None, busy: float | None = None
) -> tuple[int, int]:
    """(n_threads, n_threads_batch): the compute threads for decoding and for reading prompts.

    The rule, from bench/docqa_threads.py on 2 cores (figures in docs/models.md, *Threads*):
    every usable core for both while the machine is quiet (2 threads read prompts 1.9x and
    decode 1.8x as fast as one), one core fewer for both when other processes already use
    half a core or more (`busy`, measured by `busy_cores()` when not given). Beside one busy
    process a second decoding thread made decoding 3.6x slower (a decoded token is short work
    between two waits, and a descheduled thread stalls the other), and a second prompt thread
    read no faster (28-30 tok/s against 32 with one).
    `threads` (--threads N) sets both and skips the measurement; `threads_batch` sets prompt
    reading alone."""
    cores = usable_cpus()
    if not threads:
        if busy is None and cores > 1:
            busy = busy_cores()
        threads = cores if cores == 1 or busy is None or busy < BUSY_CORES else cores - 1
    batch = threads_batch or threads
    return max(1, threads), max(1, batch)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="webagent.llm.llama_server")
    parser.add_argument("--gguf", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--slots", type=int, default=1)
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--threads", type=int, help="compute threads for decoding (default: server_threads())")
    parser.add_argument("--threads-batch", type=int, help="compute threads for reading prompts (default: --threads)")
    args = parser.parse_args(argv)
    try:
        import xllamacpp
    except ImportError:
        print("xllamacpp is not installed (pip install 'webagent[local]')", file=sys.stderr)
        return 3
    try:
        server = xllamacpp.Server(build_params(args))
    except RuntimeError as exc:
        print(f"failed to load {args.gguf}: {exc}", file=sys.stderr)
        return 3
    print(f"webagent: serving {args.alias} on {server.listening_address}", file=sys.stderr, flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    while not stop.wait(1.0):
        pass
    os._exit(0)  # the server's threads need no orderly teardown; the OS frees everything


if __name__ == "__main__":
    sys.exit(main())
