"""MiniWoB++ episodes driven by the actions module: right actions earn a reward > 0,
wrong ones do not."""

import pytest
import pytest_asyncio
from browser_support import ids, one_id, requires_chromium

from webagent.browser import Action, BrowserSession
from webagent.miniwob import MiniWoBEnv, list_tasks, miniwob_html_dir

pytestmark = [pytest.mark.browser, requires_chromium, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def env():
    async with BrowserSession() as browser, MiniWoBEnv(browser) as env:
        yield env


async def test_task_pages_come_from_the_wheel():
    root = miniwob_html_dir()
    assert (root / "core" / "core.js").is_file()
    assert {"click-button", "enter-text", "book-flight"} <= set(list_tasks())


async def _click_button_ids(env, seed):
    episode = await env.reset("click-button", seed=seed)
    word = episode.utterance.split('"')[1]
    obs = await env.browser.observe()
    right = one_id(obs, f"//button[normalize-space()='{word}']")
    wrong = [i for i in ids(obs, "//div[@id='area']//button") if i != right]
    return episode, obs, right, wrong


async def test_click_button_right_and_wrong(env):
    episode, obs, right, _ = await _click_button_ids(env, seed=11)
    assert episode.utterance.startswith("Click on the")
    status = await env.status()
    assert not status.done
    result = await env.browser.act(Action(op="CLICK", element_id=right), obs)
    assert result.ok, result.error
    status = await env.status()
    assert status.done and status.raw_reward > 0 and status.success

    for seed in range(20, 40):  # a seed whose page has a wrong button to press
        episode, obs, right, wrong = await _click_button_ids(env, seed=seed)
        if wrong:
            break
    assert wrong
    await env.browser.act(Action(op="CLICK", element_id=wrong[0]), obs)
    status = await env.status()
    assert status.done and status.raw_reward <= 0 and not status.success


async def test_same_seed_same_episode(env):
    first = await env.reset("enter-text", seed=5)
    again = await env.reset("enter-text", seed=5)
    assert first.utterance == again.utterance


async def test_enter_text_right_and_wrong(env):
    for value_from_task, expect_success in ((True, True), (False, False)):
        episode = await env.reset("enter-text", seed=7)
        target = episode.utterance.split('"')[1]
        obs = await env.browser.observe()
        field = one_id(obs, "//input[@id='tt']")
        submit = one_id(obs, "//button[@id='subbtn']")
        typed = await env.browser.act(
            Action(op="TYPE", element_id=field, value=target if value_from_task else target + "x"), obs
        )
        assert typed.ok, typed.error
        assert not (await env.status()).done
        clicked = await env.browser.act(Action(op="CLICK", element_id=submit), obs)
        assert clicked.ok, clicked.error
        status = await env.status()
        assert status.done and status.success is expect_success
        assert (status.raw_reward > 0) is expect_success


async def test_episode_time_is_raised(env):
    await env.reset("click-button", seed=1)
    assert await env.browser.page.evaluate("core.EPISODE_MAX_TIME") == int(env.max_time_s * 1000)


async def test_unknown_task_is_a_user_error():
    from webagent.errors import UserError

    with pytest.raises(UserError, match="unknown MiniWoB task"):
        MiniWoBEnv(browser=None).task_url("no-such-task")


@pytest.mark.parametrize("require, outcome", [("", "skipped"), ("1", "error")])  # an error in setup: a failed run
async def test_require_browser_turns_the_skip_into_a_failure(tmp_path, require, outcome):
    """Without Chromium the browser tests skip, and say why; with WEBAGENT_REQUIRE_BROWSER=1
    (set by .ci/run) that skip is a failure, so a CI machine without a browser cannot pass."""
    import asyncio
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "WEBAGENT_CHROMIUM": str(tmp_path / "no-such-chrome"), "WEBAGENT_REQUIRE_BROWSER": require}
    proc = await asyncio.to_thread(
        subprocess.run,
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rsf",
            "-p",
            "no:cacheprovider",
            "tests/test_miniwob_env.py::test_task_pages_come_from_the_wheel",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).parent.parent,
        timeout=120,
    )
    assert f"1 {outcome}" in proc.stdout, proc.stdout[-2000:]
    assert (proc.returncode == 0) is (outcome == "skipped")
    assert "no-such-chrome is not an executable browser" in proc.stdout


async def test_ci_requires_the_browser():
    from pathlib import Path

    script = (Path(__file__).parent.parent / ".ci" / "run").read_text()
    assert "export WEBAGENT_REQUIRE_BROWSER=1" in script
    assert script.index("export WEBAGENT_REQUIRE_BROWSER=1") < script.index("exec make test")
