#!/usr/bin/env bash
# GPU check of the Qwen3-VL baseline, offline (nothing is downloaded), in about 10 minutes on one H200. On
# random-weight models of the real Qwen3-VL-Embedding / -Reranker 2B and 8B configurations (built from their
# configurations by scripts/tiny_models.py, weights drawn on the GPU in bfloat16), through the real pipeline
# (`scripts/embed_retrieve.py`, `scripts/rerank.py`, presets on) and synthetic MIPR-shaped data (800x800 JPEG
# products and query photos, Chinese titles), it measures:
#   1. the feed rate: items/s the CPU prepares per worker core, the main process's share, and what all this host's
#      cores feed (bench/feed_cpu.py, full-size images, the workers sending what they send to a bf16 CUDA model),
#      and that pixel values sent as bytes are normalised on the GPU to the processor's very values
#      (bench/pixels_on_device.py);
#   2. embedding items/s per size (corpus and queries), with the share of 100 ms nvidia-smi samples in which the
#      GPU was busy;
#   3. rerank pairs/s per size (RERANK_QUERIES queries x 50 candidates), with the same;
#   4. exact top-k TFLOP/s at MIPR's real size (bench/topk_gpu.py);
# and prints each beside the README's estimate. Random weights: real-size compute, meaningless vectors and scores.
# The tokenizer is byte-level without merges (the real vocabulary is not downloaded), so texts are generated short
# enough that their token counts are the real ones' (a title of ~25 tokens); image tokens are exact.
#
#   bench/gpu_check.sh                 env: SIZES="2b 8b" CORPUS=2048 QUERIES=256 CORPUS_8B=1024 QUERIES_8B=128
#                                           BATCH=32 RERANK_QUERIES=32 RERANK_QUERIES_8B=16 RERANK_BATCH=16
#                                           WORKERS=<cores - 1> OUT=bench/out/gpu PYTHON=python TOPK=1
#   SMOKE=1 bench/gpu_check.sh         the same plumbing on CPU with the tiny layout and a few items (a check of
#                                      this script where no GPU is; its figures mean nothing)
set -euo pipefail
cd "$(dirname "$0")/.."
SMOKE=${SMOKE:-0}
if [ "$SMOKE" = 1 ]; then
  SIZES=${SIZES:-tiny} DEVICE=cpu CORPUS=${CORPUS:-64} QUERIES=${QUERIES:-8} RERANK_QUERIES=${RERANK_QUERIES:-2}
  BATCH=${BATCH:-8} RERANK_BATCH=${RERANK_BATCH:-8} FEED_ITEMS=${FEED_ITEMS:-8} TOPK=${TOPK:-0}
fi
SIZES=${SIZES:-"2b 8b"} DEVICE=${DEVICE:-cuda}
CORPUS=${CORPUS:-2048} QUERIES=${QUERIES:-256} CORPUS_8B=${CORPUS_8B:-1024} QUERIES_8B=${QUERIES_8B:-128}
BATCH=${BATCH:-32} RERANK_QUERIES=${RERANK_QUERIES:-32} RERANK_QUERIES_8B=${RERANK_QUERIES_8B:-16}
RERANK_BATCH=${RERANK_BATCH:-16} TOPK=${TOPK:-1}
CORES=$(python3 -c "import os; print(len(os.sched_getaffinity(0)))")
WORKERS=${WORKERS:-$(( CORES > 1 ? CORES - 1 : 1 ))} FEED_ITEMS=${FEED_ITEMS:-$(( WORKERS * 16 ))}
OUT=${OUT:-bench/out/gpu} PYTHON=${PYTHON:-python}
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HOME="$OUT/hf" PYTHONPATH="$PWD:$PWD/scripts${PYTHONPATH:+:$PYTHONPATH}"
export TOKENIZERS_PARALLELISM=false
START=$(date +%s)

