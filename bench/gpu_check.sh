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
#      exact MaxSim top-100 over 47,318 packed passages (mmrhub/retrieve/late_interaction/maxsim.py); and the `--preset preflmr`
#      pipeline where scripts/tiny_models.py has build_preflmr;
#   3. Qwen3-VL-Reranker-2B: pairs/s over 50 candidates a query, each query's prefix shared by its candidates and
#      every pair whole (--no-shared-prefix), on MIPR- and M2KR-shaped pairs, and how far the two paths' scores agree;
#   4. the CPU feed (bench/feed_cpu.py); the 8B embedder on MIPR and M2KR-shaped items; the 8B reranker as the 2B
#      (its first RERANK8B_TOP_N candidates a query); exact top-k TFLOP/s.
#   5. only when PARTS names preflmr-full (a call of its own, BUDGET=570): PreFLMR ViT-G end to end at M2KR's full
#      size (47,318 passages, 6,415 queries) as `mmrhub baseline m2kr --paper` runs it (float32, exact MaxSim).
# Each rate is printed beside the estimate of bench/flop_model.py for the exact shapes run, with the GPU's mean
# utilisation (nvidia-smi every 100 ms) and torch.cuda.max_memory_allocated. A step fails on NaN or constant
# vectors or scores. The check exits 1 when any step failed, timed out or was skipped for the budget, naming them.
# Only $OUT comes back: gpu_check.log and summary.json (every figure, estimate, step status and the versions);
# everything else is under $WORK. The parts fit one call each: PARTS=rerank (~5 min), PARTS=rerank8b (~7 min),
# PARTS=embed8b (~5 min; estimated from the rates measured on 2026-12-04).
#
# The lent machine's image lacks `datasets`: run `bash bench/gpu_wheels.sh` here first and carry .whl/ (under
# 1 MB); this script installs those wheels into $SITE when `import datasets` fails there. It runs on the image's
# transformers 5.17 and sentence-transformers 6.0.1 (see bench/gpu_wheels.sh).
#
#   bench/gpu_check.sh       env: BUDGET=540 OUT=bench/out/gpu WORK=/tmp/mmrhub-gpu-check PYTHON=python3
#                                 CORPUS=2048 QUERIES=256 M2KR_CORPUS=256 M2KR_QUERIES=64 BATCH=32 M2KR_BATCH=16
#                                 RERANK_QUERIES=16 RERANK_M2KR_QUERIES=8 RERANK_BATCH=16 RERANK8B_TOP_N=25
#                                 WORKERS=<cores - 1>
#                                 PARTS="pixels embed preflmr rerank feed embed8b rerank8b topk" (the steps run, in
#                                 this order; e.g. PARTS=rerank8b measures the 8B reranker alone;
#                                 PARTS=preflmr-full BUDGET=570: step 5 alone, FULL_PASSAGES=47318 FULL_QUERIES=6415)
# A step that fails, times out or is skipped for want of budget makes the check exit 1, naming it.
#   SMOKE=1 bench/gpu_check.sh   the same steps on CPU with the tiny layout and a few items (a check of this
#                                script where no GPU is; its figures mean nothing)
set -uo pipefail
cd "$(dirname "$0")/.."
SMOKE=${SMOKE:-0}
if [ "$SMOKE" = 1 ]; then
  DEVICE=cpu FIRST=tiny LATER=${LATER:-tiny} CORPUS=${CORPUS:-48} QUERIES=${QUERIES:-8} M2KR_CORPUS=${M2KR_CORPUS:-8}
  M2KR_QUERIES=${M2KR_QUERIES:-4} RERANK_QUERIES=${RERANK_QUERIES:-1} RERANK_M2KR_QUERIES=${RERANK_M2KR_QUERIES:-1}
  BATCH=${BATCH:-8} M2KR_BATCH=${M2KR_BATCH:-4}
  RERANK_BATCH=${RERANK_BATCH:-8} FEED_ITEMS=${FEED_ITEMS:-4} BUDGET=${BUDGET:-900} WORKERS=${WORKERS:-1}
  PREFLMR_ARGS="--smoke --passage-batch 8 --query-batch 4 --maxsim-queries 2" PIXELS="--max-pixels 65536"
  PREFLMR_SIZE=tiny PREFLMR_PASSAGES=${PREFLMR_PASSAGES:-32} PREFLMR_QUERIES=${PREFLMR_QUERIES:-8}
  FULL_PASSAGES=${FULL_PASSAGES:-48} FULL_QUERIES=${FULL_QUERIES:-8}
