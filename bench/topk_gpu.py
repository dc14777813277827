"""Exact top-k throughput (TFLOP/s) of mmrhub's chunked search on a GPU, at the benchmarks' real sizes.

MIPR: 3,522 queries x 30,731 products; M2KR: 6,415 queries x 47,318 passages; random unit vectors, float32
scores (no TF32), k=100. Each size is checked against a float64 CPU search on a slice of the queries.

    python bench/topk_gpu.py [--dim 2048] [--repeat 5] [--device cuda]
"""

import argparse
import time

SIZES = {"mipr": (3522, 30731), "m2kr": (6415, 47318)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, default=2048, help="2048: Qwen3-VL-Embedding-2B's width")
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()

    import torch

    from mmrhub.retrieve.topk import exact_topk

    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    generator = torch.Generator(device=device).manual_seed(0)
    for name, (num_queries, num_corpus) in SIZES.items():
        queries = torch.nn.functional.normalize(
            torch.randn(num_queries, args.dim, device=device, generator=generator), dim=1
        )
        corpus = torch.nn.functional.normalize(
            torch.randn(num_corpus, args.dim, device=device, generator=generator), dim=1
        )
        exact_topk(queries[:256], corpus, args.k)  # warm-up: kernels, allocator
        times = []
        for _ in range(args.repeat):
            sync()
            start = time.perf_counter()
            scores, indices = exact_topk(queries, corpus, args.k)
            sync()
            times.append(time.perf_counter() - start)
        best = min(times)
        tflops = 2 * num_queries * num_corpus * args.dim / best / 1e12
        check = (queries[:64].double().cpu() @ corpus.double().cpu().T).topk(args.k, dim=1).indices
        agree = (check == indices[:64].cpu()).float().mean().item()
        print(
            f"topk {name}: {num_queries:,} x {num_corpus:,} x {args.dim}, k={args.k} on {device}: "
            f"{best * 1000:.1f} ms, {tflops:.1f} TFLOP/s, {num_queries / best:,.0f} queries/s; "
            f"{agree:.2%} of ids equal to a float64 search"
        )


if __name__ == "__main__":
    main()
