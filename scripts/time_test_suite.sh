#!/usr/bin/env bash
# Times the README's test command as a newcomer's first run: a fresh clone of the committed tree (no __pycache__),
# ranx's numba cache empty (its functions compiled on first use), a fresh HF_HOME. Run it with the venv the README's
# second command built active; extra arguments go to pytest (e.g. --durations=30). Prints pytest's summary line,
# the wall time and the load average.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/clone"
cd "$work/clone"  # python -m puts this folder first on the path: the clone's modules, not the editable install's
export NUMBA_CACHE_DIR="$work/numba" HF_HOME="$work/hf"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
python -m pytest -n auto -q -p no:cacheprovider "$@" 2>&1 | tail -n 40
echo "wall: $(( $(date +%s) - start )) s; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
