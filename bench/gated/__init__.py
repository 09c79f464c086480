"""The benchmarks a make target runs and fails on: each prints its targets with
``bench.lib.verdict`` and exits 1 when one is missed (``make bench``: every module here but
``local_server``, which ``make bench-server`` runs in a venv of its own)."""
