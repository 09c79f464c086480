"""Tests are offline and isolated: a private WEBAGENT_HOME, and real model calls fail
unless a test is marked `real_llm`."""

import pytest

from webagent.llm.registry import models_dir

# The registry's models stay where `make setup` pulled them (the user's $WEBAGENT_HOME/models):
# real_llm tests use them without a download per test.
_USER_MODELS = str(models_dir())


@pytest.fixture(autouse=True)
def _isolate(request, tmp_path, monkeypatch):
    monkeypatch.setenv("WEBAGENT_HOME", str(tmp_path / "webagent-home"))
    monkeypatch.setenv("WEBAGENT_MODELS", _USER_MODELS)
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "WEBAGENT_MODEL"):
        monkeypatch.delenv(var, raising=False)
    if request.node.get_closest_marker("real_llm") is None:
        monkeypatch.setenv("WEBAGENT_BLOCK_REAL_LLM", "1")
    else:
        monkeypatch.delenv("WEBAGENT_BLOCK_REAL_LLM", raising=False)
