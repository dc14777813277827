"""Command-line options of ``mmrhub retrieve`` / ``scripts/embed_retrieve.py``. Imports nothing heavy."""

import argparse
import os

from mmrhub.benchmarks import BENCHMARKS

BACKENDS = ("sentence-transformers", "transformers")
DEFAULT_MODELS = {"sentence-transformers": "Qwen/Qwen3-VL-Embedding-2B", "transformers": "openai/clip-vit-large-patch14"}
DTYPES = ("auto", "float32", "bfloat16", "float16")
SEARCHES = ("torch", "faiss")


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("benchmark", choices=list(BENCHMARKS))
    parser.add_argument("--data-dir", help="the benchmark's data folder or URL (default: the bundled sample)")
    parser.add_argument("--split", help="split to load (default: the benchmark's own, test / train)")
    parser.add_argument("--images-dir", help="M2KR: the folder of the image archives, if not DATA_DIR/images or DATA_DIR")
    parser.add_argument("--output", "-o", help="run file to write (default: runs/<benchmark>_<model>.json)")

    model = parser.add_argument_group("model")
    model.add_argument("--backend", choices=BACKENDS, default="sentence-transformers")
    model.add_argument(
        "--model", help=f"Hub id or local folder (default: {DEFAULT_MODELS['sentence-transformers']} for "
        f"sentence-transformers, {DEFAULT_MODELS['transformers']} for transformers)"
    )
    model.add_argument("--revision", help="Hub revision (branch, tag or commit) of --model")
    model.add_argument("--dtype", choices=DTYPES, default="auto", help="auto: bfloat16 on CUDA, float32 on CPU")
    model.add_argument("--max-length", type=int, help="max text tokens (default: the model's own limit)")
    model.add_argument(
        "--text-weight", type=float, default=0.5,
        help="fusion of separate image and text vectors: normalize((1-w)*image + w*text); image-only inputs use the "
        "image vector (default 0.5; unused by models that embed image+text as one input)",
    )
    model.add_argument("--query-prompt", help="prompt prepended to queries (default: the model's own query prompt)")
    model.add_argument("--batch-size", type=int, default=32)
    model.add_argument(
        "--num-workers", type=int, default=min(4, os.cpu_count() or 1),
        help="DataLoader workers decoding images (default: 4, or fewer on a smaller machine)",
    )
    model.add_argument("--device", help="default: cuda:<local rank> when CUDA is available, else cpu")

    search = parser.add_argument_group("search")
    search.add_argument("--top-k", type=int, default=100)
    search.add_argument("--search", choices=SEARCHES, default="torch", help="exact top-k engine (faiss: IndexFlatIP)")
    search.add_argument(
        "--candidates", metavar="BASELINE",
        help="rerank setting: a run file (e.g. MIPR's <data>/baseline/qwen3_vl_embedding_8b_top50.json) whose "
        "ranked items are each query's candidate pool",
    )

    cache = parser.add_argument_group("cache")
    cache.add_argument("--cache-dir", help="corpus embedding cache (default: $HF_HOME/mmrhub/embeddings)")
    cache.add_argument("--no-cache", action="store_true", help="neither read nor write cached corpus embeddings")
    parser.add_argument("--no-eval", action="store_true", help="write the run without scoring it")
    parser.add_argument("--stats-json", metavar="PATH", help="also write per-phase timings as JSON")
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="embed_retrieve.py", description="Embed queries and corpus, retrieve the exact top-k, write and score the run."
    )
    return add_arguments(parser)
