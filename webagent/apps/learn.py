"""``webagent apps learn``: an app's skills from its demonstrations alone (``demos.json``).

Each demonstration is done on a fresh instance by its gold path, in the teach browser
(``webagent.agent.teach``), exactly as a person showing the task would be recorded: the
recording is a run's trace, cut into skills (``webagent.skills.learn``) and kept for the
app's site (``127.0.0.1`` on the app's own port, ``instance.stable_port``). The evaluation
tasks' gold paths are never read here."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from webagent.apps.gold import answer_next_dialog, do_step
from webagent.apps.instance import AppInstance, named_port, stable_port
from webagent.apps.spec import App, GoldStep
from webagent.errors import UserError, first_line
from webagent.skills.learn import from_recording, merge, site_of
from webagent.skills.model import Skill
from webagent.trace import workflow as W
from webagent.trace.fingerprint import short
from webagent.trace.workflow import read_records


async def record_demos(app: App, out: Path, say: Callable[[str], None] = print) -> list[Path]:
    """Each demonstration of ``app`` recorded through teach on a fresh instance; the trace folders."""
    from webagent.agent.teach import Teach

    if not app.demos:
        raise UserError(f"app {app.name} has no demonstrations (demos.json; see webagent/apps/APP_FORMAT.md)")
    folders: list[Path] = []
    with AppInstance(app, say=say, port=stable_port(app.name)) as instance:
        for demo in app.demos:
            instance.reset()
            folder = out / demo.id
            shutil.rmtree(folder, ignore_errors=True)
            async with Teach(
                instance.url(demo.start), demo.task, folder, headed=False, allowed_domains=["127.0.0.1"]
            ) as teach:
                if demo.setup:  # done before the person presses record (already logged in)
                    await _do(teach, app, demo.id, demo.setup, "setup step")
                    await teach.restart()
                await _do(teach, app, demo.id, demo.gold, "step")
                await teach.page.wait_for_load_state("load")
                folders.append(await teach.finish())
            say(f"recorded {demo.id}: {len(read_records(folder))} steps")
    return folders


async def _do(teach, app: App, demo_id: str, steps: list[GoldStep], what: str) -> None:
    """``steps`` done in the teach browser, as a person would; a step that cannot be done is one line."""
    page = teach.page
    for k, step in enumerate(steps):
        if k + 1 < len(steps) and steps[k + 1].op == "dialog":
            answer_next_dialog(page, steps[k + 1].value)
        try:
            await do_step(page, step)
            await teach.settle()
        except Exception as exc:  # noqa: BLE001 - a demonstration that cannot be done: one line
            raise UserError(
                f"{app.name} demonstration {demo_id}, {what} {k + 1} ({step.describe()}): {first_line(exc)}"
            ) from None


def skills_of(folder: Path) -> list[Skill]:
    """The skills of one recording; none from a recording of a single click or a look-up."""
    try:
        return from_recording(folder)
    except UserError:
        return []


def why_no_skill(folder: Path) -> str:
    """Why a recording gave no skill, in one line: the recording could not be read as a
    finished run, or no piece of it holds two steps (skills.learn.cut: one step; clicks each
    on a page of its own; ...), its steps listed as they were done."""
    try:
        steps = [s for s in W.from_trace(folder).steps if s.op in ("CLICK", "TYPE", "SELECT", "GOTO")]
    except UserError as exc:
        return first_line(exc)
    if not steps:
        return "no step on a page (nothing clicked, typed or chosen)"
    done = " -> ".join(f"{s.op} {short(s.target) if s.target else s.value} on {s.page.pattern}" for s in steps)
    if len(steps) == 1:
        return f"one step ({done}): a skill is two or more"
    if all(s.op in ("CLICK", "GOTO") for s in steps):
        return f"clicks only, no piece of two steps ({done})"
    return f"no piece of two or more steps that fill or send a form ({done})"


@dataclass
class Learned:
    """What ``apps learn`` did for one app."""

    recorded: int  # demonstrations recorded
    skills: list[Skill]  # learned from them (merged)
    kept: list[Skill]  # the app site's skills now
    replaced: list[Skill]  # skills an earlier learning of these demonstrations kept, gone now
    no_skill: dict[str, str] = field(default_factory=dict)  # a demonstration that gave none -> why


async def learn_app(app: App, out: Path, say: Callable[[str], None] = print) -> Learned:
    """Record ``app``'s demonstrations under ``out``, learn their skills and keep them for the
    app's site in place of what its demonstrations gave before (a changed or removed
    demonstration's skills go: every recording under ``out``, and every one of a demonstration
    of the app, is learned again here); says which demonstrations gave no skill and why."""
    from webagent.skills import store

    folders = await record_demos(app, out, say=say)
    per_demo = {folder.name: skills_of(folder) for folder in folders}
    learned = merge([s for skills in per_demo.values() for s in skills])
    skills = [s.model_copy(update={"site": app_site(app)}) for s in learned]
    demo_ids, here = {d.id for d in app.demos}, out.resolve()

    def relearned(source: str) -> bool:  # a recording of this app's demonstrations, old or new
        path = Path(source)
        return path.name in demo_ids or path.resolve().parent == here

    kept, gone = store.replace(app_site(app), relearned, skills)
    no_skill = {demo: why_no_skill(out / demo) for demo, found in per_demo.items() if not found}
    return Learned(len(folders), skills, kept, gone, no_skill)


def app_site(app: App) -> str:
    """The site an app's skills are kept for: 127.0.0.1 on the port named after the app (the one
    it is served on unless that is taken; ``for_instance`` moves them to the port it got)."""
    return site_of(f"http://127.0.0.1:{named_port(app.name)}/")


def for_instance(skills: list[Skill], base_url: str) -> list[Skill]:
    """An app's skills on the instance serving it now (a parallel shard may get another port)."""
    site = site_of(base_url)
    return [s.model_copy(update={"site": site}) for s in skills]


def learned_lines(name: str, site: str, learned: Learned) -> list[str]:
    """What ``apps learn`` prints for one app: the counts, the skills kept, the skills of an
    earlier learning that are gone (their demonstration changed or was removed), then each
    demonstration that gave no skill and why; one line each."""
    now = {s.signature() for s in learned.kept}
    gone = [s for s in learned.replaced if s.signature() not in now]
    replaced = f" (in place of the {len(learned.replaced)} an earlier learning kept)" if learned.replaced else ""
    return [
        f"{name}: {learned.recorded} demonstrations, {len(learned.skills)} skills learned, "
        f"{len(learned.kept)} kept for {site}{replaced}",
        *(f"  {skill.line(skill.id)}" for skill in learned.kept),
        *(
            f"  gone: {s.id} (learned from {', '.join(Path(x).name for x in s.sources)}, changed or removed)"
            for s in gone
        ),
        *(f"  no skill from {demo}: {why}" for demo, why in learned.no_skill.items()),
    ]
