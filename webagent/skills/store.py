"""Skills kept per site: ``$WEBAGENT_HOME/skills/<host>_<port>.json`` (a JSON object with the
version and the site's skills). Learning adds to a site's file (agreeing skills merge), or,
learning recordings again (``webagent apps learn``), replaces what they gave before;
``export`` writes one site's skills to a file, ``import`` reads such a file back, merging.
A file of another version, or one that is not a skills file, is refused with one line
naming the file and the record, and the store is left as it was."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from webagent.errors import DataError, UserError
from webagent.llm.cache import webagent_home
from webagent.skills.learn import merge
from webagent.skills.model import VERSION, Skill
from webagent.trace.workflow import write_json


def root() -> Path:
    return webagent_home() / "skills"


def _file(site: str) -> Path:
    return root() / (site.replace(":", "_").replace("/", "_") + ".json")


def read_file(path: Path) -> list[Skill]:
    """The skills of a skills file (the store's or an export)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise DataError(path, f"not valid JSON: {exc}") from None
    if not isinstance(data, dict) or "skills" not in data:
        raise DataError(path, 'not a skills file (expected {"version": ..., "skills": [...]})')
    if data.get("version") != VERSION:
        raise DataError(path, f"skills of version {data.get('version')!r}; this webagent reads version {VERSION}")
    skills = []
    for i, item in enumerate(data["skills"]):
        try:
            skills.append(Skill.model_validate(item))
        except ValidationError as exc:
            err = exc.errors()[0]
            raise DataError(
                path,
                err["msg"],
                record=item.get("id", i) if isinstance(item, dict) else i,
                field=".".join(str(p) for p in err["loc"]),
            ) from None
    return skills


def write_file(path: Path, skills: list[Skill]) -> Path:
    return write_json(path, {"version": VERSION, "skills": [s.to_json() for s in skills]})


def every_skill() -> list[Skill]:
    """Every site's skills, site by site."""
    return [s for path in sorted(root().glob("*.json")) for s in read_file(path)] if root().is_dir() else []


def load(site: str) -> list[Skill]:
    path = _file(site)
    return read_file(path) if path.is_file() else []


def add(skills: list[Skill]) -> list[Skill]:
    """Keep ``skills`` with their sites' skills (agreeing ones merge); returns the kept skills."""
    kept: list[Skill] = []
    for site in dict.fromkeys(s.site for s in skills):
        merged = merge(load(site) + [s for s in skills if s.site == site])
        write_file(_file(site), merged)
        kept += merged
    return kept


def replace(site: str, relearned: Callable[[str], bool], skills: list[Skill]) -> tuple[list[Skill], list[Skill]]:
    """Keep ``skills`` for ``site`` in place of what the recordings they were learned again
    from gave before (``relearned``: whether a source is one of those recordings): a stored
    skill loses those sources, and goes when none is left (a changed or removed recording's
    skill does not linger). Returns (the site's skills now, the stored skills that went)."""
    left: list[Skill] = []
    gone: list[Skill] = []
    for skill in load(site):
        sources = [src for src in skill.sources if not relearned(src)]
        if not sources and skill.sources:
            gone.append(skill)
        else:
            left.append(skill if sources == skill.sources else skill.model_copy(update={"sources": sources}))
    kept = merge(left + [s for s in skills if s.site == site])
    write_file(_file(site), kept)
    return kept, gone


def remove(site: str, skill_id: str) -> Skill:
    skills = load(site)
    gone = next((s for s in skills if s.id == skill_id), None)
    if gone is None:
        raise UserError(f"no skill {skill_id!r} for {site} (see `webagent skills list`)")
    write_file(_file(site), [s for s in skills if s.id != skill_id])
    return gone


def export(site: str, path: Path) -> int:
    skills = load(site)
    if not skills:
        raise UserError(f"no skills for {site} (see `webagent skills list`)")
    write_file(path, skills)
    return len(skills)
