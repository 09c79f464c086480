"""Tests are offline and isolated: a private WEBAGENT_HOME, and real model calls fail
unless a test is marked `real_llm`. The real-model tests share one embedded model server
(the session fixture `embedded_server`), started the first time one of them asks for it.

Browser tests skip, saying why, when no Chromium is usable here (tests/browser_support.py);
with WEBAGENT_REQUIRE_BROWSER=1 (set by .ci/run) such a skip is a failure instead, so a
machine without a browser cannot pass CI by skipping them."""

import os

import pytest

REQUIRE_BROWSER = "WEBAGENT_REQUIRE_BROWSER"
# The user's models folder (where `make test` pulled the test model), kept when
# WEBAGENT_HOME moves to a private folder: a real-model test must not download it again.
MODELS_DIR = os.environ.get("WEBAGENT_MODELS") or os.path.join(
    os.environ.get("WEBAGENT_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "webagent"), "models"
)
# The user's installed apps of the real-app suite (venvs and pristine states), likewise kept:
# installing them is done once per machine, not once per test.
APPS_DIR = os.environ.get("WEBAGENT_APPS") or os.path.join(
    os.environ.get("WEBAGENT_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "webagent"), "apps"
)
# Real-model tests run the fastest model: they show that paths run, not how well.
TEST_MODEL = "smollm2-135m"
NO_BROWSER_REASON = "no usable Chromium here"  # how browser_support.MISSING starts
# The shared server's context per slot and slots: the real-model tests' prompts fit it.
SHARED_N_CTX, SHARED_SLOTS = 4096, 2


@pytest.fixture(autouse=True)
def _isolate(request, tmp_path, monkeypatch):
    monkeypatch.setenv("WEBAGENT_HOME", str(tmp_path / "webagent-home"))
    monkeypatch.setenv("WEBAGENT_MODELS", MODELS_DIR)
    monkeypatch.setenv("WEBAGENT_APPS", APPS_DIR)
    monkeypatch.setenv("WEBAGENT_EMBEDDED", TEST_MODEL)
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "WEBAGENT_MODEL"):
        monkeypatch.delenv(var, raising=False)
    if request.node.get_closest_marker("real_llm") is None:
        monkeypatch.setenv("WEBAGENT_BLOCK_REAL_LLM", "1")
    else:
        monkeypatch.delenv("WEBAGENT_BLOCK_REAL_LLM", raising=False)


@pytest.fixture(scope="session")
def embedded_server(tmp_path_factory):
    """One embedded model server (the test model, through webagent.llm.local.LocalServer) for
    every real-model test that does not test the server's own start or stop; started once."""
    import importlib.util

    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp is not installed (run `make setup`)")
    from webagent.llm.local import LocalServer
    from webagent.llm.registry import ensure

    with pytest.MonkeyPatch.context() as mp:  # the suite's isolation, for a fixture that outlives one test
        mp.setenv("WEBAGENT_HOME", str(tmp_path_factory.mktemp("embedded-server-home")))
        mp.setenv("WEBAGENT_MODELS", MODELS_DIR)
        mp.delenv("WEBAGENT_BLOCK_REAL_LLM", raising=False)
        server = LocalServer(ensure(TEST_MODEL), n_ctx=SHARED_N_CTX, slots=SHARED_SLOTS).start()
    yield server
    server.stop()


@pytest.fixture
def embedded_env(embedded_server):
    """The environment a `webagent` or `mind2web` subprocess needs to use the shared server."""
    return {**os.environ, "OPENAI_BASE_URL": embedded_server.base_url, "WEBAGENT_MODEL": embedded_server.model}


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
