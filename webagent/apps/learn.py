"""``webagent apps learn``: an app's skills from its demonstrations alone (``demos.json``).

Each demonstration is done on a fresh instance by its gold path, in the teach browser
(``webagent.agent.teach``), exactly as a person showing the task would be recorded: the
recording is a run's trace, cut into skills (``webagent.skills.learn``) and kept for the
app's site (``127.0.0.1`` on the app's own port, ``instance.stable_port``). The evaluation
tasks' gold paths are never read here."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from webagent.apps.gold import answer_next_dialog, do_step
from webagent.apps.instance import AppInstance, named_port, stable_port
from webagent.apps.spec import App, GoldStep
from webagent.errors import UserError, first_line
from webagent.skills.learn import from_recording, merge, site_of
from webagent.skills.model import Skill
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


async def learn_app(app: App, out: Path, say: Callable[[str], None] = print) -> tuple[int, list[Skill], list[Skill]]:
    """Record ``app``'s demonstrations under ``out``, learn their skills and keep them for the
    app's site: (demonstrations recorded, skills learned, skills kept for the site)."""
    from webagent.skills import store

    folders = await record_demos(app, out, say=say)
    # The skills of the recordings, merged (recordings with no skill in them are skipped).
    learned = merge([s for folder in folders for s in skills_of(folder)])
    skills = [s.model_copy(update={"site": app_site(app)}) for s in learned]
    return len(folders), skills, store.add(skills)


def app_site(app: App) -> str:
    """The site an app's skills are kept for: 127.0.0.1 on the port named after the app (the one
    it is served on unless that is taken; ``for_instance`` moves them to the port it got)."""
    return site_of(f"http://127.0.0.1:{named_port(app.name)}/")


def for_instance(skills: list[Skill], base_url: str) -> list[Skill]:
    """An app's skills on the instance serving it now (a parallel shard may get another port)."""
    site = site_of(base_url)
    return [s.model_copy(update={"site": site}) for s in skills]
