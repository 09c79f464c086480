"""Registries instead of parallel tables (issue 35, item 4): each evaluation lists its methods
once (``webagent.method_registry.Registry``); the parser, the runner, ``all`` and the docs table read
that list, and an unknown name is one clear line, never another method run in its place."""

from __future__ import annotations

import pytest

from mind2web.methods import REGISTRY as M2W
from mind2web.methods import Variant as M2WVariant
from mind2web.methods import expand_variants
from webagent.docqa.methods import REGISTRY as DOCQA
from webagent.docqa.methods import parse_methods, runner_for
from webagent.errors import UserError


def test_an_unknown_method_is_one_line_and_runs_nothing_else():
    # runner_for used to send any unknown name to kv-memory
    with pytest.raises(UserError, match="unknown method 'kv-memroy'; choose from readagent-p, "):
        runner_for("kv-memroy")
    with pytest.raises(UserError, match="unknown method 'bm26'"):
        parse_methods("bm26@3")
    with pytest.raises(UserError, match="unknown method 'rawr'"):
        M2WVariant.parse("rawr")


def test_each_method_runs_where_its_record_says():
    from webagent.docqa.methods import baselines, kv_memory, memwalker, readagent

    assert runner_for("gistmem") is readagent.run and runner_for("bm25") is baselines.run
    assert runner_for("memwalker") is memwalker.run and runner_for("kv-memory-rolling") is kv_memory.run
    for registry in (DOCQA, M2W):
        for method in registry.methods:
            assert callable(registry.runner(method.name)), method.name


def test_all_is_read_from_the_records():
    assert [v.method for v in parse_methods("all")] == [m.name for m in DOCQA.methods if m.in_all]
    assert "neural" not in {v.method for v in parse_methods("all")}
    assert {v.method for v in expand_variants(["all"], [1], [1])} == {"raw", "bm25", "neural", "gistmem", "readagent-p"}
    assert [v.k for v in parse_methods("bm25,readagent-p,truncate-first")] == [3, 5, None]  # each default k


def test_the_docs_tables_are_the_registries():
    from pathlib import Path

    root = Path(__file__).parent.parent
    for page, registry in (("docs/docqa.md", DOCQA), ("docs/mind2web.md", M2W)):
        text = (root / page).read_text(encoding="utf-8")
        for name, summary in registry.rows():
            assert f"| {name} | {summary} |" in text, (page, name)
