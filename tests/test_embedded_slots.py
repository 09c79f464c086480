"""How many parallel slots the embedded server gets (no server is started here)."""

import pytest

from webagent.llm import llama_server
from webagent.llm.local import embedded_slots, slots_for


@pytest.mark.parametrize(
    "cpus, concurrency, expected",
    [
        (1, 8, 1),  # never fewer than one
        (2, 8, 1),  # 2 cores: one slot (measured faster than four, see embedded_slots)
        (3, 8, 1),
        (8, 8, 4),  # one per two cores
        (8, 2, 2),  # never more than the calls in flight
        (64, 8, 8),
    ],
)
def test_one_slot_per_two_cores_at_most_one_per_call(monkeypatch, cpus, concurrency, expected):
    monkeypatch.setattr(llama_server.os, "sched_getaffinity", lambda pid: set(range(cpus)))
    assert embedded_slots(concurrency) == expected


def test_slots_shrink_to_what_memory_holds():
    gib = 1 << 30
    assert slots_for(8, 8192, kv_bytes_per_token=0, available=None) == 8  # unknown: as asked
    # a quarter of 8 GiB = 2 GiB; each slot's KV cache 8192 tokens x 96 KiB = 768 MiB -> 2 slots
    assert slots_for(8, 8192, kv_bytes_per_token=96 * 1024, available=8 * gib) == 2
    assert slots_for(8, 8192, kv_bytes_per_token=96 * 1024, available=gib // 4) == 1
