"""The Mind2Web runner end to end with fake models on the real-page fixtures."""

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from mind2web.cli import main as m2w_main
from mind2web.data import load_tasks
from mind2web.methods import Variant, expand_variants
from mind2web.report import write_report
from mind2web.rows import read_manifest, read_rows
from mind2web.runner import PROMPTS_USED, EvalConfig, run_eval
from webagent.errors import DataError, UserError
from webagent.llm.testing import FunctionBackend, fake_client
from webagent.prompts import prompt_hash

FIXTURES = Path(__file__).parent / "fixtures" / "mind2web"


def oracle(tasks):
    """A fake model that knows the gold actions: it looks up the snippet holding the gold
    element and answers with it when it can see it, else with the first id it sees."""
    gold = {}
    for t in tasks:
        for a in t.actions:
            gold[a.action_uid] = a
    by_task = {t.confirmed_task: t for t in tasks}

    def current(text):
        task = next(t for name, t in by_task.items() if f"Task: {name}" in text)
        step = sum(1 for r in task.action_reprs if r in text.split("Previous actions:")[1])
        return task.actions[step]

    def fn(messages, params, purpose):
        text = messages[0]["content"]
        if purpose == "gist":
            return "gist without ids"
        action = current(text)
        pos = [c.backend_node_id for c in action.pos_candidates]
        if purpose == "lookup":
            lines = [json.loads(line) for line in text.split("\n") if line.startswith('{"index"')]
            snippets = [d["index"] for d in lines]
            return {"pages": snippets[:1]}
        if purpose == "action":
            seen = re.findall(r"id=(\d+)", text)
            hit = next((p for p in pos if p in seen), None)
            if hit:
                return {"element_id": hit, "operation": action.operation.op, "value": action.operation.value}
            return {"element_id": seen[0] if seen else "0", "operation": "CLICK", "value": ""}
        raise AssertionError(purpose)

    return fn


@pytest.fixture(scope="module")
def tasks():
    return load_tasks(FIXTURES, split="test_website")


def config(**kw):
    base = dict(
        data=str(FIXTURES),
        split="test_website",
        depth="auto",
        budget_words=300,
        context_tokens=8192,
        model="fake:function",
        endpoint="fake:function",
        structured=True,
        prompts={name: prompt_hash(name) for name in PROMPTS_USED},
        previous_k=5,
        act_on="looked-up",
    )
    base.update(kw)
    return EvalConfig(**base)


def test_variants_expand_and_reject_unknown():
    names = [v.name for v in expand_variants(["all"], top_k=[1, 5], max_lookup=[1, 5])]
    assert names == ["raw", "bm25@1", "bm25@5", "neural@1", "neural@5", "gistmem", "readagent-p@1", "readagent-p@5"]
    # --max-lookup applies to readagent-p and --top-k to the retrievers, with `all` too
    names = [v.name for v in expand_variants(["all"], top_k=[3], max_lookup=[2])]
    assert names == ["raw", "bm25@3", "neural@3", "gistmem", "readagent-p@2"]
    with pytest.raises(UserError, match="unknown method"):
        Variant.parse("magic")
    with pytest.raises(UserError, match="takes no @k"):
        Variant.parse("raw@3")


async def test_raw_with_oracle_scores_every_step_and_writes_rows(tasks, tmp_path):
    client = fake_client(FunctionBackend(oracle(tasks)))
    info = await run_eval(client, tasks, [Variant("raw")], tmp_path, config())
    rows = read_rows(tmp_path / "steps.jsonl")
    n_steps = sum(len(t.actions) for t in tasks)
    assert info["ran"] == len(rows) == n_steps
    assert all(r.step_success for r in rows), [r for r in rows if not r.step_success]
    assert all(r.calls == 1 and r.prompt_tokens > 0 for r in rows)


