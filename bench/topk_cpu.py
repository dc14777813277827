"""Exact top-k on CPU: mmrhub's chunked torch search against faiss-cpu IndexFlatIP, same data, same threads.

Default size is MIPR's: 3,522 queries x 30,731 products x 1024 dims (Qwen3-VL-Embedding-2B width), k=100.
Prints each engine's best-of-N time, the ratio (target: torch <= 1.1x faiss) and whether the results agree.

    python bench/topk_cpu.py [--queries 3522 --corpus 30731 --dim 1024 --k 100 --repeat 3]
"""

import argparse
import time

import numpy as np


def best_time(function, repeat):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=3522)
    parser.add_argument("--corpus", type=int, default=30731)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, help="default: torch's default thread count")
    args = parser.parse_args()

    import faiss
    import torch

    from mmrhub.retrieve.topk import exact_topk

    if args.threads:
        torch.set_num_threads(args.threads)
    threads = torch.get_num_threads()
    faiss.omp_set_num_threads(threads)

    rng = np.random.default_rng(0)

    def unit(rows):
        x = rng.standard_normal((rows, args.dim), dtype=np.float32)
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    queries, corpus = unit(args.queries), unit(args.corpus)
    index = faiss.IndexFlatIP(args.dim)
    index.add(corpus)
    q_t, c_t = torch.from_numpy(queries), torch.from_numpy(corpus)

    exact_topk(q_t[:64], c_t, args.k)  # warm-up: thread pools, allocator
    index.search(queries[:64], args.k)
    faiss_s, (faiss_scores, faiss_ids) = best_time(lambda: index.search(queries, args.k), args.repeat)
    torch_s, (torch_scores, torch_ids) = best_time(lambda: exact_topk(q_t, c_t, args.k), args.repeat)

    same_ids = float((torch_ids.numpy() == faiss_ids).mean())
    max_diff = float(np.abs(torch_scores.numpy() - faiss_scores).max())
    gflop = 2 * args.queries * args.corpus * args.dim / 1e9
    print(f"exact top-{args.k}: {args.queries:,} queries x {args.corpus:,} corpus x {args.dim} dims, {threads} threads")
    print(f"faiss IndexFlatIP  {faiss_s:8.3f} s  ({gflop / faiss_s:6.1f} GFLOP/s)")
    print(f"mmrhub exact_topk  {torch_s:8.3f} s  ({gflop / torch_s:6.1f} GFLOP/s)")
    print(f"ratio torch/faiss  {torch_s / faiss_s:8.3f}  (target <= 1.10)")
    print(f"agreement: {same_ids:.4%} of ranked ids identical, max score difference {max_diff:.2e}")


if __name__ == "__main__":
    main()
