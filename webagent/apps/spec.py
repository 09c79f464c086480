"""What an app of the real-app suite is, read from its folder (``APP_FORMAT.md``): its
``app.toml`` (what to install, how to know it is up, who can log in), its
``tasks.json`` (tasks with their gold paths) and its optional ``demos.json`` (demonstrations:
tasks of the same shape, apart from the evaluation, to learn skills from). Apps are found in the package
(``webagent/apps/builtin/``), in ``$WEBAGENT_HOME/apps.d/`` and in folders named on the
command line; a bad file is one line naming the file, the record and the field."""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from webagent.errors import DataError, UserError
from webagent.llm.cache import webagent_home

BUILTIN = Path(__file__).parent / "builtin"
DEMOS_FILE = "demos.json"  # an app folder's optional demonstrations (APP_FORMAT.md)
KINDS = (
    "login",
    "search",
    "open",
    "create",
    "edit",
    "assign",
    "comment",
    "status",
    "filter",
    "checkout",
    "voucher",
    "leave-alone",
    "answer",
)


class User(BaseModel):
    model_config = ConfigDict(extra="forbid")
    login: str
    password: str
    role: str = ""


class AppConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    title: str
    requirements: list[str] = Field(default_factory=list)  # none: the standard library is enough
    ready_path: str = "/"
    users: list[User] = Field(default_factory=list)


class GoldStep(BaseModel):
    """One step as a person says it: the element's role and accessible name, and what to do.
    A ``wait`` step waits, as a person waits for a confirmation, for one of: an element by
    role and name, ``text`` shown on the page, or the page's ``url`` (a Playwright glob such
    as ``**/thanks/``, or a regular expression between slashes: ``/order/\\d+/``). A ``dialog``
    step answers the dialog (confirm, prompt) the step before it raised: ``value`` is
    ``accept`` or ``dismiss``."""

    model_config = ConfigDict(extra="forbid")
    op: Literal["click", "type", "select", "check", "uncheck", "wait", "dialog", "done"]
    role: str = ""
    name: str = ""
    value: str = ""
    nth: int | None = None
    text: str = ""  # wait: text shown on the page
    url: str = ""  # wait: the page's URL (glob, or /regex/)

    @model_validator(mode="after")
    def _fits(self):
        if self.op == "wait":
            return self._fits_wait()
        if self.op == "dialog":
            if self.value not in ("accept", "dismiss") or self.role or self.name or self.text or self.url:
                raise ValueError('a dialog step takes only a value, "accept" or "dismiss"')
            return self
        if self.text or self.url:
            raise ValueError(f"text and url belong to a wait step, not to a {self.op} step")
        if self.op != "done" and not (self.role and self.name):
            raise ValueError(f"a {self.op} step needs a role and a name")
        if self.op in ("type", "select") and not self.value:
            raise ValueError(f"a {self.op} step needs a value")
        return self

    def _fits_wait(self):
        given = [
            what for what, on in (("role/name", self.role or self.name), ("text", self.text), ("url", self.url)) if on
        ]
        if len(given) != 1:
            got = f" (it has {' and '.join(given)})" if given else ""
            raise ValueError(f"a wait step needs exactly one of: a role and a name, text, or url{got}")
        if given == ["role/name"] and not (self.role and self.name):
            raise ValueError("a wait step for an element needs both a role and a name")
        if self.value:
            raise ValueError("a wait step takes no value")
        if self.nth is not None and not self.role:
            raise ValueError("nth belongs to a wait step for an element (role and name)")
        if (pattern := url_regex(self.url)) is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"url {self.url!r} is not a valid regular expression: {exc}") from None
        return self

    def describe(self) -> str:
        if self.op == "done":
            return f"DONE {self.value!r}" if self.value else "DONE"
        if self.op == "dialog":
            return f"{self.value} the dialog"
        if self.op == "wait" and not self.role:
            return f"wait for text {self.text!r}" if self.text else f"wait for url {self.url!r}"
        if self.op == "wait":
            return f"wait for {self.role} {self.name!r}" + (f" #{self.nth}" if self.nth is not None else "")
        what = f"{self.role} {self.name!r}" + (f" #{self.nth}" if self.nth is not None else "")
        return f"{self.op} {what}" + (f" = {self.value!r}" if self.value else "")


def url_regex(url: str) -> str | None:
    """The regular expression of a wait step's ``url`` written between slashes, else None (a glob)."""
    return url[1:-1] if len(url) > 2 and url.startswith("/") and url.endswith("/") else None


