"""``bench.experiments.skills_coverage --app-dir`` reads another app folder as ``apps eval
--app-dir`` does (webagent/apps/APP_FORMAT.md), and a folder that is no app is one line."""

from __future__ import annotations

import json
from pathlib import Path

from bench.experiments import skills_coverage
from webagent.apps.learn import app_site
from webagent.apps.spec import load_apps
from webagent.skills import store
from webagent.skills.model import Skill, SkillStart
from webagent.trace.fingerprint import Fingerprint, PageRef
from webagent.trace.step import RecordedStep

BUILTIN_TOML = Path("webagent/apps/builtin/helpdesk/app.toml")
TASK = {
    "id": "mydesk-find-ticket",
    "kinds": ["search"],
    "task": "Find the ticket about the printer.",
    "start": "/",
    "gold": [
        {"op": "type", "role": "textbox", "name": "Search", "value": "printer"},
        {"op": "click", "role": "button", "name": "Go"},
    ],
}


def _app_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "mydesk"
    folder.mkdir()
    toml = BUILTIN_TOML.read_text(encoding="utf-8").replace('name = "helpdesk"', 'name = "mydesk"', 1)
    (folder / "app.toml").write_text(toml, encoding="utf-8")
    (folder / "tasks.json").write_text(json.dumps([TASK]), encoding="utf-8")
    (folder / "app.py").write_text("# never run here\n", encoding="utf-8")
    return folder


def _search_skill(site: str) -> Skill:
    page = PageRef(url=f"http://{site}/", pattern="/")
    steps = [
        RecordedStep(op="TYPE", value="printer", target=Fingerprint(tag="input", name="Search"), page=page),
        RecordedStep(op="CLICK", target=Fingerprint(tag="button", name="Go"), page=page),
    ]
    start = SkillStart(url=f"http://{site}/", pattern="/")
    return Skill(id="go", name="Go", description="", site=site, start=start, steps=steps, sources=["demo-1"])


def test_another_app_folder_is_read(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("WEBAGENT_HOME", str(tmp_path / "home"))
    folder = _app_folder(tmp_path)
    (app,) = load_apps(["mydesk"], extra=[folder])
    store.add([_search_skill(app_site(app))])
    out = tmp_path / "out"
    assert skills_coverage.main(["--app-dir", str(folder), "--app", "mydesk", "--out", str(out)]) == 0
    rows = json.loads((out / "coverage.json").read_text())["tasks"]
    assert [(r["app"], r["task"], r["skills"]) for r in rows] == [("mydesk", "mydesk-find-ticket", ["go"])]
    assert "1 of 1 evaluation tasks have a learned skill" in capsys.readouterr().out


def test_a_folder_that_is_no_app_is_one_line(tmp_path, capsys):
    assert skills_coverage.main(["--app-dir", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"--app-dir {tmp_path}: no app.toml there") and "\n" not in err
