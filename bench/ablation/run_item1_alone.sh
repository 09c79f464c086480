#!/usr/bin/env bash
# Issue 14's MiniWoB++ ablation, variant "item 1 alone": the typed action space
# (item1_alone.patch) on the commit before the change (c2382cd), with that commit's page
# rendering (simplified HTML), prompt, result wording and no worked examples.
#
#   bench/ablation/run_item1_alone.sh [OUT [WORKTREE]]
#
# OUT: results folder (default runs/ablation-item1; resumed when it holds the same
# configuration, so give each variant its own folder). WORKTREE: where the c2382cd checkout
# goes (default: a temporary folder, removed at the end). The model is Qwen2.5-Coder-0.5B:
# $GGUF, else ${WEBAGENT_MODELS:-${WEBAGENT_HOME:-~/.cache/webagent}/models}/qwen2.5-coder-0.5b.gguf,
# else pulled with `webagent models pull` (this repository's code). For a smoke test the
# run can be shrunk: TASKS, EPISODES, MAX_STEPS, GGUF. ABLATION_PATCH=none runs the before
# commit as it is (the "before" variant, same flags): give it its own OUT and WORKTREE.
set -euo pipefail

BEFORE=c2382cd
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(git -C "$HERE" rev-parse --show-toplevel)
PY=${PYTHON:-$REPO/.venv/bin/python}
PATCH=${ABLATION_PATCH:-$HERE/item1_alone.patch}
OUT=${1:-runs/ablation-item1}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TASKS=${TASKS:-click-button,enter-text,login-user,choose-list,click-checkboxes,book-flight}
EPISODES=${EPISODES:-3}
MAX_STEPS=${MAX_STEPS:-6}
MODEL=qwen2.5-coder-0.5b

# The model file.
if [ -z "${GGUF:-}" ]; then
    GGUF=${WEBAGENT_MODELS:-${WEBAGENT_HOME:-$HOME/.cache/webagent}/models}/$MODEL.gguf
    if [ ! -f "$GGUF" ]; then
        GGUF=$(cd "$REPO" && env -u PYTHONPATH "$PY" -m webagent.cli models pull "$MODEL" | tail -n 1)
    fi
fi
[ -f "$GGUF" ] || { echo "no GGUF file at $GGUF" >&2; exit 1; }

# The checkout of the before commit, with the patch.
if [ -n "${2:-}" ]; then
    WT=$2
    CLEANUP=
else
    WT=$(mktemp -d "${TMPDIR:-/tmp}/ablation-item1.XXXXXX")/webagent
    CLEANUP=$WT
fi
WT=$(realpath -m "$WT")
if [ ! -e "$WT/.git" ]; then
    git -C "$REPO" worktree add --detach "$WT" "$BEFORE" >/dev/null
fi
if [ -n "$CLEANUP" ]; then
    trap 'git -C "$REPO" worktree remove --force "$CLEANUP" >/dev/null 2>&1 || true; rmdir "$(dirname "$CLEANUP")" 2>/dev/null || true' EXIT
fi
[ "$(git -C "$WT" rev-parse HEAD)" = "$(git -C "$REPO" rev-parse "$BEFORE^{commit}")" ] \
    || { echo "$WT is not a checkout of $BEFORE" >&2; exit 1; }
if [ "$PATCH" = none ]; then
    [ -z "$(git -C "$WT" status --porcelain --untracked-files=no)" ] \
        || { echo "$WT has changes; the before variant needs a clean checkout of $BEFORE" >&2; exit 1; }
elif git -C "$WT" apply --reverse --check "$PATCH" 2>/dev/null; then
    echo "patch already applied in $WT" >&2
else
    git -C "$WT" apply "$PATCH"
fi

# The repository's venv has this repository installed in editable mode, and its finder maps
# the prompts package (webagent_prompts) to this repository's prompts/: put the checkout's
# own packages first, prompts included, and check that they are the ones imported.
SHIM=$WT/.ablation-path
mkdir -p "$SHIM"
ln -sfn "$WT/prompts" "$SHIM/webagent_prompts"
export PYTHONPATH=$WT:$SHIM
(cd "$WT" && "$PY" - "$WT" <<'EOF'
import sys
from pathlib import Path
import webagent, webagent_prompts
wt = Path(sys.argv[1]).resolve()
for module in (webagent, webagent_prompts):
    where = Path(module.__file__).resolve()
    if wt not in where.parents:
        sys.exit(f"{module.__name__} comes from {where}, not from the checkout {wt}")
EOF
)

echo "$BEFORE + patch $(basename "$PATCH") in $WT; model $GGUF; results $OUT" >&2

# The run: no persistent cache, so every step is a real model call (seconds per step mean
# something, and a rerun does not replay old replies).
(cd "$WT" && "$PY" -m webagent.cli miniwob --tasks "$TASKS" --episodes "$EPISODES" --seed 0 \
    --max-steps "$MAX_STEPS" --out "$OUT" --gguf "$GGUF" --model-concurrency 1 --no-cache)

(cd "$REPO" && env -u PYTHONPATH "$PY" bench/agent_small_models.py --from "$OUT" --target 0)
