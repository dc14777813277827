#!/usr/bin/env bash
# GPU check for `mmrhub retrieve` and `mmrhub rerank`, offline, in well under 8 minutes on one GPU. Reports:
#   1. embedding throughput (items/s per phase) of the real pipeline on synthetic MIPR-shaped data
#      (CORPUS products + QUERIES queries, 512x512 JPEGs, Chinese titles), and the fraction of samples in
#      which the GPU was busy during the run (nvidia-smi utilization.gpu, every 100 ms);
#   2. rerank throughput (pairs/s) and GPU busy fraction of scripts/rerank.py on RERANK_QUERIES synthetic queries
#      x 50 candidates, with RERANK_MODEL_DIR (a local copy of e.g. Qwen/Qwen3-VL-Reranker-2B) or, without it, a
#      randomly initialised ~2B generative reranker (LLaVA: CLIP ViT-L/14 + 28-layer 1536-wide Qwen2) saved as a
#      sentence-transformers CrossEncoder: real-size compute, meaningless scores;
#   3. exact top-k TFLOP/s at the real MIPR and M2KR sizes (bench/topk_gpu.py).
# Nothing is downloaded. The model is MODEL_DIR (a local folder, e.g. a copy of Qwen/Qwen3-VL-Embedding-2B,
# with BACKEND=sentence-transformers) or, without it, a randomly initialised Chinese-CLIP ViT-L/14-size dual
# encoder (BACKEND=transformers): real-size compute, meaningless vectors.
#
#   bench/gpu_check.sh [MODEL_DIR [BACKEND]]      env: CORPUS=8192 QUERIES=1024 BATCH=64 WORKERS=8 OUT=bench/out/gpu
#                                                 RERANK_MODEL_DIR= RERANK_QUERIES=96 RERANK_BATCH=32
#                                                 RERANK_SIZE=full (smoke: 1-layer towers, a check of the plumbing)
#                                                 PRESET= (qwen3-vl-embedding for sentence-transformers, chinese-clip
#                                                 for transformers) RERANK_PRESET=none (qwen3-vl-reranker for a
#                                                 Qwen3-VL-Reranker folder; the LLaVA stand-in takes none)
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL_DIR=${1:-}
BACKEND=${2:-$([ -n "$MODEL_DIR" ] && echo sentence-transformers || echo transformers)}
CORPUS=${CORPUS:-8192} QUERIES=${QUERIES:-1024} BATCH=${BATCH:-64} WORKERS=${WORKERS:-8}
OUT=${OUT:-bench/out/gpu}
PRESET=${PRESET:-$([ "$BACKEND" = sentence-transformers ] && echo qwen3-vl-embedding || echo chinese-clip)}
RERANK_PRESET=${RERANK_PRESET:-none}
RERANK_MODEL_DIR=${RERANK_MODEL_DIR:-} RERANK_QUERIES=${RERANK_QUERIES:-96} RERANK_BATCH=${RERANK_BATCH:-32}
PYTHON=${PYTHON:-python}
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HOME="$OUT/hf" PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