class Task(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    kinds: list[str] = Field(min_length=1)
    task: str
    start: str = "/"
    gold: list[GoldStep] = Field(min_length=1)

    @model_validator(mode="after")
    def _known_kinds(self):
        unknown = [k for k in self.kinds if k not in KINDS]
        if unknown:
            raise ValueError(f"unknown kinds {unknown}; known: {', '.join(KINDS)}")
        if any(s.op == "done" for s in self.gold[:-1]):
            raise ValueError("only the last gold step may be done")
        return self

    @property
    def answer(self) -> str | None:
        """The value an answer task expects with DONE (the check decides, not this)."""
        last = self.gold[-1]
        return last.value if last.op == "done" and last.value else None


class Demo(Task):
    """A demonstration (demos.json): a task's fields, and ``setup``: steps done before the
    recording starts, as a person already logged in when they press record. They are done on
    the same browser and never recorded, so nothing is learned from them."""

    setup: list[GoldStep] = Field(default_factory=list)

    @model_validator(mode="after")
    def _setup_acts(self):
        if any(s.op == "done" for s in self.setup):
            raise ValueError("a setup step may not be done")
        return self


@dataclass(frozen=True)
class App:
    folder: Path
    config: AppConfig
    tasks: tuple[Task, ...]
    # Demonstrations (demos.json): gold paths to learn skills from, never the evaluation's tasks.
    demos: tuple[Demo, ...] = ()

    @property
    def name(self) -> str:
        return self.config.name

    def task(self, task_id: str) -> Task:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise UserError(f"app {self.name} has no task {task_id!r} (see `webagent apps list --tasks`)")

    def demo(self, demo_id: str) -> Demo:
        for d in self.demos:
            if d.id == demo_id:
                return d
        known = ", ".join(d.id for d in self.demos) or f"none: the app has no {DEMOS_FILE}"
        raise UserError(f"app {self.name} has no demonstration {demo_id!r}; known: {known}")


def _first_error(exc: ValidationError) -> tuple[str, str]:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return where, err["msg"]


def load_app(folder: str | Path) -> App:
    folder = Path(folder).resolve()
    toml_path, tasks_path = folder / "app.toml", folder / "tasks.json"
    for path in (toml_path, tasks_path, folder / "app.py"):
        if not path.is_file():
            raise UserError(f"{folder} is not an app folder: {path.name} is missing (see webagent/apps/APP_FORMAT.md)")
    try:
        config = AppConfig.model_validate(tomllib.loads(toml_path.read_text(encoding="utf-8")))
    except tomllib.TOMLDecodeError as exc:
        raise DataError(toml_path, f"not valid TOML: {exc}") from None
    except ValidationError as exc:
        where, msg = _first_error(exc)
        raise DataError(toml_path, msg, field=where) from None
    if config.name != folder.name:
        raise DataError(toml_path, f"name {config.name!r} differs from the folder's name {folder.name!r}", field="name")
    tasks = _load_tasks(tasks_path)
    demos_path = folder / DEMOS_FILE
    demos = _load_tasks(demos_path, Demo) if demos_path.is_file() else []
    evaluation = {t.id for t in tasks}
    for demo in demos:
        if demo.id in evaluation:
            raise DataError(demos_path, "a demonstration's id is an evaluation task's id", record=demo.id, field="id")
    return App(folder, config, tuple(tasks), tuple(demos))


def _load_tasks(path: Path, model: type[Task] = Task) -> list:
    """The tasks of ``path`` (tasks.json or demos.json), each validated; a bad one is a
    DataError naming the file, the record and the field."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(path, f"not valid JSON: {exc}") from None
    if not isinstance(raw, list):
        raise DataError(path, "must be a JSON list of tasks")
    tasks, seen = [], set()
    for i, item in enumerate(raw):
        record = item.get("id", i) if isinstance(item, dict) else i
        try:
            task = model.model_validate(item)
        except ValidationError as exc:
            where, msg = _first_error(exc)
            raise DataError(path, msg, record=record, field=where) from None
        if task.id in seen:
            raise DataError(path, "duplicate task id", record=task.id, field="id")
        seen.add(task.id)
        tasks.append(task)
    return tasks


def app_folders(extra: Sequence[str | Path] = ()) -> dict[str, Path]:
    """Every app folder by name: the package's, then $WEBAGENT_HOME/apps.d/*, then ``extra``
    (a later folder with the same name wins)."""
    found: dict[str, Path] = {}
    user_dir = webagent_home() / "apps.d"
    for root in (BUILTIN, user_dir):
        if root.is_dir():
            for sub in sorted(root.iterdir()):
                if (sub / "app.toml").is_file():
                    found[sub.name] = sub
    for folder in extra:
        folder = Path(folder)
        if not (folder / "app.toml").is_file():
            raise UserError(f"--app-dir {folder}: no app.toml there (see webagent/apps/APP_FORMAT.md)")
        found[folder.name] = folder
    return found


def load_apps(names: list[str] | None = None, extra: Sequence[str | Path] = ()) -> list[App]:
    folders = app_folders(extra)
    if names:
        unknown = [n for n in names if n not in folders]
        if unknown:
            raise UserError(f"unknown app {unknown[0]!r}; known: {', '.join(folders) or 'none'}")
        return [load_app(folders[n]) for n in names]
    return [load_app(f) for f in folders.values()]


def apps_home() -> Path:
    """Where apps are installed and their state kept: $WEBAGENT_APPS, else $WEBAGENT_HOME/apps."""
    return Path(os.environ.get("WEBAGENT_APPS") or webagent_home() / "apps")