# The README's estimates (keep in step with its "Embed, retrieve and score on a GPU" section): one H200, bf16,
# 2 x parameters x tokens FLOPs at ~410 TFLOP/s (about 40% of its dense bf16 peak): ~140 MIPR items/s of ~700 tokens
# for the 2B embedder (2.13B parameters), 36 for the 8B (8.14B), 70 and 17 pairs/s of ~1,400 tokens for the rerankers.
ESTIMATES='{"embed 2b": 140, "embed 8b": 36, "rerank 2b": 70, "rerank 8b": 17}'

if [ "$DEVICE" = cuda ]; then
  "$PYTHON" -c "import torch; assert torch.cuda.is_available(), 'no CUDA device'" \
    || { echo "gpu_check: needs torch with CUDA (SMOKE=1 runs the plumbing on CPU)"; exit 2; }
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
fi
"$PYTHON" -c "import torchvision, transformers, sentence_transformers, datasets" \
  || { echo "gpu_check: needs torchvision (Qwen3-VL's processor), transformers, sentence-transformers, datasets"; exit 2; }

make_data() {  # FOLDER PRODUCTS QUERIES
"$PYTHON" - "$@" <<'EOF'
import json, os, sys
import numpy as np
from PIL import Image
folder, n_corpus, n_queries = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
for sub in ("images/product_images", "images/query_images"):
    os.makedirs(os.path.join(folder, sub), exist_ok=True)
# 64 distinct photo-like 800x800 JPEGs, hard-linked under every item's own name: real decoding, fast to make.
bases = []
for i in range(64):
    small = rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)
    big = np.asarray(Image.fromarray(small).resize((800, 800), Image.BICUBIC), dtype=np.int16)
    path = os.path.join(folder, f"base_{i}.jpg")
    Image.fromarray(np.clip(big + rng.integers(-12, 13, big.shape), 0, 255).astype(np.uint8)).save(path, quality=90)
    bases.append(path)
def place(sub, name, i):
    target = os.path.join(folder, sub, name)
    if not os.path.exists(target):
        os.link(bases[i % len(bases)], target)
# 3 byte-level tokens a character: 8-12 characters ~ a real title's 25 tokens, 3-6 ~ a question's 12.
chars = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
text = lambda lo, hi: "".join(rng.choice(chars, rng.integers(lo, hi)))
with open(os.path.join(folder, "mipr_corpus.jsonl"), "w") as f:
    for i in range(n_corpus):
        place("images/product_images", f"p{i}.jpg", i)
        f.write(json.dumps({"item_id": f"p{i}", "title": text(8, 13), "pict_url": f"p{i}.jpg",
                            "treecate_full_path": f"c{i % 50}-x"}, ensure_ascii=False) + "\n")
with open(os.path.join(folder, "mipr_query.jsonl"), "w") as f, open(os.path.join(folder, "mipr_annotation.jsonl"), "w") as g:
    for i in range(n_queries):
        place("images/query_images", f"q{i}.jpg", i * 7 + 3)
        f.write(json.dumps({"idx": str(i), "query": text(3, 7), "image_url": f"q{i}.jpg"}, ensure_ascii=False) + "\n")
        g.write(json.dumps({"idx": str(i), "items": [{"item_id": f"p{int(rng.integers(n_corpus))}", "final_grade": "L1"}]}) + "\n")
EOF
}

make_candidates() {  # DATA_FOLDER CORPUS OUTPUT
"$PYTHON" - "$@" <<'EOF'
import json, sys
import numpy as np
folder, corpus, output = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(1)
queries = [json.loads(line)["idx"] for line in open(f"{folder}/mipr_query.jsonl")]
run = [{"qid": q, "ranked": [{"did": f"p{i}", "score": float(50 - r)}
                             for r, i in enumerate(rng.choice(corpus, 50, replace=False))]} for q in queries]
json.dump(run, open(output, "w"))
EOF
}

