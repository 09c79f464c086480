"""Inside the test suite, real model calls fail unless a test opts in.

tests/conftest.py sets WEBAGENT_BLOCK_REAL_LLM=1 for every test not marked `real_llm`.
Fake servers from webagent.llm.testing register their URLs here (and in the
WEBAGENT_FAKE_ENDPOINTS env var, so CLI subprocesses see them).
"""

from __future__ import annotations

import os

_FAKE_URLS: set[str] = set()


def register_fake_endpoint(base_url: str) -> None:
    _FAKE_URLS.add(base_url.rstrip("/"))
    known = [u for u in os.environ.get("WEBAGENT_FAKE_ENDPOINTS", "").split(",") if u]
    os.environ["WEBAGENT_FAKE_ENDPOINTS"] = ",".join(sorted(set(known) | {base_url.rstrip("/")}))


def _blocked() -> bool:
    return os.environ.get("WEBAGENT_BLOCK_REAL_LLM") == "1"


def check_endpoint_allowed(base_url: str) -> None:
    if not _blocked():
        return
    url = base_url.rstrip("/")
    env_fakes = set(os.environ.get("WEBAGENT_FAKE_ENDPOINTS", "").split(","))
    if url not in _FAKE_URLS and url not in env_fakes:
        raise RuntimeError(
            f"real model call to {url} blocked inside the test suite; "
            "use webagent.llm.testing fakes or mark the test @pytest.mark.real_llm"
        )


def check_local_model_allowed() -> None:
    if _blocked():
        raise RuntimeError(
            "starting the embedded model is blocked inside the test suite; mark the test @pytest.mark.real_llm"
        )
