#!/usr/bin/env bash
# Times the README's second command as a newcomer runs it: a fresh clone of the committed tree, a fresh venv
# installed as the README says (ranx's numba cache and every __pycache__ empty), then the tests, first run. Prints
# the install time, pytest's summary line, the test command's wall time and the load average. Extra arguments go
# to pytest (e.g. --durations=30).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/clone"
cd "$work/clone"
start=$(date +%s)
python3 -m venv .venv && . .venv/bin/activate
pip install -q --disable-pip-version-check torch==2.13.0
pip install -q --disable-pip-version-check -e ".[test,retrieve,faiss,mteb,report,space]"
echo "install: $(( $(date +%s) - start )) s"
export HF_HOME="$work/hf"
echo "load before the tests: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
python -m pytest -n auto -q -p no:cacheprovider "$@" 2>&1 | tail -n 45
echo "tests: $(( $(date +%s) - start )) s; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