"$PYTHON" -c "import torch, transformers, datasets; assert torch.cuda.is_available(), 'no CUDA device'" \
  || { echo "gpu_check: needs torch with CUDA, transformers and datasets (pip install -e '.[retrieve]')"; exit 2; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

make_data() {  # FOLDER PRODUCTS QUERIES
"$PYTHON" - "$@" <<'EOF'
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
}

# Per phase of a stats file: rate, and the share of nvidia-smi samples (every 100 ms) in which the GPU was busy.
report() {  # STATS_JSON UTIL_CSV
"$PYTHON" - "$@" <<'EOF'
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
    unit = "pairs" if name == "rerank" else "items"
    print(f"{name}: {phase['items_per_s']:,.1f} {unit}/s ({phase['items']:,} {unit}, {phase['seconds']:.1f} s); "
          f"GPU busy in {busy:.0%} of {len(during)} samples, mean utilization {mean:.0f}%")
EOF
}

echo "== synthetic data: $CORPUS products, $QUERIES queries =="
make_data "$OUT/data" "$CORPUS" "$QUERIES"

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
  --preset "$PRESET" --batch-size "$BATCH" --num-workers "$WORKERS" --no-cache --output "$OUT/run.json" --stats-json "$OUT/stats.json" \
  2> >(grep -v "it/s]" >&2)
kill "$SMI"
report "$OUT/stats.json" "$OUT/util.csv"

echo "== rerank: $RERANK_QUERIES queries x 50 candidates, batch $RERANK_BATCH, $WORKERS workers =="
make_data "$OUT/rerank_data" 2048 "$RERANK_QUERIES"
"$PYTHON" - "$OUT/rerank_data" "$OUT/candidates.json" <<'EOF'
import json, sys
import numpy as np
folder, output = sys.argv[1:]
rng = np.random.default_rng(1)
queries = [json.loads(line)["idx"] for line in open(f"{folder}/mipr_query.jsonl")]
run = [{"qid": q, "ranked": [{"did": f"p{i}", "score": float(50 - r)}
                             for r, i in enumerate(rng.choice(2048, 50, replace=False))]} for q in queries]
json.dump(run, open(output, "w"))
EOF
if [ -z "$RERANK_MODEL_DIR" ]; then
  RERANK_MODEL_DIR="$OUT/random-llava-reranker-2b"
  echo "== random-init ~2B generative reranker (CLIP ViT-L/14 + 28x1536 Qwen2) in $RERANK_MODEL_DIR =="
  "$PYTHON" - "$RERANK_MODEL_DIR" "${RERANK_SIZE:-full}" <<'EOF'
import sys
from pathlib import Path
import torch
from sentence_transformers import CrossEncoder
from sentence_transformers.cross_encoder.modules import LogitScore, Transformer
from transformers import LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor, Qwen2TokenizerFast
from transformers.convert_slow_tokenizer import bytes_to_unicode
from transformers.models.llava.image_processing_pil_llava import LlavaImageProcessorPil
folder, size = Path(sys.argv[1]), sys.argv[2]
special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|image_pad|>"]
vocab = {c: i for i, c in enumerate(bytes_to_unicode().values())}
vocab.update({t: len(vocab) + i for i, t in enumerate(["yes", "no", *special])})
template = ("{%- for m in messages -%}<|im_start|>{{ m['role'] }}\n{%- if m['content'] is string -%}{{ m['content'] }}"
            "{%- else -%}{%- for c in m['content'] -%}{%- if c['type'] == 'image' -%}<|image_pad|>"
            "{%- elif c['type'] == 'text' -%}{{ c['text'] }}{%- endif -%}{%- endfor -%}{%- endif -%}<|im_end|>\n"
            "{%- endfor -%}{%- if add_generation_prompt -%}<|im_start|>assistant\n{%- endif -%}")
tokenizer = Qwen2TokenizerFast(vocab=vocab, merges=[], additional_special_tokens=special[1:])
processor = LlavaProcessor(
    image_processor=LlavaImageProcessorPil(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224}),
    tokenizer=tokenizer, patch_size=14, num_additional_image_tokens=1, vision_feature_select_strategy="default",
    image_token="<|image_pad|>", chat_template=template)
# 224 px / 14 = 256 image tokens, as Qwen3-VL gives a 512x512 image (32 px per merged token).
layers = {"full": (24, 28), "smoke": (1, 1)}[size]  # smoke: a CPU check of this script's plumbing
config = LlavaConfig(
    vision_config=dict(model_type="clip_vision_model", hidden_size=1024, intermediate_size=4096,
                       num_hidden_layers=layers[0], num_attention_heads=16, image_size=224, patch_size=14),
    text_config=dict(model_type="qwen2", vocab_size=len(vocab), hidden_size=1536, intermediate_size=8960,
                     num_hidden_layers=layers[1], num_attention_heads=12, num_key_value_heads=2,
                     max_position_embeddings=8192),
    image_token_id=vocab["<|image_pad|>"], vision_feature_select_strategy="default", vision_feature_layer=-1)
LlavaForConditionalGeneration(config).to(torch.bfloat16).save_pretrained(folder / "backbone")
processor.save_pretrained(folder / "backbone")
model = CrossEncoder(modules=[Transformer(str(folder / "backbone"), transformer_task="any-to-any"),
                              LogitScore(vocab["yes"], vocab["no"])], device="cpu")
model.save(str(folder))
EOF
fi
nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits -lms 100 > "$OUT/rerank_util.csv" &
SMI=$!
"$PYTHON" scripts/rerank.py mipr --data-dir "$OUT/rerank_data" --candidates "$OUT/candidates.json" \
  --model "$RERANK_MODEL_DIR" --preset "$RERANK_PRESET" --batch-size "$RERANK_BATCH" --num-workers "$WORKERS" --no-cache --no-eval \
  --output "$OUT/rerank_run.json" --stats-json "$OUT/rerank_stats.json" 2> >(grep -v "pair/s]" >&2)
kill "$SMI"
report "$OUT/rerank_stats.json" "$OUT/rerank_util.csv"

echo "== exact top-k at real sizes =="
"$PYTHON" bench/topk_gpu.py --dim 2048
"$PYTHON" bench/topk_gpu.py --dim 1024