fi
PREFLMR_SIZE=${PREFLMR_SIZE:-vit-g} PREFLMR_PASSAGES=${PREFLMR_PASSAGES:-4096} PREFLMR_QUERIES=${PREFLMR_QUERIES:-512}
PREFLMR_ARGS=${PREFLMR_ARGS:-} PIXELS=${PIXELS:-}  # the preset's image budget, unless smoke
FULL_PASSAGES=${FULL_PASSAGES:-47318} FULL_QUERIES=${FULL_QUERIES:-6415}  # M2KR's, for PARTS=preflmr-full
DEVICE=${DEVICE:-cuda} FIRST=${FIRST:-2b} LATER=${LATER:-8b} BUDGET=${BUDGET:-540}
ALL_PARTS="pixels embed preflmr rerank feed embed8b rerank8b topk"
PARTS=${PARTS:-$ALL_PARTS}
for PART in $PARTS; do
  case " $ALL_PARTS preflmr-full " in *" $PART "*) ;; *)
    echo "gpu_check: PARTS names $PART; expected some of: $ALL_PARTS preflmr-full"; exit 2 ;;
  esac
done
part() { case " $PARTS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }  # whether PARTS names this part
CORPUS=${CORPUS:-2048} QUERIES=${QUERIES:-256} M2KR_CORPUS=${M2KR_CORPUS:-256} M2KR_QUERIES=${M2KR_QUERIES:-64}
BATCH=${BATCH:-32} M2KR_BATCH=${M2KR_BATCH:-16} RERANK_QUERIES=${RERANK_QUERIES:-16} RERANK_BATCH=${RERANK_BATCH:-16}
RERANK_M2KR_QUERIES=${RERANK_M2KR_QUERIES:-8} RERANK8B_TOP_N=${RERANK8B_TOP_N:-25}
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
export PYTHONUNBUFFERED=1 SUMMARY="$WORK/summary.jsonl" STEPS="$WORK/steps.jsonl" AGREEMENT="$WORK/agreement.jsonl"
: > "$SUMMARY"
: > "$STEPS"
: > "$AGREEMENT"

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
  rm -rf "$WORK/cache-$tag"  # measured afresh (SMOKE runs the tiny layout as both sizes)
  step "embed $size $kind" 200 "$PYTHON" scripts/embed_retrieve.py mipr --data-dir "$data" \
    --model "$WORK/models-$size/Qwen3-VL-Embedding-$size-random" --preset qwen3-vl-embedding --device "$DEVICE" $PIXELS \
    --batch-size "$batch" --num-workers "$WORKERS" --cache-dir "$WORK/cache-$tag" --no-eval --top-k 50 \
    --output "$WORK/run-$tag.json" --stats-json "$WORK/stats-$tag.json" 2> >(quiet >&2) || return 1
  "${HELPER[@]}" phase "embed $size $kind" "$WORK/stats-$tag.json" "$WORK/util.csv"
  step "vectors $size $kind" 60 "${HELPER[@]}" vectors "$WORK/run-$tag.json" --cache-dir "$WORK/cache-$tag"
}

rerank() {  # SIZE KIND PATH TOP_N: one rerank of KIND-shaped pairs, each query's prefix shared or every pair whole
  local size=$1 kind=$2 path=$3 top_n=$4 tag="$1-$2-$3" whole=""
  [ "$path" = whole ] && whole=--no-shared-prefix
  step "rerank $size $kind $path" 200 "$PYTHON" scripts/rerank.py mipr --data-dir "$WORK/rerank-$kind" \
    --candidates "$WORK/candidates-$kind.json" --model "$WORK/models-$size/Qwen3-VL-Reranker-$size-random" \
    --preset qwen3-vl-reranker --device "$DEVICE" $PIXELS --batch-size "$RERANK_BATCH" --num-workers "$WORKERS" --no-cache \
    --no-eval --top-n "$top_n" $whole --output "$WORK/rerank-$tag.json" --stats-json "$WORK/stats-rerank-$tag.json" \
    2> >(quiet >&2) || return 1
  "${HELPER[@]}" phase "rerank $size $kind $path" "$WORK/stats-rerank-$tag.json" "$WORK/util.csv" --candidates "$top_n"
  step "scores rerank $size $kind $path" 60 "${HELPER[@]}" vectors "$WORK/rerank-$tag.json"
}

