"""Tests are offline and isolated: a private WEBAGENT_HOME, and real model calls fail
unless a test is marked `real_llm`.

Browser tests skip, saying why, when no Chromium is usable here (tests/browser_support.py);
with WEBAGENT_REQUIRE_BROWSER=1 (set by .ci/run) such a skip is a failure instead, so a
machine without a browser cannot pass CI by skipping them."""

import os

import pytest

REQUIRE_BROWSER = "WEBAGENT_REQUIRE_BROWSER"
# The user's models folder (where `make test` pulled the test model), kept when
# WEBAGENT_HOME moves to a private folder: a real-model test must not download it again.
MODELS_DIR = os.environ.get("WEBAGENT_MODELS") or os.path.join(
    os.environ.get("WEBAGENT_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "webagent"), "models")
# Real-model tests run the fastest model: they show that paths run, not how well.
TEST_MODEL = "smollm2-135m"
NO_BROWSER_REASON = "no usable Chromium here"  # how browser_support.MISSING starts


@pytest.fixture(autouse=True)
def _isolate(request, tmp_path, monkeypatch):
    monkeypatch.setenv("WEBAGENT_HOME", str(tmp_path / "webagent-home"))
    monkeypatch.setenv("WEBAGENT_MODELS", MODELS_DIR)
    monkeypatch.setenv("WEBAGENT_EMBEDDED", TEST_MODEL)
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "WEBAGENT_MODEL"):
        monkeypatch.delenv(var, raising=False)
    if request.node.get_closest_marker("real_llm") is None:
        monkeypatch.setenv("WEBAGENT_BLOCK_REAL_LLM", "1")
    else:
        monkeypatch.delenv("WEBAGENT_BLOCK_REAL_LLM", raising=False)


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr or "")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if os.environ.get(REQUIRE_BROWSER) != "1" or not report.skipped:
        return
    reason = _skip_reason(report)
    if NO_BROWSER_REASON in reason or (item.get_closest_marker("browser") is not None and "Chromium" in reason):
        report.outcome = "failed"
        report.longrepr = f"{REQUIRE_BROWSER}=1, and this browser test would be skipped: {reason}"
