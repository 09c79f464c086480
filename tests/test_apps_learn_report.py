"""``webagent apps learn`` replaces the skills of the demonstrations it learns again (a changed
or removed demonstration's skills go) and says which demonstrations gave no skill and why, one
line each (issue 47, item 7). The notes app of tests/fixtures/apps/notes, copied and edited."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from browser_support import requires_chromium
from click.testing import CliRunner

from webagent.apps.learn import app_site
from webagent.apps.spec import load_app
from webagent.cli import main
from webagent.skills import store

pytestmark = [pytest.mark.browser, requires_chromium]
NOTES = Path(__file__).parent / "fixtures" / "apps" / "notes"


def _learn(folder: Path, out: Path) -> list[str]:
    result = CliRunner().invoke(main, ["apps", "learn", "--app", "notes", "--app-dir", str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return [line for line in result.output.splitlines() if not line.startswith("…")]  # not the progress lines


def test_apps_learn_replaces_what_its_demonstrations_gave_and_names_those_that_gave_none(tmp_path, monkeypatch):
    monkeypatch.setenv("WEBAGENT_APPS", str(tmp_path / "apps"))
    monkeypatch.setenv("WEBAGENT_HOME", str(tmp_path / "home"))
    folder = tmp_path / "notes"
    shutil.copytree(NOTES, folder)
    demos = json.loads((folder / "demos.json").read_text())
    login, yellow = demos
    opens = {  # logged in already, one click: no skill
        "id": "demo-notes-open-new",
        "kinds": ["open"],
        "task": "Open the form for a new note.",
        "start": "/login",
        "setup": login["gold"],
        "gold": [{"op": "click", "role": "link", "name": "New note"}],
    }
    (folder / "demos.json").write_text(json.dumps([login, yellow, opens]))
    first = _learn(folder, tmp_path / "demos")
    assert first[0].startswith("notes: 3 demonstrations, 2 skills learned, 2 kept for "), first
    none = [line for line in first if line.startswith("  no skill from ")]
    assert len(none) == 1 and none[0].startswith(
        '  no skill from demo-notes-open-new: one step (CLICK [link] "New note" on /'
    ), first
    site = app_site(load_app(folder))
    assert sorted(s.id for s in store.load(site)) == ["log_in", "save_note"]

    # the log-in demonstration removed, the other one now starts logged in: no log-in skill is learned
    yellow = {**yellow, "setup": yellow["gold"][:3], "gold": yellow["gold"][3:]}
    (folder / "demos.json").write_text(json.dumps([yellow]))
    again = _learn(folder, tmp_path / "demos")
    assert again[0].endswith("(in place of the 2 an earlier learning kept)"), again
    assert "  gone: log_in (learned from demo-notes-login, demo-notes-new-yellow, changed or removed)" in again
    kept = store.load(site)
    assert [s.id for s in kept] == ["save_note"]
    assert [Path(p).name for p in kept[0].sources] == ["demo-notes-new-yellow"]
