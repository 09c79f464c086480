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

# name -> pip requirements (pinned). aiohttp is for the shared runner's http use.
declare -A PINS=(
  [browser-use]="browser-use==0.13.14"
  [agentlab]="agentlab==0.4.2 browsergym-core==0.14.3 browsergym-miniwob==0.14.3 miniwob==1.1.0"
)

install_one() {
  local name="$1" venv="$HERE/.venv-$1" reqs="${PINS[$1]}"
  local stamp="$venv/.installed-$(echo "$reqs" | cksum | cut -d' ' -f1)"
  if [ -f "$stamp" ]; then echo "$name: up to date ($venv)"; return; fi
  echo "$name: installing $reqs into $venv"
  [ -x "$venv/bin/python" ] || "$PYTHON" -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip
  # shellcheck disable=SC2086
  "$venv/bin/pip" install --quiet $reqs
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