async def test_gistmem_cannot_see_ids_but_readagent_lookup_expands_them(tasks, tmp_path):
    """Gists that dropped the ids leave the model blind; looking up the right snippet
    puts the full snippet, ids included, back in place."""
    fn = oracle(tasks)

    def lookup_gold(messages, params, purpose):
        if purpose == "lookup":
            text = messages[0]["content"]
            action = next(
                a
                for t in tasks
                for a in t.actions
                if f"Task: {t.confirmed_task}" in text
                and sum(1 for r in t.action_reprs if r in text.split("Previous actions:")[1]) == t.actions.index(a)
            )
            from webagent.html import split_snippets

            snippets = split_snippets(action.cleaned_html, depth="auto", budget_words=300)
            gold = {c.backend_node_id for c in action.pos_candidates}
            return {"pages": [s.index for s in snippets if gold & set(s.ids)][:1]}
        return fn(messages, params, purpose)

    client = fake_client(FunctionBackend(lookup_gold))
    await run_eval(client, tasks, [Variant("gistmem"), Variant("readagent-p", 1)], tmp_path, config())
    rows = read_rows(tmp_path / "steps.jsonl")
    by = {v: [r for r in rows if r.variant == v] for v in ("gistmem", "readagent-p@1")}
    assert all(r.lookups and len(r.lookups) == 1 for r in by["readagent-p@1"])
    assert all(r.element_correct for r in by["readagent-p@1"])
    assert not any(r.element_correct for r in by["gistmem"])
    assert all(r.compression_rate > 0 for r in by["gistmem"])


async def test_resume_skips_finished_steps_and_refuses_other_config(tasks, tmp_path):
    client = fake_client(FunctionBackend(oracle(tasks)))
    first = await run_eval(client, tasks, [Variant("bm25", 1)], tmp_path, config(), limit=1)
    lines_before = (tmp_path / "steps.jsonl").read_text().splitlines()
    with open(tmp_path / "steps.jsonl", "a") as f:
        f.write('{"variant": "bm25@1", "annot')  # a torn line from a killed run
    second = await run_eval(client, tasks, [Variant("bm25", 1)], tmp_path, config())
    assert second["resumed"] == first["ran"] == len(lines_before)
    assert second["ran"] == sum(len(t.actions) for t in tasks) - first["ran"]
    keys = [(r.variant, r.action_uid) for r in read_rows(tmp_path / "steps.jsonl")]
    assert len(keys) == len(set(keys)) == sum(len(t.actions) for t in tasks)
    with pytest.raises(UserError, match="another configuration"):
        await run_eval(client, tasks, [Variant("bm25", 1)], tmp_path, config(depth=5))


async def test_shards_merge_to_the_same_report(tasks, tmp_path):
    fn = oracle(tasks)
    for i in range(2):
        await run_eval(
            fake_client(FunctionBackend(fn)),
            tasks,
            [Variant("raw")],
            tmp_path / f"s{i}",
            config(),
            shard=(i, 2),
        )
    await run_eval(fake_client(FunctionBackend(fn)), tasks, [Variant("raw")], tmp_path / "whole", config())
    result = CliRunner().invoke(
        m2w_main, ["merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out", str(tmp_path / "merged")]
    )
    assert result.exit_code == 0, result.output
    merged = json.loads((tmp_path / "merged" / "report.json").read_text())["results"]
    whole = write_report(
        read_rows(tmp_path / "whole" / "steps.jsonl"), read_manifest(tmp_path / "whole"), tmp_path / "whole", {}
    )["results"]
    assert merged["test_website"]["raw"]["step_sr"] == whole["test_website"]["raw"]["step_sr"] == 100.0
    assert (tmp_path / "merged" / "report.md").read_text().count("\n| raw |") == 1