rerankers() {  # SIZE TOP_N: both paths on MIPR- then M2KR-shaped pairs, then how far their scores agree
  local size=$1 top_n=$2 kind
  for kind in mipr m2kr; do
    rerank "$size" "$kind" shared "$top_n"
    rerank "$size" "$kind" whole "$top_n"
    if [ -f "$WORK/rerank-$size-$kind-shared.json" ] && [ -f "$WORK/rerank-$size-$kind-whole.json" ]; then
      step "agree $size $kind" 30 "${HELPER[@]}" agree "$WORK/rerank-$size-$kind-shared.json" "$WORK/rerank-$size-$kind-whole.json"
    fi
  done
}

# MIPR and M2KR-shaped data, for the parts that embed or rerank it.
if part embed || part rerank || part embed8b || part rerank8b; then
  step "data" 90 "${HELPER[@]}" data "$WORK" --corpus "$CORPUS" --queries "$QUERIES" --m2kr-corpus "$M2KR_CORPUS" \
    --m2kr-queries "$M2KR_QUERIES" --rerank-queries "$RERANK_QUERIES" --rerank-m2kr-queries "$RERANK_M2KR_QUERIES"
fi

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

# 3. The 2B reranker, both paths.
if part rerank && step "build $FIRST reranker" 150 "${HELPER[@]}" models "$FIRST" "$WORK/models-$FIRST" --which reranker --device "$DEVICE"; then
  rerankers "$FIRST" 50
  rm -rf "$WORK/models-$FIRST"
fi

# 4. The CPU feed on this host's cores, the 8B embedder on MIPR and M2KR-shaped items, the 8B reranker, exact top-k.
part feed && step "feed (bench/feed_cpu.py, $WORKERS workers)" 90 "$PYTHON" bench/feed_cpu.py --items "$FEED_ITEMS" \
  --workers "$WORKERS" --json "$WORK/feed.json" 2> >(quiet >&2)
if part embed8b && step "build $LATER embedder" 150 "${HELPER[@]}" models "$LATER" "$WORK/models-$LATER" --which embedding --device "$DEVICE"; then
  embed "$LATER" mipr "$WORK/mipr" "$BATCH"
  embed "$LATER" m2kr "$WORK/m2kr" "$M2KR_BATCH"
  rm -rf "$WORK/models-$LATER"
fi
if part rerank8b && step "build $LATER reranker" 150 "${HELPER[@]}" models "$LATER" "$WORK/models-$LATER" --which reranker --device "$DEVICE"; then
  rerankers "$LATER" "$RERANK8B_TOP_N"
  rm -rf "$WORK/models-$LATER"
fi
if [ "$DEVICE" = cuda ] && part topk; then
  step "exact top-k, dim 2048" 60 "$PYTHON" bench/topk_gpu.py --dim 2048 --repeat 3
fi

# 5. PreFLMR ViT-G end to end at M2KR's full size, as `mmrhub baseline m2kr --paper` runs it (float32, the preset,
#    exact MaxSim top-50), on synthetic data with tiny images: a call of its own (PARTS=preflmr-full BUDGET=570). The
#    FLOP model puts it near 6 min on an H200 (queries 2 min, passages under 2 min, MaxSim under 2 min), the checkpoint
#    and the data about 2 min.
preflmr_full() {
  step "build preflmr $PREFLMR_SIZE + full m2kr data" 180 "${HELPER[@]}" preflmr-setup "$WORK" --size "$PREFLMR_SIZE" \
    --device "$DEVICE" --passages "$FULL_PASSAGES" --queries "$FULL_QUERIES" --data m2kr-full 2> >(quiet >&2) || return 1
  step "preflmr $PREFLMR_SIZE full m2kr float32" 420 "${HELPER[@]}" preflmr-full "$WORK" --data m2kr-full \
    --device "$DEVICE" --workers "$WORKERS" --stats "$WORK/stats-preflmr-full.json" 2> >(quiet >&2) || return 1
  "${HELPER[@]}" phase "preflmr $PREFLMR_SIZE full m2kr float32" "$WORK/stats-preflmr-full.json" "$WORK/util.csv"
  step "scores preflmr full" 60 "${HELPER[@]}" vectors "$WORK"/runs-full/m2kr_*_top50.json
}
part preflmr-full && preflmr_full

echo "== measured beside bench/flop_model.py ($(( $(date +%s) - START )) s in all) =="
"$PYTHON" bench/gpu_check.py summary "$OUT/summary.json"
RC=$?
sleep 2  # lets tee write the log's last lines before the call returns
exit $RC
