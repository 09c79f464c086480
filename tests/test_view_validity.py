"""The view shows a field as invalid the way the browser shows it to a person: with the
browser's own validation message, and only once the person edited the field or a submit
was blocked (a required field nobody touched yet is "required", not "invalid")."""

import pytest
import pytest_asyncio
from browser_support import WEB_PAGES, one_id, open_page, requires_chromium

from webagent.browser import Action, BrowserSession
from webagent.demo_site import serve_directory
from webagent.web.agent_view import build_view

pytestmark = [pytest.mark.browser, requires_chromium, pytest.mark.asyncio(loop_scope="module")]


@pytest.fixture(scope="module")
def site():
    url, stop = serve_directory(WEB_PAGES)
    yield url
    stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser():
    async with BrowserSession(settle_timeout_s=2.0) as b:
        yield b


def _line(obs, name: str) -> str:
    [line] = [ln for ln in build_view(obs.cleaned_html).render().splitlines() if f'"{name}"' in ln]
    return line


async def test_a_blocked_submit_shows_each_invalid_field_with_the_browsers_message(browser, site):
    obs = await open_page(browser, site + "own/validation.html")
    assert _line(obs, "Full name").endswith("empty required")
    assert "invalid" not in _line(obs, "E-mail")

    typed = await browser.act(Action(op="TYPE", element_id=one_id(obs, "//input[@id='mail']"), value="ann@"), obs)
    assert typed.ok
    obs = await browser.observe()
    sent = await browser.act(Action(op="CLICK", element_id=one_id(obs, "//button")), obs)
    assert sent.ok
    obs = await browser.observe()
    assert obs.url.endswith("validation.html")  # the browser blocked the submit
    name, mail = _line(obs, "Full name"), _line(obs, "E-mail")
    assert name.startswith("[") and 'empty required invalid ("' in name, name
    assert 'value="ann@" invalid ("' in mail, mail
    # The messages are the browser's own: the required one and the malformed address differ.
    assert name.split('invalid ("')[1] != mail.split('invalid ("')[1]
