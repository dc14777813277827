#!/usr/bin/env bash
# GPU check for `mmrhub retrieve`, offline, in well under 8 minutes on one GPU. Reports:
#   1. embedding throughput (items/s per phase) of the real pipeline on synthetic MIPR-shaped data
#      (CORPUS products + QUERIES queries, 512x512 JPEGs, Chinese titles), and the fraction of samples in
#      which the GPU was busy during the run (nvidia-smi utilization.gpu, every 100 ms);
#   2. exact top-k TFLOP/s at the real MIPR and M2KR sizes (bench/topk_gpu.py).
# Nothing is downloaded. The model is MODEL_DIR (a local folder, e.g. a copy of Qwen/Qwen3-VL-Embedding-2B,
# with BACKEND=sentence-transformers) or, without it, a randomly initialised Chinese-CLIP ViT-L/14-size dual
# encoder (BACKEND=transformers): real-size compute, meaningless vectors.
#
#   bench/gpu_check.sh [MODEL_DIR [BACKEND]]      env: CORPUS=8192 QUERIES=1024 BATCH=64 WORKERS=8 OUT=bench/out/gpu
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL_DIR=${1:-}
BACKEND=${2:-$([ -n "$MODEL_DIR" ] && echo sentence-transformers || echo transformers)}
CORPUS=${CORPUS:-8192} QUERIES=${QUERIES:-1024} BATCH=${BATCH:-64} WORKERS=${WORKERS:-8}
OUT=${OUT:-bench/out/gpu}
PYTHON=${PYTHON:-python}
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HOME="$OUT/hf" PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

"$PYTHON" -c "import torch, transformers, datasets; assert torch.cuda.is_available(), 'no CUDA device'" \
  || { echo "gpu_check: needs torch with CUDA, transformers and datasets (pip install -e '.[retrieve]')"; exit 2; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

echo "== synthetic data: $CORPUS products, $QUERIES queries =="
"$PYTHON" - "$OUT/data" "$CORPUS" "$QUERIES" <<'EOF'
import json, os, sys
import numpy as np
from PIL import Image
folder, n_corpus, n_queries = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
for sub in ("images/product_images", "images/query_images"):
    os.makedirs(os.path.join(folder, sub), exist_ok=True)
# 64 distinct smooth-noise images, hard-linked under every item's own name: real decode cost, fast to make.
bases = []
for i in range(64):
    small = rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)
    path = os.path.join(folder, f"base_{i}.jpg")
    Image.fromarray(small).resize((512, 512), Image.BICUBIC).save(path, quality=90)
    bases.append(path)
def place(sub, name, i):
    target = os.path.join(folder, sub, name)
    if not os.path.exists(target):
        os.link(bases[i % len(bases)], target)
chars = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
text = lambda lo, hi: "".join(rng.choice(chars, rng.integers(lo, hi)))
with open(os.path.join(folder, "mipr_corpus.jsonl"), "w") as f:
    for i in range(n_corpus):
        place("images/product_images", f"p{i}.jpg", i)
        f.write(json.dumps({"item_id": f"p{i}", "title": text(20, 60), "pict_url": f"p{i}.jpg",
                            "treecate_full_path": f"c{i % 50}-x"}, ensure_ascii=False) + "\n")
with open(os.path.join(folder, "mipr_query.jsonl"), "w") as f, open(os.path.join(folder, "mipr_annotation.jsonl"), "w") as g:
    for i in range(n_queries):
        place("images/query_images", f"q{i}.jpg", i * 7)
        f.write(json.dumps({"idx": str(i), "query": text(8, 30), "image_url": f"q{i}.jpg"}, ensure_ascii=False) + "\n")
        g.write(json.dumps({"idx": str(i), "items": [{"item_id": f"p{int(rng.integers(n_corpus))}", "final_grade": "L1"}]}) + "\n")
EOF

if [ -z "$MODEL_DIR" ]; then
  MODEL_DIR="$OUT/random-chinese-clip-vit-l14"
  echo "== random-init Chinese-CLIP ViT-L/14-size model in $MODEL_DIR =="
  "$PYTHON" - "$MODEL_DIR" <<'EOF'
import sys, torch
from transformers import BertTokenizerFast, ChineseCLIPConfig, ChineseCLIPModel, ChineseCLIPProcessor
from transformers.models.chinese_clip.image_processing_pil_chinese_clip import ChineseCLIPImageProcessorPil
folder = sys.argv[1]
specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
chars = [chr(c) for c in range(0x4E00, 0x4E00 + 21128 - len(specials))]  # RoBERTa-wwm-chinese vocab size
tokenizer = BertTokenizerFast(vocab={t: i for i, t in enumerate(specials + chars)})
config = ChineseCLIPConfig(
    text_config=dict(vocab_size=21128, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                     intermediate_size=3072, max_position_embeddings=512),
    vision_config=dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096,
                       image_size=224, patch_size=14, projection_dim=768),
    projection_dim=768)
ChineseCLIPModel(config).save_pretrained(folder)
tokenizer.model_max_length = 52  # Chinese-CLIP's text length
ChineseCLIPProcessor(image_processor=ChineseCLIPImageProcessorPil(size={"shortest_edge": 224},
                     crop_size={"height": 224, "width": 224}), tokenizer=tokenizer).save_pretrained(folder)
EOF
fi

echo "== embed + retrieve: $BACKEND $MODEL_DIR, batch $BATCH, $WORKERS workers =="
nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits -lms 100 > "$OUT/util.csv" &
SMI=$!
"$PYTHON" scripts/embed_retrieve.py mipr --data-dir "$OUT/data" --backend "$BACKEND" --model "$MODEL_DIR" \
  --batch-size "$BATCH" --num-workers "$WORKERS" --no-cache --output "$OUT/run.json" --stats-json "$OUT/stats.json" \
  2> >(grep -v "it/s]" >&2)
kill "$SMI"
"$PYTHON" - "$OUT/stats.json" "$OUT/util.csv" <<'EOF'
import json, sys
from datetime import datetime
stats = json.load(open(sys.argv[1]))
samples = []
for line in open(sys.argv[2]):
    stamp, _, value = line.rpartition(",")
    if value.strip().isdigit():
        samples.append((datetime.strptime(stamp.strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp(), int(value)))
for name, phase in stats["phases"].items():
    if not phase.get("items_per_s"):
        continue
    start = phase["end"] - phase["seconds"]
    during = [value for when, value in samples if start <= when <= phase["end"]]
    busy = sum(value > 0 for value in during) / max(1, len(during))
    mean = sum(during) / max(1, len(during))
    print(f"{name}: {phase['items_per_s']:,.1f} items/s ({phase['items']:,} items, {phase['seconds']:.1f} s); "
          f"GPU busy in {busy:.0%} of {len(during)} samples, mean utilization {mean:.0f}%")
EOF

echo "== exact top-k at real sizes =="
"$PYTHON" bench/topk_gpu.py --dim 2048
"$PYTHON" bench/topk_gpu.py --dim 1024
