"""``webagent skills run``: one skill with new values, without a model.

The skill is checked as a model's SKILL answer is (``live_action.parse_live_action``): the
page must offer it (its start page, or any page of its site when that page has a stable
address), every parameter given and none unknown, a select's value one of the live
options. A misfit is one line and nothing is done; then each step runs as in a run
(``skills.run.run_skill``), a line each, and a step that cannot be done stops it, saying
which and why. A password given as an argument is typed and never printed or written."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from webagent.errors import UserError
from webagent.llm.client import Reply
from webagent.skills import store
from webagent.skills.learn import site_of
from webagent.skills.offer import offers, start_on
from webagent.skills.run import run_skill
from webagent.web.agent_view import build_view
from webagent.web.live_action import Choices, parse_live_action


async def run_direct(
    site: str, skill_id: str, args: dict[str, str], *, url: str | None, headed: bool, say: Callable[[str], None]
) -> bool:
    """Run the skill; True when every step was done."""
    from webagent.browser import BrowserSession

    skill = next((s for s in store.load(site) if s.id == skill_id), None)
    if skill is None:
        raise UserError(missing(site, skill_id, store.every_skill()))
    start = url or start_on(skill, f"{urlsplit(skill.start.url).scheme or 'http'}://{site}/")
    async with BrowserSession(headed=headed, allowed_domains=[urlsplit(start).hostname or ""]) as browser:
        opened = await browser.open(start)
        if not opened.ok:
            raise UserError(f"cannot open {start}: {opened.error}")
        obs = await browser.observe()
        controls = build_view(obs.cleaned_html).controls
        offer = next((o for o in offers([skill], obs, controls) if o.skill.id == skill.id), None)
        if offer is None:
            raise UserError(not_offered(skill, obs.url))
        choices = Choices(controls, skills={offer.label: {p.name: offer.options.get(p.name, ()) for p in skill.params}})
        reply = Reply(text="", data={"operation": "SKILL", "element_id": offer.label, "args": args})
        action, problem = parse_live_action(reply, choices)
        if action is None:
            raise UserError(f"skill {skill_id}: {problem}")
        secrets = {v for p in skill.params if p.kind == "secret" and (v := action.args.get(p.name))}
        ran = await run_skill(browser, obs, offer, action.args)
        for k, step in enumerate(ran.steps, 1):
            value = step.value or ""
            shown = "********" if value in secrets else value
            what = " ".join(x for x in (step.op, step.element or "", f'"{shown}"' if shown else "") if x)
            say(f"{k}. {what} -> {'ok' if step.ok else 'failed: ' + (step.error or '')}")
        if not ran.result.ok:
            say(f"stopped: {ran.result.error}")
            return False
        page = await browser.observe()
        say(f'done: now on {page.url} ("{page.title}")')
        return True


def _differs(site: str, other: str) -> str:
    """ "the port differs" (the same host), else "the host and port differ"."""
    same_host = site.rsplit(":", 1)[0] == other.rsplit(":", 1)[0]
    return "the port differs" if same_host else "the host and port differ"


def not_offered(skill, url: str) -> str:
    """Why ``skill`` cannot run on ``url``: the page is on another site (skills are kept per
    host and port: naming both), else it is not the skill's start page."""
    here = site_of(url)
    if here != skill.site:
        return (
            f"skill {skill.id} is kept for {skill.site}, and {url} is on {here}: "
            f"{_differs(skill.site, here)} (skills are kept per host and port)"
        )
    return f"skill {skill.id} does not start on {url} (it starts on {skill.start.pattern})"


def missing(site: str, skill_id: str, kept: list) -> str:
    """Why no skill ``skill_id`` is kept for ``site``, naming the sites that keep one of that id."""
    elsewhere = sorted({s.site for s in kept if s.id == skill_id and s.site != site})
    if not elsewhere:
        return f"no skill {skill_id!r} for {site} (see `webagent skills list`)"
    return (
        f"no skill {skill_id!r} for {site}; it is kept for {', '.join(elsewhere)}: "
        f"{_differs(elsewhere[0], site)} (skills are kept per host and port)"
    )
