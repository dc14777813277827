"""Write tiny random checkpoints of the real layouts, offline, so that ``mmrhub retrieve``, ``rerank`` and ``baseline``
run on the bundled sample in about a minute on a laptop CPU: a Qwen3-VL embedder and reranker where torchvision is
installed (their presets follow from the folders' names), else a Chinese-CLIP dual encoder (``--backend
transformers``) and a LLaVA CrossEncoder reranker; and a tiny PreFLMR for M2KR (``--preset preflmr``). Their
weights are random: the runs check the pipeline, never a model. Prints the commands to try.

    python scripts/make_tiny_models.py [FOLDER]        (default: tiny-models)
"""

import argparse
import json
import sys
from pathlib import Path


def sample_texts() -> list:
    """The bundled samples' texts (MIPR titles and questions, M2KR passages and questions): the Chinese-CLIP
    tokenizer's vocabulary is built from their characters."""
    from mmrhub.benchmarks import BENCHMARKS

    texts = []
    for benchmark in BENCHMARKS.values():
        for side in (benchmark.queries, benchmark.corpus):
            texts += text_column(benchmark.sample_dir, side)
    return texts


def text_column(folder: Path, side) -> list:
    """A side's texts from the sample's files, without building the benchmark (no images read)."""
    folder = Path(folder)
    found = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else {}
            if isinstance(row.get(side.text_column), str):
                found.append(row[side.text_column])
    for path in sorted(folder.glob(f"{side.config}/*.parquet")):
        import pyarrow.parquet as pq

        table = pq.read_table(path, columns=[side.text_column])
        found += [text for text in table.column(side.text_column).to_pylist() if text]
    return found


def main(argv=None) -> int:
    """Write the tiny models and print how to run them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", default="tiny-models", help="where they go (default: tiny-models)")
    folder = Path(parser.parse_args(argv).folder)
    folder.mkdir(parents=True, exist_ok=True)
    from tiny_models import m2kr_sample_texts
    from tiny_models import make_tiny_models

    from mmrhub.benchmarks import BENCHMARKS

    made = make_tiny_models(folder, sample_texts(), m2kr_sample_texts(BENCHMARKS["m2kr"].sample_dir))
    backend = made["backend"]
    embed = f"--backend {backend} " if backend != "sentence-transformers" else ""
    print(f"Tiny random models ({'Qwen3-VL' if backend == 'sentence-transformers' else 'Chinese-CLIP + LLaVA'}):")
    print(f"  embedding: {made['embedding']}\n  reranker:  {made['reranker']}")
    print("Try, on the bundled MIPR sample:")
    print(f"  mmrhub retrieve mipr {embed}--model {made['embedding']} --top-k 50 -o runs/tiny.json")
    print(f"  mmrhub rerank mipr --candidates runs/tiny.json --model {made['reranker']} -o runs/tiny-reranked.json")
    print(
        f"  mmrhub baseline mipr --embedding-{'backend ' + backend + ' --embedding-' if embed else ''}model "
        f"{made['embedding']} --reranker-model {made['reranker']} --output-dir runs/tiny"
    )
    print(f"PreFLMR (tiny, the ViT-G checkpoint's layout): {made['preflmr']}\nTry, on the bundled M2KR sample:")
    print(
        f"  mmrhub retrieve m2kr --preset preflmr --model {made['preflmr']} "
        f"--image-processor {made['preflmr_image_processor']} --top-k 50 -o runs/tiny-preflmr.json"
    )
    if backend == "sentence-transformers":  # --paper reranks with the Qwen3-VL reranker preset
        print(
            f"  mmrhub baseline m2kr --paper --embedding-model {made['preflmr']} --embedding-image-processor "
            f"{made['preflmr_image_processor']} --reranker-model {made['reranker']} --output-dir runs/tiny-m2kr"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
