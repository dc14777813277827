"""Command-line options of ``mmrhub rerank`` / ``scripts/rerank.py``. Imports nothing heavy."""

import argparse
import os

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.retrieve.options import DTYPES

DEFAULT_RERANKER = "Qwen/Qwen3-VL-Reranker-2B"


def add_model_arguments(group, batch_size: int = 16):
    """The reranker's own options; ``mmrhub baseline`` shares them."""
    group.add_argument("--revision", help="Hub revision (branch, tag or commit) of the reranker")
    group.add_argument("--dtype", choices=DTYPES, default="auto", help="auto: bfloat16 on CUDA, float32 on CPU")
    group.add_argument("--max-length", type=int, help="max tokens of a (query, candidate) input (default: the model's)")
    group.add_argument("--prompt", help="instruction given to the reranker (default: the model's own)")
    group.add_argument("--batch-size", type=int, default=batch_size, help=f"pairs per forward pass (default {batch_size})")
    group.add_argument("--top-n", type=int, help="rerank only the first N candidates of each pool; the rest keep "
                       "their baseline order after them (default: the whole pool)")
    group.add_argument(
        "--num-workers", type=int, default=min(4, os.cpu_count() or 1),
        help="DataLoader workers decoding images (default: 4, or fewer on a smaller machine)",
    )
    group.add_argument("--device", help="default: cuda:<local rank> when CUDA is available, else cpu")
    group.add_argument("--chunk-queries", type=int, default=64,
                       help="queries per cached chunk of scores: an interrupted rerank resumes at the last chunk written")
    group.add_argument("--cache-dir", help="scored-pair cache (default: $HF_HOME/mmrhub/rerank)")
    group.add_argument("--no-cache", action="store_true", help="neither read nor write cached pair scores")


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("benchmark", choices=list(BENCHMARKS))
    parser.add_argument("--candidates", metavar="RUN", required=True,
                        help="the baseline run whose ranked items are each query's pool (e.g. an embedding top-50)")
    parser.add_argument("--data-dir", help="the benchmark's data folder or URL (default: the bundled sample)")
    parser.add_argument("--split", help="split to load (default: the benchmark's own, test / train)")
    parser.add_argument("--images-dir", help="M2KR: the folder of the image archives, if not DATA_DIR/images or DATA_DIR")
    parser.add_argument("--output", "-o", help="run file to write (default: runs/<benchmark>_<model>.json)")
    model = parser.add_argument_group("reranker")
    model.add_argument("--model", default=DEFAULT_RERANKER,
                       help=f"sentence-transformers CrossEncoder: Hub id or local folder (default: {DEFAULT_RERANKER})")
    add_model_arguments(model)
    parser.add_argument("--no-eval", action="store_true", help="write the run without scoring it")
    parser.add_argument("--stats-json", metavar="PATH", help="also write per-phase timings as JSON")
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rerank.py", description="Rerank each query's candidate pool with a multimodal cross-encoder, write and "
        "score the run.",
    )
    return add_arguments(parser)
