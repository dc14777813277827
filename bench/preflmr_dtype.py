"""What running PreFLMR in bfloat16 instead of its authors' float32 changes, at the real layout's widths: a random
PreFLMR of ViT-G's layout (``scripts/tiny_models.py`` ``build_preflmr``, size ``vit-g``: ViT-bigG/14, BERT-base
query and context encoders, the mapping network) encodes the bundled M2KR sample's queries (instruction, question,
image) and passages through the pipeline's own encoder (``PreFLMREncoder``), once loaded in float32 and once in
bfloat16, on CPU; every (query, passage) pair is scored by exact MaxSim in float32 from each side's vectors.

Printed (and written with ``--json``): the largest score change as a share of the query's largest score, the
largest change relative to the score itself, and how many queries' top-10 changed (as an ordered list and as a
set), with the mean top-10 overlap. Random weights: the sizes and the arithmetic are the real model's, the vectors
mean nothing, so this measures how far bfloat16's rounding carries at these widths, not a trained model's
rankings.

    python bench/preflmr_dtype.py [--size vit-g] [--queries 30] [--work /tmp/preflmr-dtype] [--json out.json]

ViT-G's checkpoint takes about 9 GB of disk and 9 GB of memory in float32 (then 4.5 GB in bfloat16).
"""

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

TOP = 10


def sample_rows(queries: int) -> tuple:
    """(query Rows, passage Rows) of the bundled M2KR sample, images decoded as PreFLMR reads them."""
    from datasets import Image

    import m2kr
    from mmrhub.retrieve.data_loading import Row
    from mmrhub.retrieve.images import decoded
    from mmrhub.retrieve.presets import EXIF_IGNORE

    table = m2kr.load("challenge_data").cast_column("image", Image(decode=False))
    passages = m2kr.load("challenge_passage")
    rows = [
        Row(row["question_id"], row["question"], decoded(row["image"], EXIF_IGNORE), row["instruction"])
        for row in table.select(range(min(queries, len(table))))
    ]
    corpus = [Row(i, text, None) for i, text in zip(passages["passage_id"], passages["passage_content"])]
    return rows, corpus


def encode_all(encoder, rows: list, role: str, batch: int) -> tuple:
    """(vectors float32, kept mask) of ``rows`` through ``encoder``, ``batch`` at a time, padded to the longest."""
    import torch

    from mmrhub.retrieve.late_interaction.tokens import padded

    collate, parts = encoder.collate(role), []
    for start in range(0, len(rows), batch):
        parts.append(encoder.encode(collate(rows[start : start + batch]), role))
    width = max(vectors.shape[1] for vectors, _ in parts)
    return (
        torch.cat([padded(vectors.float(), width) for vectors, _ in parts]),
        torch.cat([padded(kept, width) for _, kept in parts]),
    )


def maxsim_all(queries, query_kept, passages, passage_kept):
    """Every (query, passage) MaxSim score in float32: (Q, P)."""
    import torch

    scores = []
    for vectors, kept in zip(queries, query_kept):
        similarity = torch.einsum("td,psd->pts", vectors[kept], passages)
        best = similarity.masked_fill(~passage_kept[:, None, :], float("-inf")).max(-1).values
        scores.append(best.sum(-1))
    return torch.stack(scores)


def compare(reference, other) -> dict:
    """How ``other``'s scores (Q, P) differ from ``reference``'s: sizes and top-10 agreement."""
    import torch

    change = (other - reference).abs()
    largest = reference.abs().max(dim=1, keepdim=True).values
    top_ref = reference.topk(TOP, dim=1).indices
    top_other = other.topk(TOP, dim=1).indices
    overlap = [len(set(a.tolist()) & set(b.tolist())) / TOP for a, b in zip(top_ref, top_other)]
    return {
        "queries": int(reference.shape[0]),
        "passages": int(reference.shape[1]),
        "max_change_of_largest": float((change / largest).max()),
        "median_change_of_largest": float((change / largest).median()),
        "max_relative_change": float((change / reference.abs().clamp_min(1e-12)).max()),
        "top10_order_changed": int(sum(not torch.equal(a, b) for a, b in zip(top_ref, top_other))),
        "top10_set_changed": int(sum(value < 1 for value in overlap)),
        "top10_mean_overlap": sum(overlap) / len(overlap),
        "top1_changed": int((top_ref[:, 0] != top_other[:, 0]).sum()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="vit-g", help="build_preflmr's size: vit-g (the real widths) or tiny")
    parser.add_argument("--queries", type=int, default=30, help="of the sample's 30")
    parser.add_argument("--work", type=Path, default=Path("/tmp/preflmr-dtype"))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", action="store_true", help="keep the checkpoint in --work for another run")
    args = parser.parse_args()

    import torch
    from tiny_models import PREFLMR_PROCESSOR
    from tiny_models import build_preflmr
    from tiny_models import m2kr_sample_texts

    from mmrhub.retrieve.late_interaction.preflmr.encoder import build_preflmr_encoder

    folder = args.work / f"preflmr-{args.size}"
    started = time.perf_counter()
    if not (folder / "config.json").is_file():
        build_preflmr(folder, args.size, texts=m2kr_sample_texts(ROOT / "data" / "m2kr"))
        print(f"built {folder} in {time.perf_counter() - started:.0f} s", flush=True)
    rows, corpus = sample_rows(args.queries)
    scores = {}
    for dtype in (torch.float32, torch.bfloat16):
        began = time.perf_counter()
        encoder = build_preflmr_encoder(str(folder), image_processor=str(folder / PREFLMR_PROCESSOR), dtype=dtype)
        passages = encode_all(encoder, corpus, "corpus", 32)
        queries = encode_all(encoder, rows, "queries", 2)
        del encoder
        scores[str(dtype)] = maxsim_all(*queries, *passages)
        print(
            f"{dtype}: {len(rows)} queries, {len(corpus)} passages in {time.perf_counter() - began:.0f} s", flush=True
        )
    result = {
        "size": args.size,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        **compare(scores["torch.float32"], scores["torch.bfloat16"]),
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    if not args.keep:
        shutil.rmtree(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
