"""Benchmarks, experiments and the rivals they race, with their results (bench/results/).

Every script here runs as a module from the repository root, in whichever venv it needs:

    .venv/bin/python -m bench.gated.snippets --quick
    bench/rivals/.venv-agentlab/bin/python -m bench.rivals.run_agentlab SPEC.json

so ``bench`` (and ``bench.lib``) import like any package and no script edits ``sys.path``.
Nothing here imports webagent at package level: the rivals' venvs import these packages too.
"""