def test_cli_eval_dry_run_writes_report_files(tmp_path):
    out = tmp_path / "run"
    args = [
        "eval",
        "--data",
        str(FIXTURES),
        "--split",
        "test_website",
        "--method",
        "bm25,readagent-p",
        "--top-k",
        "1",
        "--max-lookup",
        "1",
        "--model",
        "fake:heuristic",
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(m2w_main, args)
    assert result.exit_code == 0, result.output
    assert {"report.md", "report.json", "steps.jsonl", "config.json", "tokens_histogram.png"} <= {
        p.name for p in out.iterdir()
    }
    report = json.loads((out / "report.json").read_text())
    assert set(report["results"]["test_website"]) == {"bm25@1", "readagent-p@1"}
    again = CliRunner().invoke(m2w_main, args)
    assert "ran 0 method-steps, resumed 16" in again.output
    assert json.loads((out / "report.json").read_text())["meta"]["ran"] == 0


@pytest.mark.parametrize(
    "args,message",
    [
        (["eval", "--data", "/nonexistent", "--model", "fake:heuristic"], "/nonexistent"),
        (["eval", "--data", str(FIXTURES), "--method", "magic", "--model", "fake:heuristic"], "unknown method"),
        (["eval", "--data", str(FIXTURES), "--split", "nope", "--model", "fake:heuristic"], "nope"),
        (["eval", "--data", str(FIXTURES), "--shard", "3/2", "--model", "fake:heuristic"], "--shard"),
        (["snippets", "/nonexistent.json"], "no such file"),
    ],
)
def test_cli_errors_are_one_line(args, message):
    result = CliRunner().invoke(m2w_main, args)
    assert result.exit_code != 0
    assert message in result.output and "Traceback" not in result.output


def test_cli_snippets_on_a_mind2web_file_and_an_html_file(tasks, tmp_path):
    action = tasks[0].actions[1]
    result = CliRunner().invoke(
        m2w_main,
        [
            "snippets",
            str(FIXTURES / "test_website" / "test_website_0.json"),
            "--action-uid",
            action.action_uid,
            "--depth",
            "auto",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [r["index"] for r in rows] == list(range(len(rows)))
    ids = [i for r in rows for i in r["ids"]]
    assert len(ids) == len(set(ids)) and {c.backend_node_id for c in action.pos_candidates} <= set(ids)
    assert all(r["words"] == len(r["text"].split()) for r in rows)
    page = tmp_path / "p.html"
    page.write_text("<html><body><form><input name=q placeholder='Search'><button>Go</button></form></body></html>")
    out = CliRunner().invoke(m2w_main, ["snippets", str(page), "--depth", "2"])
    assert out.exit_code == 0 and "<input id=4 q search />" in out.output and "Go" in out.output
    bad = CliRunner().invoke(m2w_main, ["snippets", str(page), "--depth", "zero"])
    assert bad.exit_code != 0 and "auto" in bad.output


def test_cli_score_prints_the_benchmark_metrics(tasks, tmp_path):
    preds = tmp_path / "preds.jsonl"
    with open(preds, "w") as f:
        for t in tasks:
            for a in t.actions:  # all correct for the first task, nothing for the second
                if t is tasks[0]:
                    f.write(
                        json.dumps(
                            {
                                "annotation_id": t.annotation_id,
                                "action_uid": a.action_uid,
                                "element_id": a.pos_candidates[0].backend_node_id,
                                "op": a.operation.op,
                                "value": a.operation.value,
                            }
                        )
                        + "\n"
                    )
    result = CliRunner().invoke(
        m2w_main, ["score", "--data", str(FIXTURES), "--split", "test_website", "--predictions", str(preds), "--json"]
    )
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    assert scores["step_sr"] == 50.0 and scores["task_sr"] == 50.0 and scores["element_acc"] == 50.0
    assert scores["missing_predictions"] == len(tasks[1].actions)


async def test_raw_page_is_cut_further_when_the_endpoint_says_the_prompt_is_too_long():
    from mind2web.methods import StepInput, predict
    from webagent.html import split_snippets
    from webagent.llm.client import ModelCallError

    big = load_tasks(FIXTURES, split="test_domain")[0].actions[0]  # the >100 KB page
    sizes = []

    def fn(messages, params, purpose):
        text = messages[0]["content"]
        sizes.append(len(text))
        if len(text) > 9000:
            raise ModelCallError(
                "HTTP 400: This model's maximum context length is 8192 tokens. However, you requested 11718 tokens"
            )
        return {"element_id": re.findall(r"id=(\d+)", text)[0], "operation": "CLICK", "value": ""}

    step = StepInput("find os.uptime", [], split_snippets(big.cleaned_html), big.cleaned_html)
    pred = await predict(fake_client(FunctionBackend(fn)), Variant("raw"), step, context_tokens=8192)
    assert pred.element_id is not None and pred.failures == 0 and pred.problem is None
    assert len(sizes) >= 2 and sizes[-1] <= 9000 < sizes[0]


async def test_ranker_method_uses_mindact_scores(tasks, tmp_path):
    import pickle

    from mind2web.ranker import attach_ranker, load_ranker

    scores = {}
    for t in tasks:
        for a in t.actions:
            gold = {c.backend_node_id for c in a.pos_candidates}
            scores[f"{t.annotation_id}_{a.action_uid}"] = {
                c.backend_node_id: (0.9 if c.backend_node_id in gold else 0.1)
                for c in (*a.pos_candidates, *a.neg_candidates)
            }
    path = tmp_path / "scores_all_data.pkl"
    path.write_bytes(pickle.dumps({"scores": scores}))
    tasks = load_tasks(FIXTURES, split="test_website")
    attach_ranker(tasks, load_ranker(path))
    await run_eval(
        fake_client(FunctionBackend(oracle(tasks))),
        tasks,
        [Variant("ranker", 1)],
        tmp_path / "out",
        config(),
    )
    rows = read_rows(tmp_path / "out" / "steps.jsonl")
    assert rows and all(r.element_correct for r in rows)


def test_ranker_without_scores_is_a_clear_error():
    missing = CliRunner().invoke(
        m2w_main, ["eval", "--data", str(FIXTURES), "--method", "ranker", "--model", "fake:heuristic"]
    )
    assert missing.exit_code != 0 and "--scores" in missing.output


async def test_readagent_drops_expanded_snippets_that_overflow_the_context():
    from mind2web.methods import StepInput, predict
    from webagent.html import split_snippets
    from webagent.llm.client import ModelCallError

    big = load_tasks(FIXTURES, split="test_domain")[0].actions[0]
    snippets = split_snippets(big.cleaned_html)
    largest = sorted(range(len(snippets)), key=lambda i: -snippets[i].words)[:2]

    def fn(messages, params, purpose):
        text = messages[0]["content"]
        if purpose == "gist":
            return "a gist"
        if purpose == "lookup":
            return {"pages": sorted(largest)}
        if sum(snippets[i].text in text for i in largest) > 1:
            raise ModelCallError("HTTP 400: This model's maximum context length is 8192 tokens")
        return {"element_id": re.findall(r"id=(\d+)", text)[0], "operation": "CLICK", "value": ""}

    step = StepInput("find os.uptime", [], snippets, big.cleaned_html)
    pred = await predict(fake_client(FunctionBackend(fn)), Variant("readagent-p", 5), step)
    assert pred.element_id is not None and pred.problem is None and pred.failures == 0
    assert pred.lookups == sorted(largest)[:1]


def test_cli_eval_skip_bad_goes_on_and_keeps_what_it_skipped(tmp_path):
    data = tmp_path / "data" / "test_website"
    data.mkdir(parents=True)
    good = json.loads((FIXTURES / "test_website" / "test_website_0.json").read_text())[:1]
    bad = dict(good[0], annotation_id="broken")
    del bad["confirmed_task"]
    (data / "mixed.json").write_text(json.dumps([good[0], bad]))
    args = [
        "eval",
        "--data",
        str(tmp_path / "data"),
        "--method",
        "bm25",
        "--top-k",
        "1",
        "--model",
        "fake:heuristic",
        "--out",
        str(tmp_path / "out"),
    ]
    strict = CliRunner().invoke(m2w_main, args)
    assert strict.exit_code == 2 and "mixed.json" in strict.output and "task 1" in strict.output
    assert "confirmed_task" in strict.output and "Traceback" not in strict.output
    lenient = CliRunner().invoke(m2w_main, args + ["--skip-bad"])
    assert lenient.exit_code == 0, lenient.output
    skipped = [json.loads(line) for line in (tmp_path / "out" / "skipped_records.jsonl").read_text().splitlines()]
    assert len(skipped) == 1 and skipped[0]["field"] == "confirmed_task"
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["meta"]["skipped_records"] == 1 and report["results"]["test_website"]["bm25@1"]["num_tasks"] == 1


async def test_a_page_that_cannot_be_split_is_a_failed_step_not_a_crash(tasks, tmp_path):
    broken = tasks[0].model_copy(deep=True)
    broken.actions[0].cleaned_html = "   "
    client = fake_client(FunctionBackend(oracle(tasks)))
    info = await run_eval(client, [broken], [Variant("bm25", 1)], tmp_path, config())
    rows = {r.step_index: r for r in read_rows(tmp_path / "steps.jsonl")}
    assert info["ran"] == len(broken.actions)
    assert rows[0].failures == 1 and "could not be split" in rows[0].problem and not rows[0].step_success
    assert all(rows[i].step_success for i in range(1, len(broken.actions)))


async def test_report_counts_tasks_a_limited_run_left_incomplete(tasks, tmp_path):
    from mind2web.report import summarise

    client = fake_client(FunctionBackend(oracle(tasks)))
    await run_eval(client, tasks, [Variant("raw")], tmp_path, config())
    rows, manifest = read_rows(tmp_path / "steps.jsonl"), read_manifest(tmp_path)
    assert summarise(rows, manifest)["test_website"]["raw"]["incomplete_tasks"] == 0
    first = tasks[0].actions[0].action_uid
    partial = [r for r in rows if r.action_uid != first]
    assert summarise(partial, manifest)["test_website"]["raw"]["incomplete_tasks"] == 1


# ---------------------------------------------------------------- trustworthy numbers


def _rewrite_rows(path, keep):
    lines = [line for line in path.read_text().splitlines() if keep(json.loads(line))]
    path.write_text("".join(line + "\n" for line in lines))


async def test_task_success_is_over_the_gold_steps_not_the_finished_ones(tasks, tmp_path):
    """A task with only its first step finished (and right) is no success: the steps never
    run count as failures, and the task as incomplete."""
    from mind2web.report import summarise

    client = fake_client(FunctionBackend(oracle(tasks)))
    await run_eval(client, tasks, [Variant("raw")], tmp_path, config())
    first_task, second_task = tasks[0], tasks[1]
    keep_uid = first_task.actions[0].action_uid
    _rewrite_rows(
        tmp_path / "steps.jsonl",
        lambda r: r["annotation_id"] != first_task.annotation_id or r["action_uid"] == keep_uid,
    )
    m = summarise(read_rows(tmp_path / "steps.jsonl"), read_manifest(tmp_path))["test_website"]["raw"]
    assert m["task_sr"] == 50.0  # the second task only
    assert m["incomplete_tasks"] == 1 and m["missing_steps"] == len(first_task.actions) - 1
    assert m["num_steps"] == len(first_task.actions) + len(second_task.actions)
    assert m["steps_run"] == 1 + len(second_task.actions)
    # macro step SR: first task 1/4, second 4/4
    assert m["step_sr"] == pytest.approx(100 * (1 / len(first_task.actions) + 1) / 2)
    # `mind2web report` rewrites the folder's report from the same rows and manifest
    result = CliRunner().invoke(m2w_main, ["report", str(tmp_path)])
    assert result.exit_code == 0, result.output
    again = json.loads((tmp_path / "report.json").read_text())["results"]["test_website"]["raw"]
    assert again["task_sr"] == 50.0 and again["incomplete_tasks"] == 1


async def test_merge_scores_over_the_union_of_the_shards_manifests(tasks, tmp_path):
    fn = oracle(tasks)
    for i in range(2):
        await run_eval(
            fake_client(FunctionBackend(fn)),
            tasks,
            [Variant("raw")],
            tmp_path / f"s{i}",
            config(),
            shard=(i, 2),
        )
    # shard 1 was killed after its first step
    s1_task = tasks[1]
    _rewrite_rows(tmp_path / "s1" / "steps.jsonl", lambda r: r["action_uid"] == s1_task.actions[0].action_uid)
    result = CliRunner().invoke(
        m2w_main, ["merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out", str(tmp_path / "m")]
    )
    assert result.exit_code == 0, result.output
    raw = json.loads((tmp_path / "m" / "report.json").read_text())["results"]["test_website"]["raw"]
    assert raw["num_tasks"] == 2 and raw["task_sr"] == 50.0 and raw["incomplete_tasks"] == 1
    assert [t.annotation_id for t in read_manifest(tmp_path / "m").tasks] == [t.annotation_id for t in tasks]


def _down_for(task_name: str, fn, calls: list):
    """The endpoint fails (5xx through every retry) for the steps of one task."""
    from webagent.llm.client import TransientError

    def backend(messages, params, purpose):
        text = messages[0]["content"]
        calls.append(text)
        if f"Task: {task_name}" in text:
            return TransientError("HTTP 503")
        return fn(messages, params, purpose)

    return backend


async def test_resume_reruns_only_the_steps_whose_endpoint_failed(tasks, tmp_path):
    down, flaky = tasks[0], tasks[1]
    fn = oracle(tasks)
    bad_uid = flaky.actions[0].action_uid

    def first_model(messages, params, purpose):  # one unusable reply (the model's fault) on the other task
        text = messages[0]["content"]
        if f"Task: {flaky.confirmed_task}" in text and "Previous actions:\nNone" in text:
            return "I cannot tell"
        return fn(messages, params, purpose)

    calls: list[str] = []
    client = fake_client(FunctionBackend(_down_for(down.confirmed_task, first_model, calls)), max_retries=1)
    info = await run_eval(client, tasks, [Variant("raw")], tmp_path, config())
    assert info["endpoint_failures"] == len(down.actions)
    rows = {r.action_uid: r for r in read_rows(tmp_path / "steps.jsonl")}
    assert all(rows[a.action_uid].endpoint_failed and not rows[a.action_uid].step_success for a in down.actions)
    assert rows[bad_uid].failures == 1 and not rows[bad_uid].endpoint_failed

    calls.clear()
    client = fake_client(FunctionBackend(fn))  # the endpoint is back
    info = await run_eval(client, tasks, [Variant("raw")], tmp_path, config())
    assert info["ran"] == info["retried_endpoint_failures"] == len(down.actions)
    assert info["endpoint_failures"] == 0
    assert len(client.backend.requests) == len(down.actions)
    assert all(f"Task: {down.confirmed_task}" in r["messages"][0]["content"] for r in client.backend.requests)
    lines = (tmp_path / "steps.jsonl").read_text().splitlines()
    assert len(lines) == sum(len(t.actions) for t in tasks) + len(down.actions)  # appended, not rewritten
    rows = {r.action_uid: r for r in read_rows(tmp_path / "steps.jsonl")}  # the last row per step wins
    assert len(rows) == sum(len(t.actions) for t in tasks)
    assert all(rows[a.action_uid].step_success and not rows[a.action_uid].endpoint_failed for a in down.actions)
    assert rows[bad_uid].failures == 1 and not rows[bad_uid].step_success  # the model's failure is kept


async def test_an_endpoint_failure_raised_by_the_method_is_a_row_not_a_crash(tasks, tmp_path, monkeypatch):
    import mind2web.runner as runner
    from webagent.llm.client import EndpointUnavailable

    async def broken(client, variant, step, **kw):
        raise EndpointUnavailable("http://x: gave up after 5 attempts: HTTP 502")

    monkeypatch.setattr(runner, "predict", broken)
    info = await run_eval(
        fake_client(FunctionBackend(oracle(tasks))), tasks[:1], [Variant("bm25", 1)], tmp_path, config()
    )
    rows = read_rows(tmp_path / "steps.jsonl")
    assert info["endpoint_failures"] == len(rows) == len(tasks[0].actions)
    assert all(r.endpoint_failed and r.failures == 1 and "HTTP 502" in r.problem for r in rows)


@pytest.mark.parametrize(
    "change,named",
    [
        (dict(prompts={**{n: prompt_hash(n) for n in PROMPTS_USED}, "web_action": "0" * 16}), "prompt web_action"),
        (dict(endpoint="http://other:8000/v1 qwen"), "endpoint"),
        (dict(structured=False), "structured (true → false)"),
        (dict(previous_k=0), "previous_k (5 → 0)"),
        (dict(act_on="context"), "act_on (looked-up → context)"),
        (dict(depth=5), "depth (auto → 5)"),
    ],
)
async def test_a_changed_configuration_refuses_to_resume_and_names_the_fields(tasks, tmp_path, change, named):
    client = fake_client(FunctionBackend(oracle(tasks)))
    await run_eval(client, tasks, [Variant("bm25", 1)], tmp_path, config(), limit=1)
    with pytest.raises(UserError) as err:
        await run_eval(client, tasks, [Variant("bm25", 1)], tmp_path, config(**change))
    message = str(err.value)
    assert "another configuration" in message and named in message and "\n" not in message
    # other methods are per row: adding one resumes into the same folder
    await run_eval(client, tasks, [Variant("raw")], tmp_path, config(), limit=1)


def test_the_config_pins_every_prompt_the_methods_use_and_the_endpoint_identity():
    from mind2web.runner import EvalConfig

    backend = FunctionBackend(lambda *a: "x", name="qwen")
    backend.identity = "qwen at http://10.0.0.2:8000/v1"
    client = fake_client(backend, structured=False)
    cfg = EvalConfig.for_client(
        client,
        data="d",
        split=None,
        depth="auto",
        budget_words=300,
        context_tokens=8192,
        previous_k=5,
        act_on="looked-up",
    )
    assert cfg.prompts == {name: prompt_hash(name) for name in PROMPTS_USED}
    assert {"web_gist", "web_lookup", "web_action"} <= set(cfg.prompts)
    assert cfg.endpoint == backend.identity and cfg.model == "qwen" and cfg.structured is False


async def test_previous_k_shows_the_last_k_gold_actions_and_act_on_reaches_predict(tasks, tmp_path, monkeypatch):
    import mind2web.runner as runner

    seen = []
    real = runner.predict

    async def spy(client, variant, step, **kw):
        seen.append((list(step.previous_actions), kw["act_on"]))
        return await real(client, variant, step, **kw)

    monkeypatch.setattr(runner, "predict", spy)
    task = tasks[0]
    client = fake_client(FunctionBackend(oracle(tasks)))
    await run_eval(client, [task], [Variant("raw")], tmp_path / "k1", config(previous_k=1, act_on="context"))
    assert sorted(seen) == sorted([(task.action_reprs[max(0, i - 1) : i], "context") for i in range(len(task.actions))])
    last_prompt = next(
        r["messages"][0]["content"]
        for r in client.backend.requests
        if task.action_reprs[-2] in r["messages"][0]["content"]
    )
    assert task.action_reprs[0] not in last_prompt.split("Previous actions:")[1]
    seen.clear()
    await run_eval(client, [task], [Variant("raw")], tmp_path / "k0", config(previous_k=0))
    assert all(prev == [] for prev, _ in seen)


async def test_rows_and_report_carry_needed_and_spent_tokens(tasks, tmp_path):
    from mind2web.report import summarise

    client = fake_client(FunctionBackend(oracle(tasks)))
    await run_eval(client, tasks, [Variant("raw")], tmp_path, config())
    rows = read_rows(tmp_path / "steps.jsonl")
    assert all(r.needed_prompt_tokens == r.prompt_tokens > 0 and r.needed_completion_tokens > 0 for r in rows)
    # a method served from the cache: nothing spent this run, but the same need
    cached = [r.model_copy(update={"variant": "bm25@1", "prompt_tokens": 0, "completion_tokens": 0}) for r in rows]
    m = summarise(rows + cached, read_manifest(tmp_path))["test_website"]
    assert m["bm25@1"]["prompt_tokens_per_step"] == 0
    assert m["bm25@1"]["needed_prompt_tokens_per_step"] == m["raw"]["needed_prompt_tokens_per_step"] > 0
    assert m["raw"]["prompt_tokens_per_step"] == m["raw"]["needed_prompt_tokens_per_step"]


def test_old_or_foreign_steps_files_fail_with_file_and_line(tmp_path):
    good = {
        "variant": "raw",
        "split": "s",
        "annotation_id": "a",
        "action_uid": "u",
        "step_index": 0,
        "task_steps": 1,
        "website": "w",
        "element_id": "1",
        "op": "CLICK",
        "value": "",
        "element_correct": True,
        "op_f1": 1.0,
        "step_success": True,
        "full_words": 10,
        "context_words": 10,
        "compression_rate": 0.0,
        "num_snippets": 1,
        "gist_memory_words": None,
        "lookups": [],
        "lookup_calls": 0,
        "act_on": None,
        "failures": 0,
        "lookup_failures": 0,
        "endpoint_failed": False,
        "problem": None,
        "calls": 1,
        "cached_calls": 0,
        "prompt_tokens": 5,
        "completion_tokens": 2,
        "needed_prompt_tokens": 5,
        "needed_completion_tokens": 2,
        "wall_s": 0.1,
    }
    path = tmp_path / "steps.jsonl"
    old = {k: v for k, v in good.items() if k != "needed_prompt_tokens"}
    path.write_text(json.dumps(good) + "\n" + json.dumps(old) + "\n")
    with pytest.raises(
        DataError, match=r"steps.jsonl, record line 2, field 'needed_prompt_tokens': required field is missing"
    ):
        read_rows(path)
    path.write_text(json.dumps(dict(good, colour="red")) + "\n")
    with pytest.raises(DataError, match=r"record line 1, field 'colour': unknown field"):
        read_rows(path)
    # a re-run's row replaces the first; a torn last line is dropped
    path.write_text(json.dumps(good) + "\n" + json.dumps(dict(good, step_success=False)) + "\n" + '{"variant": "ra')
    assert [r.step_success for r in read_rows(path)] == [False]
    # through the CLI: one line, no traceback
    (tmp_path / "config.json").write_text("{}")
    path.write_text(json.dumps(old) + "\n")
    result = CliRunner().invoke(m2w_main, ["merge", str(tmp_path), "--out", str(tmp_path / "m")])
    assert result.exit_code != 0 and "Traceback" not in result.output


def test_cli_eval_prints_a_compact_summary_and_documents_every_option(tmp_path):
    from mind2web.cli import eval_command

    undocumented = [p.name for p in eval_command.params if not p.help]
    assert undocumented == []
    out = tmp_path / "run"
    result = CliRunner().invoke(
        m2w_main,
        [
            "eval",
            "--data",
            str(FIXTURES),
            "--split",
            "test_website",
            "--method",
            "raw,readagent-p",
            "--max-lookup",
            "1",
            "--model",
            "fake:heuristic",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    head = next(i for i, line in enumerate(lines) if line.split()[:2] == ["method", "Ele.Acc"])
    assert lines[head - 1].startswith("test_website: 2 tasks, 8 steps")
    table = [line.split() for line in lines[head : head + 3]]
    assert [row[0] for row in table] == ["method", "raw", "readagent-p@1"]
    assert "look-up" in lines[head] and len({len(lines[head + 1]), len(lines[head + 2])}) == 1  # aligned
    report = json.loads((out / "report.json").read_text())["results"]["test_website"]
    assert table[1][1:5] == [f"{report['raw'][k]:.1f}" for k in ("element_acc", "op_f1", "step_sr", "task_sr")]
    assert "| Method |" not in result.output  # the Markdown table stays in the file
    assert f"report: {out / 'report.md'}" in result.output
    md = (out / "report.md").read_text()
    assert "Previous actions shown to the model: the last 5, teacher-forced (MindAct's default)" in md
    assert "readagent-p acts on: ids of the looked-up snippets only" in md


async def test_a_down_endpoint_stops_the_run_instead_of_failing_every_step(tasks, tmp_path):
    from webagent.llm.client import TransientError

    client = fake_client(FunctionBackend(lambda *a: TransientError("connection refused")), max_retries=0)
    info = await run_eval(
        client, tasks, [Variant("raw")], tmp_path, config(), step_concurrency=1, endpoint_down_after=3
    )
    n = sum(len(t.actions) for t in tasks)
    assert info["endpoint_failures"] == info["ran"] == 3 and info["not_started"] == n - 3
    # the rest runs on resume once the endpoint is back
    info = await run_eval(fake_client(FunctionBackend(oracle(tasks))), tasks, [Variant("raw")], tmp_path, config())
    assert info["ran"] == n and info["retried_endpoint_failures"] == 3 and info["not_started"] == 0
