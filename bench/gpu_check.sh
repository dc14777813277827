#!/usr/bin/env bash
# GPU check, offline (nothing is downloaded), in one call of at most ~540 s on one H200. Random-weight models of
# the real configurations (scripts/tiny_models.py; weights drawn on the GPU in bf16) through the real pipeline
# (scripts/embed_retrieve.py, scripts/rerank.py, presets on), on synthetic data of the benchmarks' shapes:
# MIPR (800x800 JPEG photos, Chinese titles) and M2KR-shaped items (1024x2000 PNG web-page screenshots with
# ~500-token passages; photo queries) in MIPR's file layout. In order of value, each step bounded by `timeout`
# and by what is left of BUDGET, so the call ends in time whatever a step does:
#   0. pixel values sent as one frame of bytes and normalised on the GPU equal the processor's (pixels_on_device.py);
#   1. Qwen3-VL-Embedding-2B: items/s embedding MIPR corpus and queries, then M2KR-shaped ones;
#   2. PreFLMR ViT-G: passages/s and queries/s of its encoders (the real layout from transformers' parts), then
#      exact MaxSim top-100 over 47,318 packed passages (mmrhub/retrieve/maxsim.py); and the `--preset preflmr`
#      pipeline where scripts/tiny_models.py has build_preflmr;
#   3. Qwen3-VL-Reranker-2B: pairs/s over 50 candidates a query;
#   4. the CPU feed (bench/feed_cpu.py), then the 8B embedder and reranker, then exact top-k TFLOP/s, if time is left.
# Each rate is printed beside the estimate of bench/flop_model.py for the exact shapes run, with the GPU's mean
# utilisation (nvidia-smi every 100 ms) and torch.cuda.max_memory_allocated. A step fails on NaN or constant
# vectors or scores. Only $OUT comes back: gpu_check.log and summary.json (every figure, estimate, step status and
# the versions); everything else is under $WORK.
#
# The lent machine's image lacks `datasets`: run `bash bench/gpu_wheels.sh` here first and carry .whl/ (under
# 1 MB); this script installs those wheels into $SITE when `import datasets` fails there. It runs on the image's
# transformers 5.17 and sentence-transformers 6.0.1 (see bench/gpu_wheels.sh).
#
#   bench/gpu_check.sh       env: BUDGET=540 OUT=bench/out/gpu WORK=/tmp/mmrhub-gpu-check PYTHON=python3
#                                 CORPUS=2048 QUERIES=256 M2KR_CORPUS=256 M2KR_QUERIES=64 BATCH=32 M2KR_BATCH=16
#                                 RERANK_QUERIES=16 RERANK_BATCH=16 WORKERS=<cores - 1> LATER="8b"
#                                 PARTS="pixels embed preflmr rerank feed later topk" (the steps run, in this order;
#                                 e.g. PARTS="rerank later" measures the rerankers and the 8B pair alone)
#   SMOKE=1 bench/gpu_check.sh   the same steps on CPU with the tiny layout and a few items (a check of this
#                                script where no GPU is; its figures mean nothing)
set -uo pipefail
cd "$(dirname "$0")/.."
SMOKE=${SMOKE:-0}
if [ "$SMOKE" = 1 ]; then
  DEVICE=cpu FIRST=tiny LATER=${LATER:-} CORPUS=${CORPUS:-48} QUERIES=${QUERIES:-8} M2KR_CORPUS=${M2KR_CORPUS:-8}
  M2KR_QUERIES=${M2KR_QUERIES:-4} RERANK_QUERIES=${RERANK_QUERIES:-1} BATCH=${BATCH:-8} M2KR_BATCH=${M2KR_BATCH:-4}
  RERANK_BATCH=${RERANK_BATCH:-8} FEED_ITEMS=${FEED_ITEMS:-4} BUDGET=${BUDGET:-900} WORKERS=${WORKERS:-1}
  PREFLMR_ARGS="--smoke --passage-batch 8 --query-batch 4 --maxsim-queries 2" PIXELS="--max-pixels 65536"
  PREFLMR_SIZE=tiny PREFLMR_PASSAGES=${PREFLMR_PASSAGES:-32} PREFLMR_QUERIES=${PREFLMR_QUERIES:-8}
