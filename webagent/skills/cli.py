"""``webagent skills``: learn skills from recordings, list, show, run, remove, export, import."""

from __future__ import annotations

import json
from pathlib import Path

import click

from webagent.cli_common import headed_option, run_async, user_errors
from webagent.errors import UserError
from webagent.skills import store
from webagent.skills.learn import from_recording


@click.group("skills")
def skills_group() -> None:
    """Skills learned from recordings (webagent teach, or runs that ended done), kept per site."""


@skills_group.command("learn")
@click.argument("recordings", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=Path))
@user_errors
def learn_command(recordings) -> None:
    """Learn skills from RECORDINGS (trace folders of `webagent teach` or of finished runs)."""

    learned = [s for folder in recordings for s in from_recording(folder)]
    kept = store.add(learned)
    click.echo(f"learned {len(learned)} skills from {len(recordings)} recordings; kept {len(kept)}:")
    for skill in kept:
        click.echo(f"  {skill.site}  {skill.line(skill.id)}")


@skills_group.command("list")
@click.option("--site", help="host:port (default: every site).")
@click.option("--json", "as_json", is_flag=True)
@user_errors
def list_command(site, as_json) -> None:
    """The skills kept, a line each."""
    skills = store.load(site) if site else store.every_skill()
    if not skills and not as_json:
        click.echo("no skills yet: record one with `webagent teach`, then `webagent skills learn TRACE`")
    for skill in skills:
        if as_json:
            row = {"site": skill.site, "id": skill.id, "name": skill.name, "params": [p.name for p in skill.params]}
            click.echo(json.dumps({**row, "steps": len(skill.steps)}))
        else:
            click.echo(f"{skill.site}  {skill.line(skill.id)}  [{len(skill.steps)} steps]")


@skills_group.command("show")
@click.argument("site")
@click.argument("skill_id")
@user_errors
def show_command(site, skill_id) -> None:
    """One skill: its parameters, start page and steps."""
    skill = next((s for s in store.load(site) if s.id == skill_id), None)
    if skill is None:
        raise UserError(f"no skill {skill_id!r} for {site} (see `webagent skills list`)")
    click.echo(skill.line(skill.id))
    reach = ", reachable from any page of the site" if skill.start.reachable else ""
    click.echo(f"starts on {skill.start.pattern} ({skill.start.title!r}){reach}")
    for p in skill.params:
        click.echo(f"  param {p.name} ({p.kind}, from {p.source})" + (f": e.g. {p.example!r}" if p.example else ""))
    for n, step in enumerate(skill.steps, 1):
        click.echo(f"  {n}. {step.text}" + (f"  {{{step.param}}}" if step.param else ""))
    click.echo(f"learned from: {', '.join(skill.sources)}")


@skills_group.command("remove")
@click.argument("site")
@click.argument("skill_id")
@user_errors
def remove_command(site, skill_id) -> None:
    gone = store.remove(site, skill_id)
    click.echo(f"removed {gone.id} ({gone.name}) from {site}")


@skills_group.command("export")
@click.argument("site")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@user_errors
def export_command(site, file) -> None:
    click.echo(f"exported {store.export(site, file)} skills of {site} to {file}")


@skills_group.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@user_errors
def import_command(file) -> None:
    kept = store.add(store.read_file(file))
    click.echo(f"imported {file}: {len(kept)} skills kept for {', '.join(dict.fromkeys(s.site for s in kept))}")


@skills_group.command("run")
@click.argument("site")
@click.argument("skill_id")
@click.option("--arg", "args", multiple=True, metavar="NAME=VALUE", help="A parameter's value (repeatable).")
@click.option("--url", help="The page to start on (default: the skill's start page on SITE).")
@headed_option
@run_async
async def run_command(site, skill_id, args, url, headed) -> None:
    """Run one skill with new values, no model: each step found by its fingerprint. Arguments
    that do not fit (a parameter it does not take, one missing, an option the page's select
    does not have) are one line before anything is done."""
    from webagent.skills.direct import run_direct

    given: dict[str, str] = {}
    for item in args:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UserError(f"--arg {item!r}: write NAME=VALUE")
        given[name.strip()] = value
    ok = await run_direct(site, skill_id, given, url=url, headed=headed, say=click.echo)
    if not ok:
        raise SystemExit(1)
