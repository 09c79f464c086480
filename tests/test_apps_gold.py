"""Every task of the suite's apps (webagent/apps/builtin): on a fresh instance, the app's
check is false, Playwright alone (no model, no agent) follows the gold path by role and
accessible name, the check is true, and no page requested a host other than 127.0.0.1.

The apps install once per machine into $WEBAGENT_APPS (the user's folder, kept across test
runs like the models; tests/conftest.py); one instance per app serves all its tasks, reset
before each."""

from __future__ import annotations

import asyncio

import pytest
from browser_support import requires_chromium

from webagent.apps.spec import load_apps

APPS = load_apps()
TASKS = [(app, task) for app in APPS for task in app.tasks]


@pytest.fixture(scope="module")
def loop():
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture(scope="module")
def browser(loop):
    from playwright.async_api import async_playwright

    from webagent.apps.gold import launch_browser

    pw = loop.run_until_complete(async_playwright().start())
    browser = loop.run_until_complete(launch_browser(pw))
    yield browser
    loop.run_until_complete(browser.close())
    loop.run_until_complete(pw.stop())


@pytest.fixture(scope="module")
def instances():
    from webagent.apps.instance import AppInstance

    running: dict[str, AppInstance] = {}

    def get(app):
        if app.name not in running:
            running[app.name] = AppInstance(app).start()
        return running[app.name]

    yield get
    for instance in running.values():
        instance.stop()


def test_the_suite_has_its_apps_and_tasks():
    assert {a.name for a in APPS} >= {"roundup", "oscar", "helpdesk"}
    for app in APPS:
        assert len(app.tasks) >= 12, f"{app.name} has {len(app.tasks)} tasks"
        assert any(t.answer for t in app.tasks), f"{app.name} has no answer task"


@requires_chromium
@pytest.mark.browser
@pytest.mark.parametrize("app,task", TASKS, ids=[t.id for _, t in TASKS])
def test_gold_path_reaches_the_check(app, task, loop, browser, instances):
    from webagent.apps.gold import verify as verify_task

    instance = instances(app)
    verdict = loop.run_until_complete(verify_task(instance, browser, task))
    assert verdict.ok, verdict.line()
    assert verdict.reset_s < 1.0, f"reset took {verdict.reset_s:.2f} s"


# A task done with one thing it did not ask for (a field filled before the last click): the
# check must say no. Seen on the 1.5B: it filled helpdesk's optional "Due on" unasked.
UNASKED = {
    "helpdesk-submit-billing-question": {"op": "type", "role": "textbox", "name": "Due on", "value": "2026-12-23"},
    "roundup-create-issue": {"op": "select", "role": "combobox", "name": "Status", "value": "chatting"},
}


@requires_chromium
@pytest.mark.browser
@pytest.mark.parametrize("task_id", sorted(UNASKED))
def test_a_change_the_task_did_not_ask_for_fails_the_check(task_id, loop, browser, instances):
    from webagent.apps.gold import verify as verify_task
    from webagent.apps.spec import GoldStep

    app, task = next((a, t) for a, t in TASKS if t.id == task_id)
    gold = [*task.gold[:-1], GoldStep(**UNASKED[task_id]), task.gold[-1]]
    verdict = loop.run_until_complete(verify_task(instances(app), browser, task.model_copy(update={"gold": gold})))
    assert not verdict.after and verdict.run.ok, verdict.line()  # every step done, and still not the task


def test_helpdesks_ticket_number_search_lands_on_the_ticket_at_its_own_port(instances):
    """helpdesk's header search redirects a ticket number to the ticket's absolute URL, built
    from the seeded Sites domain (no port): the app sends it to the request's own host and port
    (hdsite/site_host.py; the 1.5B's search for "11" ended on the browser's error page)."""
    import http.cookiejar
    import re
    import urllib.parse
    import urllib.request

    instance = instances(next(a for a in APPS if a.name == "helpdesk"))
    instance.reset()
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = opener.open(instance.url("/login/")).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    form = {"username": "admin", "password": "admin-pass-1", "csrfmiddlewaretoken": token, "next": "/"}
    opener.open(urllib.request.Request(instance.url("/login/"), urllib.parse.urlencode(form).encode()))

    class Keep(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None  # the redirect itself is what this test reads

    keep = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), Keep)
    try:
        keep.open(instance.url("/tickets/?search_type=header&q=11"))
        raise AssertionError("no redirect")
    except urllib.error.HTTPError as redirect:
        assert redirect.code == 302
        assert redirect.headers["Location"] == instance.url("/tickets/11/")
