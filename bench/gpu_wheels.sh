#!/usr/bin/env bash
# The wheels bench/gpu_check.sh carries to the lent GPU machine, downloaded into .whl/ (git ignores it; pass it as
# `carry: [".whl"]`). That image has Python 3.12, torch 2.11, transformers 5.17, sentence-transformers 6.0.1,
# torchvision 0.26, pyarrow 25, pandas 3.0, xxhash, fsspec 2026.7, huggingface_hub 1.33, tokenizers 0.23 and no
# network. It lacks `datasets` (the builders the pipeline reads the data with) and two of datasets' requirements,
# dill and multiprocess; every other requirement of datasets 5.2 is there at a version it accepts (pyarrow>=24,
# fsspec<=2026.9, huggingface-hub>=1.31, pandas, xxhash, filelock, tqdm, pyyaml). Our code runs on the image's
# transformers 5.17 and sentence-transformers 6.0.1 (`SMOKE=1 bench/gpu_check.sh` in a venv of exactly those
# passes), so they are not carried: transformers 5.24+ would also need huggingface_hub 2.4+ and kernels.
#
#   bash bench/gpu_wheels.sh         # about 0.9 MB; env: PY_VERSION=3.12 WHEELS=.whl (PY_VERSION=3.11 WHEELS=DIR to
#                                     # try the check on a 3.11 venv of the image's versions: WHEELS=DIR SMOKE=1 ...)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3} PY_VERSION=${PY_VERSION:-3.12} WHEELS=${WHEELS:-.whl}
PACKAGES="datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19"
rm -rf "$WHEELS"
mkdir -p "$WHEELS"
for wheel in $PACKAGES; do
  "$PYTHON" -m pip download -q --no-deps --only-binary=:all: --python-version "$PY_VERSION" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$WHEELS" "$wheel"
done
ls -l "$WHEELS"
du -sh "$WHEELS"