make_models() {  # SIZE FOLDER: the embedder and the reranker, random, drawn on $DEVICE
"$PYTHON" - "$@" "$DEVICE" <<'EOF'
import sys, time
from pathlib import Path
from tiny_models import build_qwen3_vl_embedding, build_qwen3_vl_reranker
size, folder, device = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
device = None if device == "cpu" else device
for name, build in (("Qwen3-VL-Embedding", build_qwen3_vl_embedding), ("Qwen3-VL-Reranker", build_qwen3_vl_reranker)):
    started = time.perf_counter()
    model = build(folder / f"build-{name}", size=size, device=device)
    model.rename(folder / f"{name}-{size}-random")
    print(f"{name}-{size}-random: built and saved in {time.perf_counter() - started:.0f} s", flush=True)
EOF
}

# Per phase of a stats file: rate, and the share of nvidia-smi samples (every 100 ms) in which the GPU was busy.
report() {  # LABEL STATS_JSON UTIL_CSV
"$PYTHON" - "$@" <<'EOF'
import json, os, sys
from datetime import datetime
label, stats_file, util = sys.argv[1], sys.argv[2], sys.argv[3]
stats = json.load(open(stats_file))
samples = []
if os.path.exists(util):
    for line in open(util):
        stamp, _, value = line.rpartition(",")
        if value.strip().isdigit():
            samples.append((datetime.strptime(stamp.strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp(), int(value)))
with open(os.environ["SUMMARY"], "a") as summary:
    for name, phase in stats["phases"].items():
        if not phase.get("items_per_s"):
            continue
        start = phase["end"] - phase["seconds"]
        during = [value for when, value in samples if start <= when <= phase["end"]]
        busy = sum(value > 0 for value in during) / max(1, len(during))
        unit = "pairs" if name == "rerank" else "items"
        print(f"{label} {name}: {phase['items_per_s']:,.1f} {unit}/s ({phase['items']:,} {unit}, {phase['seconds']:.1f} s); "
              f"GPU busy in {busy:.0%} of {len(during)} samples")
        summary.write(json.dumps({"label": label, "phase": name, "rate": phase["items_per_s"], "busy": busy}) + "\n")
EOF
}

sample_gpu() {  # CSV: nvidia-smi every 100 ms in the background (nothing on CPU)
  if [ "$DEVICE" = cuda ]; then
    nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits -lms 100 > "$1" &
    SMI=$!
  else
    : > "$1"; SMI=
  fi
}
stop_gpu_samples() { [ -n "${SMI:-}" ] && kill "$SMI" 2>/dev/null || true; }
trap stop_gpu_samples EXIT

export SUMMARY="$OUT/summary.jsonl"
: > "$SUMMARY"

echo "== feed: full-size images, $WORKERS workers (bench/feed_cpu.py) =="
"$PYTHON" bench/feed_cpu.py --items "$FEED_ITEMS" --workers "$WORKERS" --json "$OUT/feed.json" 2>&1 \
  | grep -v "Writing model\|Loading weights\|Generating"

echo "== pixel values sent as bytes, normalised on the device (bench/pixels_on_device.py) =="
"$PYTHON" bench/pixels_on_device.py --device "$DEVICE" \
  || echo "gpu_check: the pixel values normalised on $DEVICE differ from the processor's (see above)"

echo "== synthetic data =="
make_data "$OUT/data" "$CORPUS" "$QUERIES"
make_data "$OUT/data-8b" "$CORPUS_8B" "$QUERIES_8B"
make_data "$OUT/rerank_data" 512 "$RERANK_QUERIES"
make_data "$OUT/rerank_data-8b" 512 "$RERANK_QUERIES_8B"
make_candidates "$OUT/rerank_data" 512 "$OUT/candidates.json"
make_candidates "$OUT/rerank_data-8b" 512 "$OUT/candidates-8b.json"

for SIZE in $SIZES; do
  MODELS="$OUT/models-$SIZE"; rm -rf "$MODELS"; mkdir -p "$MODELS"
  DATA="$OUT/data"; RDATA="$OUT/rerank_data"; CANDIDATES="$OUT/candidates.json"
  if [ "$SIZE" = 8b ]; then DATA="$OUT/data-8b"; RDATA="$OUT/rerank_data-8b"; CANDIDATES="$OUT/candidates-8b.json"; fi
  echo "== $SIZE: random Qwen3-VL-Embedding and -Reranker of the real configuration =="
  make_models "$SIZE" "$MODELS"

  echo "== $SIZE: embed + retrieve, batch $BATCH, $WORKERS workers =="
  sample_gpu "$OUT/util-embed-$SIZE.csv"
  "$PYTHON" scripts/embed_retrieve.py mipr --data-dir "$DATA" --model "$MODELS/Qwen3-VL-Embedding-$SIZE-random" \
    --preset qwen3-vl-embedding --device "$DEVICE" --batch-size "$BATCH" --num-workers "$WORKERS" --no-cache --no-eval \
    --top-k 50 --output "$OUT/run-$SIZE.json" --stats-json "$OUT/stats-embed-$SIZE.json" 2> >(grep -v "it/s]\|item/s]" >&2)
  stop_gpu_samples
  report "embed $SIZE" "$OUT/stats-embed-$SIZE.json" "$OUT/util-embed-$SIZE.csv"

  echo "== $SIZE: rerank, 50 candidates a query, batch $RERANK_BATCH, $WORKERS workers =="
  sample_gpu "$OUT/util-rerank-$SIZE.csv"
  "$PYTHON" scripts/rerank.py mipr --data-dir "$RDATA" --candidates "$CANDIDATES" \
    --model "$MODELS/Qwen3-VL-Reranker-$SIZE-random" --preset qwen3-vl-reranker --device "$DEVICE" \
    --batch-size "$RERANK_BATCH" --num-workers "$WORKERS" --no-cache --no-eval \
    --output "$OUT/rerank-$SIZE.json" --stats-json "$OUT/stats-rerank-$SIZE.json" 2> >(grep -v "pair/s]" >&2)
  stop_gpu_samples
  report "rerank $SIZE" "$OUT/stats-rerank-$SIZE.json" "$OUT/util-rerank-$SIZE.csv"
  rm -rf "$MODELS"  # 2B and 8B checkpoints together would take ~40 GB of disk
  echo "   ($(( $(date +%s) - START )) s so far)"
done

if [ "$TOPK" = 1 ] && [ "$DEVICE" = cuda ]; then
  echo "== exact top-k at MIPR's size =="
  "$PYTHON" bench/topk_gpu.py --dim 2048
  "$PYTHON" bench/topk_gpu.py --dim 4096
fi

echo "== measured beside the README's estimates ($(( $(date +%s) - START )) s in all) =="
"$PYTHON" - "$OUT/feed.json" "$SUMMARY" "$ESTIMATES" "$WORKERS" <<'EOF'
import json, sys
feed_file, summary_file, estimates, workers = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
feed = json.load(open(feed_file))
print("| what | measured | README estimate |")
print("|---|---:|---:|")
for kind in ("mipr", "m2kr"):
    run = feed.get(f"{kind} now {workers}")
    if run:
        print(f"| feed, {kind}: items/s with {workers} workers (main process {run['main_ms_per_item']:.1f} ms an item) "
              f"| {run['items'] / run['wall']:,.0f} | {'>= 140' if kind == 'mipr' else '>= 55'} (what the 2B consumes) |")
rates = {}
for line in open(summary_file):
    row = json.loads(line)
    rates.setdefault(row["label"], {})[row["phase"]] = (row["rate"], row["busy"])
for label, phases in rates.items():
    for phase, (rate, busy) in phases.items():
        estimate = estimates.get(label) if phase in ("embed corpus", "embed queries", "rerank") else None
        unit = "pairs/s" if label.startswith("rerank") else "items/s"
        print(f"| {label}, {phase}: {unit} (GPU busy {busy:.0%}) | {rate:,.1f} | {estimate if estimate else '-'} |")
EOF
