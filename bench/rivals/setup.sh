#!/usr/bin/env bash
# Installs the two rivals, each in its own virtual environment under bench/rivals/
# (their pins differ from webagent's and from each other's), from the package index only.
# No browser is downloaded: the rivals drive Debian's Chromium (/usr/bin/chromium, or
# $WEBAGENT_CHROMIUM). Idempotent: a venv whose stamp matches the pins is left alone.
#
#   bench/rivals/setup.sh                 # both
#   bench/rivals/setup.sh browser-use     # one
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${RIVALS_PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null || PYTHON=python3
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PIP_DISABLE_PIP_VERSION_CHECK=1

# name -> pip requirements (pinned), installed in order, one pip call per group (";").
# AgentLab: torch first, pinned to the CPU build this machine carries (as the main venv does),
# or pip pulls a multi-GB CUDA build; browsergym 0.14.3 needs Python >= 3.12 through
# browsergym-webarena-verified, so 0.14.2 (playwright 1.44) on Python 3.11.
declare -A PINS=(
  [browser-use]="browser-use==0.13.14"
  [agentlab]="torch==2.13.0;agentlab==0.4.2 browsergym==0.14.2 browsergym-core==0.14.2 browsergym-miniwob==0.14.2"
)
declare -A CHECK=(
  [browser-use]="import browser_use, browser_use.dom.service"
  [agentlab]="import agentlab.agents.generic_agent, browsergym.core, browsergym.miniwob, browsergym.utils.obs"
)

install_one() {
  local name="$1" venv="$HERE/.venv-$1" reqs="${PINS[$1]}"
  local stamp="$venv/.installed-$(echo "$reqs" | cksum | cut -d' ' -f1)"
  if [ -f "$stamp" ]; then echo "$name: up to date ($venv)"; return; fi
  echo "$name: installing $reqs into $venv"
  [ -x "$venv/bin/python" ] || "$PYTHON" -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip > "$venv/pip.log" 2>&1 || true
  local group
  IFS=';' read -ra groups <<< "$reqs"
  for group in "${groups[@]}"; do
    # shellcheck disable=SC2086
    if ! "$venv/bin/pip" install --quiet $group > "$venv/pip.log" 2>&1; then
      grep -v "^WARNING: Location" "$venv/pip.log" | tail -20 >&2
      echo "$name: 'pip install $group' failed (log: $venv/pip.log)" >&2
      return 1
    fi
  done
  "$venv/bin/python" -c "${CHECK[$name]}" || { echo "$name: installed but does not import" >&2; return 1; }
  if [ "$name" = agentlab ]; then
    # BrowserGym launches Playwright's Chromium in places that take no executable_path (its chat
    # window): give this venv a Playwright browsers folder whose Chromium is Debian's.
    local chromium="${WEBAGENT_CHROMIUM:-/usr/bin/chromium}" rev
    rev=$("$venv/bin/python" -c "import json,os,playwright; p=os.path.join(os.path.dirname(playwright.__file__), 'driver/package/browsers.json'); print([b['revision'] for b in json.load(open(p))['browsers'] if b['name'] == 'chromium'][0])")
    mkdir -p "$venv/ms-playwright/chromium-$rev/chrome-linux"
    ln -sf "$chromium" "$venv/ms-playwright/chromium-$rev/chrome-linux/chrome"
  fi
  rm -f "$venv"/.installed-*
  touch "$stamp"
  "$venv/bin/pip" freeze > "$venv/freeze.txt"
  echo "$name: ok ($(grep -iE '^(browser-use|agentlab|browsergym-core|playwright)==' "$venv/freeze.txt" | tr '\n' ' '))"
}

names=("$@"); [ ${#names[@]} -gt 0 ] || names=(browser-use agentlab)
for n in "${names[@]}"; do
  [ -n "${PINS[$n]+x}" ] || { echo "unknown rival $n (browser-use, agentlab)" >&2; exit 2; }
  install_one "$n"
done
