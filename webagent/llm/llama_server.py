"""Child-process entry point of the embedded model: llama.cpp's own HTTP server, embedded
by the `xllamacpp` wheel (prebuilt; nothing compiles on install).

    python -m webagent.llm.llama_server --gguf F --host H --port P --slots N --n-ctx C --alias A

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
    threads = server_threads()
    for cpu in (params.cpuparams, params.cpuparams_batch):
        cpu.n_threads = threads
        cpu.poll = 0  # sleep, don't spin, between work: spinning threads starve a busy machine
    return params


def usable_cpus() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def server_threads() -> int:
    """One core fewer than this process may use (the HTTP side and the client need one):
    on a shared 2-core machine a second compute thread made decoding 5-10x slower, as the
    threads wait on each other whenever one is descheduled."""
    return max(1, usable_cpus() - 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="webagent.llm.llama_server")
    parser.add_argument("--gguf", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--slots", type=int, default=1)
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--alias", required=True)
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
