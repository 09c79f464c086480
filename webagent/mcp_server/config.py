"""What the person who installs ``webagent mcp`` decides when it starts, from flags and a TOML
file (``--config``): the sites the agent may drive, the folders whose documents may be asked
about, where secrets come from, where runs are kept, the most steps a run may take.

Flags add to the file's lists and replace its single values. Secrets are never here: they
come from ``WEBAGENT_SECRET_NAME`` variables and a TOML secrets file (``secrets_file``), read
once at start (``load_secrets``)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from webagent.agent.options import AgentOptions
from webagent.errors import DataError, UserError
from webagent.llm.cache import webagent_home

_SECRET_NAME = re.compile(r"[A-Za-z0-9_]+")


class ServerConfig(BaseModel):
    """The server's settings (the TOML file's keys are these fields)."""

    model_config = ConfigDict(extra="forbid")

    allowed_sites: list[str] = Field(default_factory=list)  # host (any port) or host:port, as --allow-domain
    docs_dirs: list[Path] = Field(default_factory=list)  # folders whose documents the ask tool may read
    secrets_file: Path | None = None  # TOML: NAME = "value" per secret
    runs_dir: Path | None = None  # default: $WEBAGENT_HOME/runs
    # a run's limit, and the most a call may ask for: by default `webagent run`'s (AgentOptions')
    max_steps: int = Field(default_factory=lambda: AgentOptions().max_steps, ge=1)

    def runs_folder(self) -> Path:
        return self.runs_dir if self.runs_dir is not None else webagent_home() / "runs"


def _toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read it: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise DataError(path, f"not valid TOML: {exc}") from None


def load_config(
    path: Path | None,
    *,
    allowed_sites: tuple[str, ...] = (),
    docs_dirs: tuple[Path, ...] = (),
    secrets_file: Path | None = None,
    runs_dir: Path | None = None,
    max_steps: int | None = None,
) -> ServerConfig:
    """The file's settings (none without ``path``) with the flags'; a setting that does not fit
    is one line naming the file and the key."""
    data = _toml(path) if path is not None else {}
    try:
        config = ServerConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise DataError(path or "--config", err["msg"], field=".".join(str(p) for p in err["loc"])) from None
    here = path.parent if path is not None else Path.cwd()  # the file's relative paths are the file's
    update: dict = {
        "allowed_sites": list(dict.fromkeys([*config.allowed_sites, *allowed_sites])),
        "docs_dirs": [_absolute(d, here) for d in config.docs_dirs] + [_absolute(d, Path.cwd()) for d in docs_dirs],
    }
    if secrets_file is not None or config.secrets_file is not None:
        update["secrets_file"] = (
            _absolute(secrets_file, Path.cwd()) if secrets_file else _absolute(config.secrets_file, here)
        )
    if runs_dir is not None or config.runs_dir is not None:
        update["runs_dir"] = _absolute(runs_dir, Path.cwd()) if runs_dir else _absolute(config.runs_dir, here)
    if max_steps is not None:
        update["max_steps"] = max_steps
    config = config.model_copy(update=update)
    _check(config, path)
    return config


def _absolute(path: Path | None, base: Path) -> Path:
    assert path is not None
    path = Path(path).expanduser()
    return path if path.is_absolute() else base / path


def _check(config: ServerConfig, path: Path | None) -> None:
    from webagent.browser.guard import NavigationGuard

    where = f"{path}: allowed_sites" if path is not None else "--allow-site"
    if not config.allowed_sites:
        raise UserError(
            "no allowed site: name the sites the assistant may drive with --allow-site HOST[:PORT] "
            "(repeatable) or allowed_sites in the --config file"
        )
    for site in config.allowed_sites:
        if not NavigationGuard([site]).entries or "/" in site.split("://", 1)[-1].rstrip("/"):
            raise UserError(f"{where}: {site!r} is not a site (write host or host:port, e.g. 127.0.0.1:8000)")
    for folder in config.docs_dirs:
        if not folder.is_dir():
            raise UserError(f"{'docs_dirs' if path else '--docs-dir'} {folder}: no such folder")


def load_secrets(config: ServerConfig) -> dict[str, str]:
    """Every secret the server holds, name (lower-cased) -> value: ``WEBAGENT_SECRET_NAME``
    variables, then the secrets file's (a TOML table of strings)."""
    from webagent.agent.secrets import parse_secret_options

    secrets = parse_secret_options([])  # the WEBAGENT_SECRET_* variables
    if config.secrets_file is None:
        return secrets
    path = config.secrets_file
    for name, value in _toml(path).items():
        if not _SECRET_NAME.fullmatch(name):
            raise DataError(path, "a secret's name is letters, digits and _", record=name)
        if not isinstance(value, str) or not value:
            raise DataError(path, "a secret is a non-empty string", record=name)
        secrets[name.lower()] = value
    return secrets
