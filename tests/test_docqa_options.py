"""One model of the document-QA options (``QAOptions``): what a command line sets reaches the
reader in `webagent ask`, `ask --method`, `api.ask` and `qa-eval` alike, and qa-eval's
config.json pins it whole (a folder of before the merge, or a changed option, is refused)."""

import json
from dataclasses import asdict
from pathlib import Path

import pytest
from click.testing import CliRunner

import webagent.docqa.ask as ask_module
import webagent.docqa.reading as reading
from webagent.api import ask_sync
from webagent.cli import main
from webagent.docqa.options import QAOptions
from webagent.errors import UserError
from webagent.llm.endpoint import EndpointOptions

DOC = Path(__file__).parent.parent / "examples" / "qmsum_remote_control_meeting.txt"
QMSUM = Path(__file__).parent / "fixtures" / "docqa" / "qmsum_val_sample.jsonl"
PAGES = ["--min-words", "120", "--max-words", "240", "--single-pass"]


def qa_eval(out: Path, *extra: str) -> list[str]:
    return ["qa-eval", "--dataset", "qmsum", "--data", str(QMSUM), "--limit", "1", "--no-rater", "--out", str(out),
            "--method", "gistmem", "--model", "fake:heuristic", *extra]  # fmt: skip


def test_an_option_set_on_the_command_line_reaches_the_reader_in_ask_and_qa_eval(tmp_path, monkeypatch):
    seen: dict[str, QAOptions] = {}
    real = reading.read_pages
    where = ["?"]

    async def read_pages(client, paragraphs, options, shown):
        seen[where[0]] = options
        return await real(client, paragraphs, options, shown)

    monkeypatch.setattr(reading, "read_pages", read_pages)
    monkeypatch.setattr(ask_module, "read_pages", read_pages)
    runs = {
        "ask": ["ask", str(DOC), "Safety?", "--model", "fake:heuristic", *PAGES],
        "ask --method": ["ask", str(DOC), "Safety?", "--method", "gistmem", "--model", "fake:heuristic", *PAGES],
        "qa-eval": qa_eval(tmp_path / "o", *PAGES),
    }
    for name, args in runs.items():
        where[0] = name
        monkeypatch.setenv("WEBAGENT_HOME", str(tmp_path / name))  # an empty cache: the pages are read
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
    where[0] = "api.ask"
    endpoint = EndpointOptions(model="fake:heuristic", cache=False)
    assert ask_sync(DOC, "Safety?", method="gistmem", endpoint=endpoint, min_words=120, max_words=240, single_pass=True)
    assert {name: (o.min_words, o.max_words, o.single_pass) for name, o in seen.items()} == {
        name: (120, 240, True) for name in ("ask", "ask --method", "qa-eval", "api.ask")
    }
    config = json.loads((tmp_path / "o" / "config.json").read_text())
    assert config["reading"] == asdict(seen["qa-eval"])  # pinned whole


def test_a_qa_eval_folder_of_before_the_merge_is_refused_in_one_line(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    before = {  # config.json as d4c3473 wrote it: the reader's settings apart from the methods' options
        "dataset": "qmsum",
        "data": str(QMSUM),
        "methods": ["gistmem"],
        "model": "fake:heuristic",
        "settings": {"min_words": 280, "max_words": 600, "pagination": "llm", "context_words": 6000},
        "options": {
            "context_words": 6000,
            "importance_lookup": False,
            "max_children": 8,
            "max_refinements": 8,
            "max_tool_calls": 6,
        },
        "prompts": {},
        "split": None,
    }
    (out / "config.json").write_text(json.dumps(before))
    result = CliRunner().invoke(main, qa_eval(out))
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == (
        f"error: {out / 'config.json'}: written by an older version for a qa-eval run (it has no reading); "
        "use another --out"
    )
    assert not (out / "results.jsonl").exists()


def test_a_resume_under_a_changed_option_is_refused_naming_it(tmp_path):
    out = tmp_path / "o"
    assert CliRunner().invoke(main, qa_eval(out, "--max-children", "3")).exit_code == 0
    rows = (out / "results.jsonl").read_text()
    result = CliRunner().invoke(main, qa_eval(out, "--max-children", "4"))
    assert result.exit_code == 2
    assert "another configuration (max_children (3 → 4)); use another --out" in result.output
    assert (out / "results.jsonl").read_text() == rows


def test_readagent_methods_name_the_look_up_and_options_that_cannot_go_together_are_refused():
    opts = QAOptions(max_pages=4)
    assert opts.for_readagent("readagent-s@2") == QAOptions(lookup="sequential", max_pages=2)
    assert opts.for_readagent("readagent-p") == QAOptions(lookup="parallel", max_pages=4)
    assert opts.for_readagent("bm25@2") is None
    with pytest.raises(UserError, match="needs a positive k"):  # was a traceback (int("x"))
        opts.for_readagent("readagent-p@x")
    assert QAOptions(context_tokens=1000).words_for_context().context_words == 600
    with pytest.raises(UserError, match="--conditional-gist"):
        QAOptions(single_pass=True, conditional_gist=True)
    with pytest.raises(UserError, match="--min-words < --max-words"):
        QAOptions(min_words=600, max_words=600)