fi
PREFLMR_SIZE=${PREFLMR_SIZE:-vit-g} PREFLMR_PASSAGES=${PREFLMR_PASSAGES:-4096} PREFLMR_QUERIES=${PREFLMR_QUERIES:-512}
PREFLMR_ARGS=${PREFLMR_ARGS:-} PIXELS=${PIXELS:-}  # the preset's image budget, unless smoke
DEVICE=${DEVICE:-cuda} FIRST=${FIRST:-2b} LATER=${LATER-8b} BUDGET=${BUDGET:-540}
PARTS=${PARTS:-pixels embed preflmr rerank feed later topk}
for PART in $PARTS; do
  case " pixels embed preflmr rerank feed later topk " in *" $PART "*) ;; *)
    echo "gpu_check: PARTS names $PART; expected some of: pixels embed preflmr rerank feed later topk"; exit 2 ;;
  esac
done
part() { case " $PARTS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }  # whether PARTS names this part
CORPUS=${CORPUS:-2048} QUERIES=${QUERIES:-256} M2KR_CORPUS=${M2KR_CORPUS:-256} M2KR_QUERIES=${M2KR_QUERIES:-64}
BATCH=${BATCH:-32} M2KR_BATCH=${M2KR_BATCH:-16} RERANK_QUERIES=${RERANK_QUERIES:-16} RERANK_BATCH=${RERANK_BATCH:-16}
PYTHON=${PYTHON:-python3} OUT=${OUT:-bench/out/gpu} WORK=${WORK:-/tmp/mmrhub-gpu-check} SITE=${SITE:-/tmp/site}
WHEELS=${WHEELS:-.whl}
CORES=$("$PYTHON" -c "import os; print(len(os.sched_getaffinity(0)))")
WORKERS=${WORKERS:-$(( CORES > 1 ? CORES - 1 : 1 ))} FEED_ITEMS=${FEED_ITEMS:-$(( WORKERS * 4 ))}
START=$(date +%s)
RESERVE=15  # seconds kept for the summary
mkdir -p "$OUT"
rm -rf "$WORK"
mkdir -p "$WORK"
exec > >(tee "$OUT/gpu_check.log") 2>&1
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HOME="$WORK/hf" TOKENIZERS_PARALLELISM=false
export PYTHONUNBUFFERED=1 SUMMARY="$WORK/summary.jsonl" STEPS="$WORK/steps.jsonl"
: > "$SUMMARY"
: > "$STEPS"

# Into $SITE: the carried wheels where `datasets` is missing, and this checkout (not editable: its package maps
# data/ and metrics/ into mmrhub) unless this interpreter already runs it from here (an editable install).
INSTALL=()
if ! "$PYTHON" -c "import datasets" 2>/dev/null; then
  compgen -G "$WHEELS/*.whl" > /dev/null \
    || { echo "gpu_check: no datasets here and no $WHEELS/ to install it from (bash bench/gpu_wheels.sh; carry .whl)"; exit 2; }
  INSTALL=("$WHEELS"/*.whl)
fi
HERE=$("$PYTHON" -c "import mmrhub.data, os; print(os.path.dirname(os.path.dirname(mmrhub.__file__)))" 2>/dev/null || true)
[ "$HERE" = "$PWD" ] || INSTALL+=(.)
rm -rf "$SITE"
if [ ${#INSTALL[@]} -gt 0 ]; then
  "$PYTHON" -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --target "$SITE" "${INSTALL[@]}" \
    || { echo "gpu_check: could not install ${INSTALL[*]} into $SITE"; exit 2; }
fi
export PYTHONPATH="$SITE:$PWD/scripts${PYTHONPATH:+:$PYTHONPATH}"
ENVIRONMENT=$("$PYTHON" - <<'EOF'
import json, platform
import torch, transformers, sentence_transformers, datasets, torchvision
print(json.dumps({"python": platform.python_version(), "torch": torch.__version__, "torchvision": torchvision.__version__,
                  "transformers": transformers.__version__, "sentence_transformers": sentence_transformers.__version__,
                  "datasets": datasets.__version__, "cuda": torch.cuda.is_available(),
                  "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}))
EOF
) || { echo "gpu_check: needs torch, torchvision, transformers, sentence-transformers and datasets"; exit 2; }
export ENVIRONMENT
echo "$ENVIRONMENT"
if [ "$DEVICE" = cuda ]; then
  "$PYTHON" -c "import torch; assert torch.cuda.is_available()" || { echo "gpu_check: no CUDA device (SMOKE=1 runs on CPU)"; exit 2; }
  nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits -lms 100 > "$WORK/util.csv" &
  SMI=$!
  trap 'kill $SMI 2>/dev/null' EXIT
else
  : > "$WORK/util.csv"
fi

# step NAME LIMIT COMMAND...: runs COMMAND under `timeout` for at most LIMIT s and what is left of BUDGET (less
# the summary's reserve), records ok / failed / timed out / skipped, returns non-zero unless ok.
step() {
  local name=$1 limit=$2 begun status rc
  shift 2
  local left=$(( BUDGET - RESERVE - ($(date +%s) - START) ))
  if (( left < 20 )); then
    echo "== $name: skipped (${left} s of the budget left)"
    echo "{\"step\": \"$name\", \"status\": \"skipped\", \"seconds\": 0}" >> "$STEPS"
    return 1
  fi
  (( limit > left )) && limit=$left
  echo "== $name (at most $limit s; $(( $(date +%s) - START )) s so far) =="
  begun=$(date +%s)
  timeout -k 5 "$limit" "$@"
  rc=$?
  case $rc in 0) status=ok ;; 124|137) status="timed out" ;; *) status=failed ;; esac
  echo "{\"step\": \"$name\", \"status\": \"$status\", \"seconds\": $(( $(date +%s) - begun ))}" >> "$STEPS"
  [ "$status" = ok ] || echo "== $name: $status (exit $rc)"
  return $rc
}
HELPER=("$PYTHON" bench/gpu_check.py)
quiet() { grep -v "it/s]\|item/s]\|pair/s]\|Writing model\|Loading weights\|Generating"; }

embed() {  # SIZE KIND DATA BATCH: embed + exact top-50, the corpus cached for the vectors check
  local size=$1 kind=$2 data=$3 batch=$4 tag="$1-$2"
  step "embed $size $kind" 200 "$PYTHON" scripts/embed_retrieve.py mipr --data-dir "$data" \
    --model "$WORK/models-$size/Qwen3-VL-Embedding-$size-random" --preset qwen3-vl-embedding --device "$DEVICE" $PIXELS \
    --batch-size "$batch" --num-workers "$WORKERS" --cache-dir "$WORK/cache-$tag" --no-eval --top-k 50 \
    --output "$WORK/run-$tag.json" --stats-json "$WORK/stats-$tag.json" 2> >(quiet >&2) || return 1
  "${HELPER[@]}" phase "embed $size $kind" "$WORK/stats-$tag.json" "$WORK/util.csv"
  step "vectors $size $kind" 60 "${HELPER[@]}" vectors "$WORK/run-$tag.json" --cache-dir "$WORK/cache-$tag"
}

rerank() {  # SIZE
  local size=$1
  step "rerank $size mipr" 200 "$PYTHON" scripts/rerank.py mipr --data-dir "$WORK/rerank" \
    --candidates "$WORK/candidates.json" --model "$WORK/models-$size/Qwen3-VL-Reranker-$size-random" \
    --preset qwen3-vl-reranker --device "$DEVICE" $PIXELS --batch-size "$RERANK_BATCH" --num-workers "$WORKERS" --no-cache \
    --no-eval --output "$WORK/rerank-$size.json" --stats-json "$WORK/stats-rerank-$size.json" 2> >(quiet >&2) || return 1
  "${HELPER[@]}" phase "rerank $size mipr" "$WORK/stats-rerank-$size.json" "$WORK/util.csv"
  step "scores rerank $size" 60 "${HELPER[@]}" vectors "$WORK/rerank-$size.json"
}

step "data" 90 "${HELPER[@]}" data "$WORK" --corpus "$CORPUS" --queries "$QUERIES" --m2kr-corpus "$M2KR_CORPUS" \
  --m2kr-queries "$M2KR_QUERIES" --rerank-queries "$RERANK_QUERIES"

# The workers send one frame of bytes, normalised on the device (model_inputs.Compact): the processor's values?
part pixels && step "pixels normalised on the device" 60 "$PYTHON" bench/pixels_on_device.py --device "$DEVICE"

# 1. The 2B embedder on MIPR, then M2KR-shaped items.
if part embed && step "build $FIRST embedder" 150 "${HELPER[@]}" models "$FIRST" "$WORK/models-$FIRST" --which embedding --device "$DEVICE"; then
  embed "$FIRST" mipr "$WORK/mipr" "$BATCH"
  embed "$FIRST" m2kr "$WORK/m2kr" "$M2KR_BATCH"
  rm -rf "$WORK/models-$FIRST/Qwen3-VL-Embedding-$FIRST-random"
fi

# 2. PreFLMR ViT-G: its encoders, MaxSim over 47,318 passages, and the pipeline once the preset exists.
# shellcheck disable=SC2086
part preflmr && step "preflmr $PREFLMR_SIZE encoders + maxsim" 150 "${HELPER[@]}" preflmr --device "$DEVICE" $PREFLMR_ARGS
# The pipeline itself (`--preset preflmr`: workers, packed corpus, exact MaxSim) on synthetic M2KR of the real layout.
if part preflmr && step "build preflmr $PREFLMR_SIZE + m2kr data" 150 "${HELPER[@]}" preflmr-setup "$WORK" --size "$PREFLMR_SIZE" \
  --device "$DEVICE" --passages "$PREFLMR_PASSAGES" --queries "$PREFLMR_QUERIES" 2> >(quiet >&2); then
  if step "preflmr $PREFLMR_SIZE m2kr pipeline" 150 "$PYTHON" scripts/embed_retrieve.py m2kr --data-dir "$WORK/m2kr-real" \
    --model "$WORK/preflmr" --preset preflmr --image-processor "$WORK/preflmr/clip-image-processor" --device "$DEVICE" \
    --num-workers "$WORKERS" --no-cache --no-eval --top-k 100 --output "$WORK/run-preflmr.json" \
    --stats-json "$WORK/stats-preflmr.json" 2> >(quiet >&2); then
    "${HELPER[@]}" phase "preflmr $PREFLMR_SIZE m2kr" "$WORK/stats-preflmr.json" "$WORK/util.csv"
    step "scores preflmr" 60 "${HELPER[@]}" vectors "$WORK/run-preflmr.json"
  fi
  rm -rf "$WORK/preflmr"
fi

# 3. The 2B reranker.
if part rerank && step "build $FIRST reranker" 150 "${HELPER[@]}" models "$FIRST" "$WORK/models-$FIRST" --which reranker --device "$DEVICE"; then
  rerank "$FIRST"
  rm -rf "$WORK/models-$FIRST"
fi

# 4. If time is left: the CPU feed on this host's cores, the 8B pair, exact top-k.
part feed && step "feed (bench/feed_cpu.py, $WORKERS workers)" 90 "$PYTHON" bench/feed_cpu.py --items "$FEED_ITEMS" \
  --workers "$WORKERS" --json "$WORK/feed.json" 2> >(quiet >&2)
part later || LATER=""
for SIZE in $LATER; do
  if step "build $SIZE embedder" 150 "${HELPER[@]}" models "$SIZE" "$WORK/models-$SIZE" --which embedding --device "$DEVICE"; then
    embed "$SIZE" mipr "$WORK/mipr" "$BATCH"
    rm -rf "$WORK/models-$SIZE"
  fi
  if step "build $SIZE reranker" 150 "${HELPER[@]}" models "$SIZE" "$WORK/models-$SIZE" --which reranker --device "$DEVICE"; then
    rerank "$SIZE"
    rm -rf "$WORK/models-$SIZE"
  fi
done
if [ "$DEVICE" = cuda ] && part topk; then
  step "exact top-k, dim 2048" 60 "$PYTHON" bench/topk_gpu.py --dim 2048 --repeat 3
fi

echo "== measured beside bench/flop_model.py ($(( $(date +%s) - START )) s in all) =="
"$PYTHON" bench/gpu_check.py summary "$OUT/summary.json"
RC=$?
sleep 2  # lets tee write the log's last lines before the call returns
exit $RC
