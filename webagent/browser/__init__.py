"""The browser layer: the only code that imports Playwright.

    from webagent.browser import Action, BrowserSession

    async with BrowserSession() as browser:              # session.py
        await browser.open(url)                          # guard: url's host and port only
        obs = await browser.observe()                    # capture.py -> Observation
        # obs.cleaned_html goes to webagent.html.split_snippets as a Mind2Web page
        result = await browser.act(Action(op="CLICK", element_id="57"), obs)  # actions.py
        if result.page_changed: obs = await browser.observe()

Modules: ``session`` (launch/attach, CDP sessions, settling, observe with one retry),
``tabs`` (active tab, new and closed tabs, event lines), ``events`` (dialogs, downloads,
crashes), ``dialogs`` (a confirm or prompt an action raised, held open for the caller), ``intercept`` (the guard inside the browser: every tab's document requests),
``capture`` + ``snapshot`` (CDP DOM snapshots -> raw and cleaned HTML with ids),
``actions`` (CLICK/TYPE/SELECT/SCROLL/GOTO/BACK/DIALOG -> ``ActionResult``, never raising; its
``note`` carries the browser events), ``guard`` (allowed sites with ports, ``redact``),
``models`` (the typed values).
"""

from webagent.browser.guard import REDACTED, NavigationGuard, redact
from webagent.browser.models import Action, ActionResult, ElementRef, Observation, Timings
from webagent.browser.session import BrowserError, BrowserSession, find_chromium

__all__ = [
    "REDACTED",
    "Action",
    "ActionResult",
    "BrowserError",
    "BrowserSession",
    "ElementRef",
    "NavigationGuard",
    "Observation",
    "Timings",
    "find_chromium",
    "redact",
]
