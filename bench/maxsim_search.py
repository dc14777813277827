"""Exact MaxSim search (PreFLMR's) at M2KR's size: mmrhub's packed, length-chunked search against the plain
ColBERT-style peer (every passage padded to the longest, one (passages, 512, dim) tensor, einsum, max, sum,
torch.topk), same data, same device, same dtype. One step in process: the search alone, the vectors given.

Default size is M2KR's worst case for PreFLMR ViT-G: 47,318 passages of 16..512 kept tokens (uniform; the real
ones are shorter), queries of 320 tokens (32 text + 32 mapping + 256 patch tokens) of which the instruction's ~10%
are masked, 128 dims, top-100, passages in float16 on CUDA (the authors' cast), float32 on CPU. Times a subset of
the 6,415 queries (``--queries``) and scales linearly; FLOPs are 2 x query tokens x passage tokens x dim.
Prints each side's time per query, the ratio, whether the top-k agree, the peak memory against the stated bound
(``maxsim.working_bytes`` + ``maxsim.resident_bytes``), and float16's score difference from float32.

    python bench/maxsim_search.py [--passages 47318 --queries 512 --query-tokens 320 --k 100 --device cuda]
"""

import argparse
import json
import time

import numpy as np


def synchronize(device):
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(function, device):
    synchronize(device)
    start = time.perf_counter()
    result = function()
    synchronize(device)
    return time.perf_counter() - start, result


def padded_peer(queries, kept, padded, padding, k, block):
    """The ColBERT-style exact search: every passage padded to the longest; masked query tokens zeroed."""
    import torch

    queries = queries * kept[..., None]
    values, indices = [], []
    for q0 in range(0, len(queries), block):
        q = queries[q0 : q0 + block]
        scores = []
        for p0 in range(0, len(padded), 2048):
            sim = torch.einsum("qtd,pld->qptl", q, padded[p0 : p0 + 2048])
            sim = sim.masked_fill(padding[p0 : p0 + 2048][None, :, None, :], float("-inf"))
            scores.append(sim.amax(3).float().sum(2))
        best = torch.cat(scores, 1).topk(k, dim=1)
        values.append(best.values)
        indices.append(best.indices)
    return torch.cat(values), torch.cat(indices)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=47_318)
    parser.add_argument("--all-queries", type=int, default=6_415, help="what the time is scaled to")
    parser.add_argument("--queries", type=int, default=512, help="queries timed")
    parser.add_argument("--query-tokens", type=int, default=320)
    parser.add_argument("--shortest", type=int, default=16)
    parser.add_argument("--longest", type=int, default=512)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--device", default=None)
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()

    import torch

    from mmrhub.retrieve.late_interaction import maxsim

    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    dtype = maxsim.passage_dtype(device)
    generator = torch.Generator(device=device).manual_seed(0)
    lengths = np.random.default_rng(0).integers(args.shortest, args.longest + 1, args.passages)
    offsets = torch.from_numpy(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
    vectors = torch.randn(int(offsets[-1]), args.dim, device=device, generator=generator)
    vectors = torch.nn.functional.normalize(vectors, dim=1).to(dtype)
    packed = maxsim.PackedTokens(vectors, offsets)
    queries = torch.randn(args.queries, args.query_tokens, args.dim, device=device, generator=generator)
    queries = torch.nn.functional.normalize(queries, dim=2)
    kept = torch.ones(args.queries, args.query_tokens, dtype=torch.bool, device=device)
    kept[:, 1 : 1 + args.query_tokens // 10] = False  # the instruction's tokens

    maxsim.maxsim_topk(queries[:8], kept[:8], packed, args.k)  # warm-up
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
    ours_s, (ours_scores, ours_ids) = timed(lambda: maxsim.maxsim_topk(queries, kept, packed, args.k), device)
    figures = {
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "passage_dtype": str(dtype),
        "passages": args.passages,
        "kept_passage_tokens": int(offsets[-1]),
        "packed_gb": packed.nbytes / 1e9,
        "queries_timed": args.queries,
        "ours_ms_per_query": 1000 * ours_s / args.queries,
        "ours_projected_s": ours_s / args.queries * args.all_queries,
        "tflops_per_s": 2 * args.query_tokens * int(offsets[-1]) * args.dim * args.queries / ours_s / 1e12,
    }
    itemsize = vectors.element_size()
    block, chunk = maxsim.plan(
        args.queries, args.query_tokens, args.longest, args.k, itemsize, args.dim, maxsim.BUDGET_BYTES[device.type]
    )
    figures["bound_working_gb"] = (
        maxsim.working_bytes(block, args.query_tokens, chunk, args.k, itemsize, args.dim) / 1e9
    )
    if device.type == "cuda":
        figures["peak_above_inputs_gb"] = (torch.cuda.max_memory_allocated(device) - before) / 1e9

    # float16 against float32 for the first queries: the same search on float32 passages
    if dtype != torch.float32:
        few = 32
        exact = maxsim.maxsim_topk(queries[:few], kept[:few], packed.to(dtype=torch.float32), args.k)
        same = (exact[1] == ours_ids[:few]).float().mean().item()
        ours_by_id = torch.full((few, args.passages), float("nan"), device=device)
        ours_by_id.scatter_(1, ours_ids[:few], ours_scores[:few])
        both = ours_by_id.gather(1, exact[1])
        found = ~both.isnan()
        figures["fp16_vs_fp32_same_topk_share"] = same
        figures["fp16_vs_fp32_max_score_difference"] = (both[found] - exact[0][found]).abs().max().item()
        figures["fp16_vs_fp32_max_relative_difference"] = (
            ((both[found] - exact[0][found]).abs() / exact[0][found]).max().item()
        )

    if not args.no_peer:
        width = int(lengths.max())
        position = torch.arange(width)
        rows = (offsets[:-1, None] + torch.minimum(position[None, :], torch.from_numpy(lengths)[:, None] - 1)).to(
            device
        )
        padded = vectors[rows.flatten()].view(args.passages, width, args.dim)
        del rows
        padding = (position[None, :] >= torch.from_numpy(lengths)[:, None]).to(device)
        peer_block = 16
        padded_peer(queries[:8].to(dtype), kept[:8], padded, padding, args.k, peer_block)  # warm-up
        peer_s, (peer_scores, peer_ids) = timed(
            lambda: padded_peer(queries.to(dtype), kept.to(dtype), padded, padding, args.k, peer_block), device
        )
        figures["peer_ms_per_query"] = 1000 * peer_s / args.queries
        figures["ratio_ours_to_peer"] = ours_s / peer_s
        # as sets: torch.topk orders exact ties as it likes, ours by corpus index
        figures["same_topk_share"] = (peer_ids.sort(1).values == ours_ids.sort(1).values).float().mean().item()
        figures["max_score_difference"] = (peer_scores - ours_scores).abs().max().item()
        figures["padded_gb"] = padded.nbytes / 1e9
    print(json.dumps(figures, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)


if __name__ == "__main__":
    main()
