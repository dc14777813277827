"""The steps of ``bench/gpu_check.sh``, one subcommand each (the script bounds each with ``timeout``).

    python bench/gpu_check.py data WORK --corpus N --queries N --m2kr-corpus N --m2kr-queries N --rerank-queries N
                                    --rerank-m2kr-queries N
    python bench/gpu_check.py models SIZE FOLDER --which embedding|reranker --device cuda|cpu
    python bench/gpu_check.py vectors RUN [--cache-dir DIR]      fails on NaN or constant vectors / scores
    python bench/gpu_check.py phase LABEL STATS_JSON UTIL_CSV [--candidates N]   LABEL: "rerank 2b mipr shared", ...
    python bench/gpu_check.py agree RUN RUN                      two reranks' scores of the same pairs, compared
    python bench/gpu_check.py preflmr --device cuda [--smoke]   PreFLMR ViT-G encoders and MaxSim over 47,318
    python bench/gpu_check.py preflmr-setup WORK --size vit-g --passages N --queries N [--data DIR]
                                                                checkpoint + M2KR data
    python bench/gpu_check.py preflmr-full WORK --stats STATS_JSON [--device cuda --workers N]
                                                                PreFLMR end to end as baseline m2kr --paper runs it
    python bench/gpu_check.py summary OUTPUT                    the table and $OUT/summary.json; exit 1 unless every
                                                                step ran to its end (failed, timed out, skipped)

Every measured rate goes to ``$SUMMARY`` (JSON Lines) beside the estimate of ``bench/flop_model.py`` for the exact
shapes measured; the two reranker paths' agreement to ``$AGREEMENT``. Random weights: real-size compute,
meaningless vectors.
"""

import argparse
import json
import os
import sys
import time
from datetime import datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "scripts"), str(HERE)]
sys.path.append(str(HERE.parent))  # last: an installed mmrhub (gpu_check.sh installs one) comes first
import flop_model  # noqa: E402
from feed_cpu import photo  # noqa: E402  the same generated images the feed bench decodes
from feed_cpu import screenshot  # noqa: E402

# Synthetic shapes (the FLOP model's estimates are taken for these): a byte-level tokenizer without merges makes
# 3 tokens of a CJK character and 1 of an ASCII one.
CJK = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
SHAPES = {
    "mipr": {"image": (800, 800), "query image": (800, 800), "corpus text": 20 + 30, "query text": 35 + 13},
    "m2kr": {"image": (1024, 2000), "query image": (640, 480), "corpus text": 20 + 500, "query text": 35 + 13},
}


def summary_row(row: dict) -> None:
    with open(os.environ["SUMMARY"], "a", encoding="utf-8") as out:
        out.write(json.dumps(row) + "\n")
    estimate = row.get("estimate")
    versus = f" (estimate {estimate:,.1f}: {row['rate'] / estimate:.2f}x)" if estimate else ""
    print(f"  >> {row['label']}: {row['rate']:,.1f} {row['unit']}{versus}", flush=True)


def make_data(args) -> None:
    """WORK/mipr, WORK/m2kr (M2KR-shaped items in MIPR's layout), and WORK/rerank-mipr and WORK/rerank-m2kr with
    their top-50 candidates (WORK/candidates-mipr.json, WORK/candidates-m2kr.json)."""
    work = Path(args.work)
    make_folder(work / "mipr", "mipr", args.corpus, args.queries)
    make_folder(work / "m2kr", "m2kr", args.m2kr_corpus, args.m2kr_queries)
    for kind, queries in (("mipr", args.rerank_queries), ("m2kr", args.rerank_m2kr_queries)):
        make_folder(work / f"rerank-{kind}", kind, 512 if kind == "mipr" else 128, queries)
        make_candidates(work / f"rerank-{kind}", work / f"candidates-{kind}.json")


def make_folder(folder: Path, kind: str, corpus_size: int, query_count: int) -> None:
    """A MIPR-layout folder of ``kind``-shaped items: MIPR photos and titles, or M2KR screenshots (1024x2000 PNG)
    and ~500-token passages as the corpus with photo queries. 32 distinct images, hard-linked under each name."""
    from PIL import Image

    shape = SHAPES[kind]
    rng = np.random.default_rng(0)
    for sub in ("images/product_images", "images/query_images", "bases"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    suffix = ".jpg" if kind == "mipr" else ".png"
    bases, query_bases = [], []
    for i in range(32):
        width, height = shape["image"]
        image = Image.fromarray(photo(rng, width, height) if kind == "mipr" else screenshot(rng, width, height))
        bases.append(folder / "bases" / f"c{i}{suffix}")
        image.save(bases[-1], **({"quality": 90} if suffix == ".jpg" else {}))
        query_bases.append(folder / "bases" / f"q{i}.jpg")
        Image.fromarray(photo(rng, *shape["query image"])).save(query_bases[-1], quality=90)

    def place(sub, name, source):
        target = folder / "images" / sub / name
        if not target.exists():
            os.link(source, target)

    def text(tokens):  # a title of CJK characters (3 tokens each), or an ASCII passage (1 token a character)
        if kind == "mipr":
            return "".join(rng.choice(CJK, max(1, tokens // 3)))
        words = ["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), rng.integers(2, 9))) for _ in range(tokens)]
        return " ".join(words)[:tokens]

    with open(folder / "mipr_corpus.jsonl", "w", encoding="utf-8") as corpus:
        for i in range(corpus_size):
            place("product_images", f"p{i}{suffix}", bases[i % len(bases)])
            row = {"item_id": f"p{i}", "title": text(shape["corpus text"] - 20), "pict_url": f"p{i}{suffix}"}
            corpus.write(json.dumps({**row, "treecate_full_path": f"c{i % 50}-x"}, ensure_ascii=False) + "\n")
    with open(folder / "mipr_query.jsonl", "w", encoding="utf-8") as queries:
        with open(folder / "mipr_annotation.jsonl", "w", encoding="utf-8") as judged:
            for i in range(query_count):
                place("query_images", f"q{i}.jpg", query_bases[(i * 7 + 3) % len(query_bases)])
                row = {"idx": str(i), "query": "".join(rng.choice(CJK, 4)), "image_url": f"q{i}.jpg"}
                queries.write(json.dumps(row, ensure_ascii=False) + "\n")
                item = {"item_id": f"p{int(rng.integers(corpus_size))}", "final_grade": "L1"}
                judged.write(json.dumps({"idx": str(i), "items": [item]}) + "\n")
    print(f"{folder}: {corpus_size} {kind}-shaped corpus items, {query_count} queries", flush=True)


def make_candidates(folder: Path, output: Path) -> None:
    """A top-50 run of random corpus items for every query (the reranker's input)."""
    rng = np.random.default_rng(1)
    queries = [json.loads(line)["idx"] for line in open(folder / "mipr_query.jsonl", encoding="utf-8")]
    corpus = sum(1 for _ in open(folder / "mipr_corpus.jsonl", encoding="utf-8"))
    run = [
        {
            "qid": q,
            "ranked": [
                {"did": f"p{i}", "score": float(50 - r)} for r, i in enumerate(rng.choice(corpus, 50, replace=False))
            ],
        }
        for q in queries
    ]
    output.write_text(json.dumps(run), encoding="utf-8")


def make_models(args) -> None:
    """The embedder or the reranker of ``size``, random, drawn on ``device``, saved as ``<name>-<size>-random``."""
    from tiny_models import build_qwen3_vl_embedding
    from tiny_models import build_qwen3_vl_reranker

    build, name = {
        "embedding": (build_qwen3_vl_embedding, "Qwen3-VL-Embedding"),
        "reranker": (build_qwen3_vl_reranker, "Qwen3-VL-Reranker"),
    }[args.which]
    folder, started = Path(args.folder), time.perf_counter()
    device = None if args.device == "cpu" else args.device
    model = build(folder / f"build-{name}", size=args.size, device=device)
    model.rename(folder / f"{name}-{args.size}-random")
    print(f"{name}-{args.size}-random: built and saved in {time.perf_counter() - started:.0f} s", flush=True)


def spread_check(name: str, matrix: np.ndarray) -> dict:
    """Fails (exit 1) on a NaN or infinite value, or rows that are all the same (a broken input path feeds every
    item the same tokens; random weights still give different rows for different inputs)."""
    matrix = np.asarray(matrix, dtype=np.float64)
    if not np.isfinite(matrix).all():
        raise SystemExit(f"gpu_check: {name} holds {int((~np.isfinite(matrix)).sum())} NaN or infinite values")
    spread = float(np.abs(matrix - matrix.mean(0, keepdims=True)).max()) if len(matrix) > 1 else 0.0
    if len(matrix) > 1 and spread < 1e-6:
        raise SystemExit(f"gpu_check: {name}: all {len(matrix)} rows are the same (largest deviation {spread:.1e})")
    return {"rows": int(len(matrix)), "spread": spread}


def check_vectors(args) -> None:
    """The corpus embeddings the run cached (``--cache-dir``) and the run's scores: finite and not constant."""
    checked = {}
    if args.cache_dir:
        files = sorted(Path(args.cache_dir).rglob("embeddings.npy"))
        if not files:
            raise SystemExit(f"gpu_check: no embeddings.npy under {args.cache_dir}: the run cached nothing")
        for path in files:
            vectors = np.load(path)
            checked[str(path.parent.name)] = spread_check(f"corpus embeddings {path}", vectors)
            norms = np.linalg.norm(vectors, axis=1)
            checked[str(path.parent.name)]["norm range"] = [float(norms.min()), float(norms.max())]
    entries = json.loads(Path(args.run).read_text(encoding="utf-8"))
    scores = np.array([scored(entry) for entry in entries], dtype=np.float64)
    checked["run scores"] = spread_check(f"scores of {args.run}", scores.T if scores.shape[1] > 1 else scores)
    if scores.shape[1] > 1 and np.ptp(scores, axis=1).max() == 0:
        raise SystemExit(f"gpu_check: every query of {args.run} scores all its items the same")
    print(f"  vectors ok: {json.dumps(checked)}", flush=True)


def scored(entry: dict) -> list:
    """A run entry's scores, less the unscored tail a rerank's --top-n leaves (None)."""
    return [item["score"] for item in entry["ranked"] if item["score"] is not None]


def utilisation(util_csv: str, start: float, end: float) -> tuple:
    """(mean utilisation %, share of samples busy, samples) of nvidia-smi's 100 ms samples within [start, end]."""
    values = []
    if os.path.exists(util_csv):
        for line in open(util_csv, encoding="utf-8"):
            stamp, _, value = line.rpartition(",")
            if value.strip().isdigit():
                when = datetime.strptime(stamp.strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()
                if start <= when <= end:
                    values.append(int(value))
    if not values:
        return None, None, 0
    return sum(values) / len(values), sum(v > 0 for v in values) / len(values), len(values)


def estimate_for(label: str, phase: str, candidates: int = flop_model.RERANK_CANDIDATES) -> float:
    """The FLOP model's rate for this check's shapes: label "embed 2b mipr", "rerank 8b mipr shared", "rerank 8b
    m2kr whole", ... (``candidates``: a query's pairs, over which the shared path spreads its prefix)."""
    kind, size, data = label.split()[:3]
    if kind == "preflmr":
        return preflmr_estimate(label, phase)
    if size not in ("2b", "8b"):
        return None
    shape = SHAPES[data]
    if kind == "rerank":
        closing = flop_model.RERANK_CLOSING
        prefix = flop_model.TEXT_TOKENS["rerank template"] - closing + shape["query text"] - 20
        suffix = closing + shape["corpus text"] - 20
        if label.split()[3:4] == ["shared"]:
            cost = flop_model.qwen_rerank_shared(
                size, shape["query image"], shape["image"], (prefix, suffix), candidates
            )
        else:
            cost = flop_model.qwen_rerank(size, shape["query image"], shape["image"], prefix + suffix)
        return cost.per_second()
    if phase == "embed corpus":
        return flop_model.qwen_embed(size, shape["image"], shape["corpus text"]).per_second()
    if phase == "embed queries":
        return flop_model.qwen_embed(size, shape["query image"], shape["query text"]).per_second()
    return None


def report_phase(args) -> None:
    """Each phase of a ``--stats-json`` with its rate, GPU utilisation and peak memory, beside the estimate."""
    stats = json.loads(Path(args.stats).read_text(encoding="utf-8"))
    for name, phase in stats["phases"].items():
        if not phase.get("items_per_s"):
            continue
        mean, busy, samples = utilisation(args.util, phase["end"] - phase["seconds"], phase["end"])
        summary_row(
            {
                "label": f"{args.label}, {name}",
                "rate": phase["items_per_s"],
                "unit": "pairs/s" if name == "rerank" else "items/s",
                "items": phase["items"],
                "seconds": phase["seconds"],
                "estimate": estimate_for(args.label, name, args.candidates),
                "gpu_util_mean": mean,
                "gpu_busy_share": busy,
                "util_samples": samples,
                "max_memory_allocated_gib": stats.get("cuda_max_memory_allocated", 0) / 2**30,
            }
        )


def preflmr_estimate(label: str, phase: str):
    """The FLOP model's PreFLMR ViT-G rate for a pipeline phase (passages at their 512-token worst case): float32
    without TF32, the preset's dtype, unless the label says bfloat16; None for other sizes."""
    if " vit-g " not in f" {label} ":
        return None
    tflops = flop_model.SUSTAINED_TFLOPS if "bfloat16" in label else flop_model.SUSTAINED_FP32_TFLOPS
    cost = {"embed corpus": flop_model.preflmr_passage, "embed queries": flop_model.preflmr_query}.get(phase)
    return cost().per_second(tflops) if cost else None


def agree(args) -> None:
    """How far two reranks of the same pairs agree (the shared prefix against whole pairs, in the GPU's dtype):
    the largest score difference and the queries whose whole ranking is the same, to ``$AGREEMENT``."""
    runs = [json.loads(Path(path).read_text(encoding="utf-8")) for path in (args.first, args.second)]
    scores = [
        {(e["qid"], i["did"]): i["score"] for e in run for i in e["ranked"] if i["score"] is not None} for run in runs
    ]
    if scores[0].keys() != scores[1].keys():
        raise SystemExit(f"gpu_check: {args.first} and {args.second} score different pairs")
    difference = max(abs(scores[0][pair] - scores[1][pair]) for pair in scores[0])
    same = sum([i["did"] for i in a["ranked"]] == [i["did"] for i in b["ranked"]] for a, b in zip(runs[0], runs[1]))
    row = {
        "runs": [Path(args.first).name, Path(args.second).name],
        "pairs": len(scores[0]),
        "largest_score_difference": difference,
        "queries_ranked_alike": same,
        "queries": len(runs[0]),
    }
    with open(os.environ["AGREEMENT"], "a", encoding="utf-8") as out:
        out.write(json.dumps(row) + "\n")
    print(
        f"  >> {row['runs'][0]} vs {row['runs'][1]}: {row['pairs']} pairs, largest score difference "
        f"{difference:.2e}, {same} of {len(runs[0])} queries ranked alike",
        flush=True,
    )


def timed(step, sync, repeats: int) -> float:
    """Seconds of one call of ``step`` (median of ``repeats`` after one warm-up)."""
    step()
    sync()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - started)
    return sorted(times)[len(times) // 2]


def preflmr_parts(smoke: bool, device, dtype):
    """PreFLMR ViT-G's compute parts built from transformers' own classes at the real layout (random weights):
    the CLIP ViT-bigG/14 vision tower, the BERT-base query and context encoders, the CLS MLP and the mapping
    network (one BERT layer with cross-attention). ``smoke``: the same parts, tiny."""
    import torch
    from transformers import BertConfig
    from transformers import BertModel
    from transformers import CLIPVisionConfig
    from transformers import CLIPVisionModel
    from transformers.models.bert.modeling_bert import BertEncoder

    v, b = flop_model.PREFLMR["vision"], flop_model.PREFLMR["bert"]
    if smoke:
        v, b = dict(layers=2, width=32, mlp=64, patch=14, image=224), dict(layers=2, width=32, mlp=64)
    vision_config = CLIPVisionConfig(
        hidden_size=v["width"], intermediate_size=v["mlp"], num_hidden_layers=v["layers"],
        num_attention_heads=16 if not smoke else 2, image_size=v["image"], patch_size=v["patch"], hidden_act="gelu",
    )  # fmt: skip
    bert = dict(hidden_size=b["width"], intermediate_size=b["mlp"], num_hidden_layers=b["layers"])
    if smoke:
        bert["num_attention_heads"] = 2
    mapping = BertConfig(**{**bert, "num_hidden_layers": 1}, is_decoder=True, add_cross_attention=True)
    mapping._attn_implementation = "sdpa"  # a BertEncoder alone is never dispatched by a model's init
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            dim, prefix = flop_model.PREFLMR["dim"], flop_model.PREFLMR["prefix"]
            parts = {
                "vision": CLIPVisionModel(vision_config),
                "query text": BertModel(BertConfig(**bert), add_pooling_layer=False),
                "context text": BertModel(BertConfig(**bert), add_pooling_layer=False),
                "cls mlp": torch.nn.Sequential(
                    torch.nn.Linear(v["width"], dim * prefix // 2),
                    torch.nn.ReLU(),
                    torch.nn.Linear(dim * prefix // 2, dim * prefix),
                ),
                "mapping in": torch.nn.Linear(v["width"], b["width"]),
                "mapping": BertEncoder(mapping),
                "mapping out": torch.nn.Linear(b["width"], dim),
                "text out": torch.nn.Linear(b["width"], dim),
            }
    finally:
        torch.set_default_dtype(default)
    return {name: part.eval() for name, part in parts.items()}, v, b


def run_preflmr(args) -> None:
    """Passages/s and queries/s of PreFLMR ViT-G's encoders, then exact MaxSim over 47,318 passages."""
    import torch

    device = torch.device(args.device)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    torch.manual_seed(0)
    results = {}
    with torch.inference_mode():
        parts, v, b = preflmr_parts(args.smoke, device, dtype)
        p = flop_model.PREFLMR
        batch = args.passage_batch
        ids = torch.randint(1000, 30000, (batch, p["doc_maxlen"]), device=device)
        mask = torch.ones_like(ids)

        def passages():
            states = parts["context text"](input_ids=ids, attention_mask=mask).last_hidden_state
            return torch.nn.functional.normalize(parts["text out"](states), dim=-1)

        seconds = timed(passages, sync, 3)
        results["passages/s"] = batch / seconds
        queries_n = args.query_batch
        pixels = torch.randn(queries_n, 3, v["image"], v["image"], device=device, dtype=dtype)
        query_ids = torch.randint(1000, 30000, (queries_n, p["query_maxlen"]), device=device)
        query_mask = torch.ones_like(query_ids)

        def queries():
            text = parts["query text"](input_ids=query_ids, attention_mask=query_mask).last_hidden_state
            seen = parts["vision"](pixel_values=pixels, output_hidden_states=True)
            cls = parts["cls mlp"](seen.last_hidden_state[:, 0]).view(queries_n, -1, p["dim"])
            mapped = parts["mapping"](
                parts["mapping in"](seen.hidden_states[-2][:, 1:]),
                encoder_hidden_states=text[:, : p["cross_attention_length"]],
            )
            mapped = parts["mapping out"](
                mapped.last_hidden_state if hasattr(mapped, "last_hidden_state") else mapped[0]
            )
            out = torch.cat([parts["text out"](text), cls, mapped], 1)
            return torch.nn.functional.normalize(out, dim=-1)

        seconds = timed(queries, sync, 3)
        results["queries/s"] = queries_n / seconds
        query_vectors = queries()
        results["query vectors"] = int(query_vectors.shape[1])
        spread_check("PreFLMR query vectors", query_vectors.float().flatten(1).cpu().numpy())
        spread_check("PreFLMR passage vectors", passages().float()[:, 0].cpu().numpy())
        parts.clear()  # frees the encoders before MaxSim
    peak = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None
    layout = "tiny" if args.smoke else "vit-g"
    for name, estimate, size in (
        ("passages/s", flop_model.preflmr_passage().per_second(), batch),
        ("queries/s", flop_model.preflmr_query().per_second(), queries_n),
    ):
        summary_row(
            {
                "label": f"preflmr {layout} {name.split('/')[0]} (encoders, {str(dtype)[6:]}, batch {size})",
                "rate": results[name],
                "unit": name,
                "estimate": None if args.smoke else estimate,
                "max_memory_allocated_gib": peak,
            }
        )
    maxsim(args, device, sync)


def maxsim(args, device, sync) -> None:
    """Exact MaxSim top-100 of ``--maxsim-queries`` queries (320 vectors of 128) over 47,318 packed passages of
    256-512 kept tokens (``mmrhub/retrieve/late_interaction/maxsim.py``), extrapolated to M2KR's 6,415 queries."""
    import torch

    try:
        from mmrhub.retrieve.late_interaction.maxsim import concat
        from mmrhub.retrieve.late_interaction.maxsim import maxsim_topk
        from mmrhub.retrieve.late_interaction.maxsim import pack
    except ImportError as error:
        print(
            f"  MaxSim skipped: {error} (mmrhub/retrieve/late_interaction/maxsim.py is not on this branch yet)",
            flush=True,
        )
        return
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    generator = torch.Generator(device=device).manual_seed(0)
    passages = 512 if args.smoke else flop_model.COUNTS["m2kr corpus"]
    dim, longest = flop_model.PREFLMR["dim"], flop_model.PREFLMR["doc_maxlen"]
    parts, total = [], 0
    started = time.perf_counter()
    with torch.inference_mode():
        for start in range(0, passages, 1024):
            n = min(1024, passages - start)
            vectors = torch.randn(n, longest, dim, device=device, generator=generator, dtype=torch.float16)
            vectors = torch.nn.functional.normalize(vectors, dim=-1)
            lengths = torch.randint(256, longest + 1, (n,), device=device, generator=generator)
            keep = torch.arange(longest, device=device)[None] < lengths[:, None]
            parts.append(pack(vectors, keep))
            total += int(lengths.sum())
            del vectors
        packed = concat(parts)
        parts.clear()  # frees the encoders before MaxSim
        sync()
        pack_s = time.perf_counter() - started
        queries = torch.nn.functional.normalize(
            torch.randn(
                args.maxsim_queries, flop_model.preflmr_query_vectors(), dim, device=device, generator=generator
            ),
            dim=-1,
        )
        query_mask = torch.ones(queries.shape[:2], dtype=torch.bool, device=device)
        query_mask[:, 20:32] = False  # the text's padding, as a real query has
        maxsim_topk(queries[:2], query_mask[:2], packed, 100)  # warm-up
        sync()
        started = time.perf_counter()
        scores, _ = maxsim_topk(queries, query_mask, packed, 100)
        sync()
        seconds = time.perf_counter() - started
    spread_check("MaxSim top-100 scores", scores.cpu().numpy().T)
    kind = str(packed.vectors.dtype).replace("torch.", "")
    mean_tokens = total / passages
    estimate = flop_model.maxsim_seconds_per_query(passages, mean_tokens)["seconds"]
    per_query = seconds / args.maxsim_queries
    summary_row(
        {
            "label": f"maxsim exact top-100 over {passages:,} passages ({mean_tokens:.0f} kept tokens each, {kind})",
            "rate": 1 / per_query,
            "unit": "queries/s",
            "estimate": None if args.smoke else 1 / estimate,
            "seconds_a_query": per_query,
            "m2kr_6415_queries_s": per_query * flop_model.COUNTS["m2kr queries"],
            "packed_gib": packed.nbytes / 2**30,
            "pack_seconds": pack_s,
            "max_memory_allocated_gib": torch.cuda.max_memory_allocated(device) / 2**30
            if device.type == "cuda"
            else None,
        }
    )


def preflmr_setup(args) -> None:
    """A random PreFLMR checkpoint of ``size`` (``build_preflmr``) in WORK/preflmr, and synthetic M2KR data of the
    real layout (bench/make_m2kr_synthetic.py: tables, query zip, split screenshot zip) in WORK/``--data``."""
    import make_m2kr_synthetic
    from tiny_models import build_preflmr

    work, started = Path(args.work), time.perf_counter()
    device = None if args.device == "cpu" else args.device
    build_preflmr(work / "preflmr", size=args.size, device=device)
    print(f"PreFLMR {args.size} random: built and saved in {time.perf_counter() - started:.0f} s", flush=True)
    started = time.perf_counter()
    make_m2kr_synthetic.make(work / args.data, queries=args.queries, passages=args.passages)
    print(f"M2KR data, {args.passages:,} passages and {args.queries:,} queries: {time.perf_counter() - started:.0f} s")


FULL_RUNS = "runs-full"  # preflmr-full's output folder under WORK


def preflmr_full(args) -> None:
    """PreFLMR end to end on synthetic M2KR (WORK/``--data``) with the checkpoint in WORK/preflmr, with the options
    ``mmrhub baseline m2kr --paper`` gives the retrieval (the preflmr preset, float32 as the authors load it, exact
    MaxSim top-50, the preset's workers and batches), only the model, image processor, device and workers named
    here; no cache, unscored (random weights), the phases written to ``--stats``."""
    import argparse
    from dataclasses import replace

    from mmrhub.commands import baseline
    from mmrhub.retrieve import pipeline

    work = Path(args.work)
    parser = argparse.ArgumentParser()
    baseline.register(parser.add_subparsers())
    given = ["baseline", "m2kr", "--paper", "--data-dir", str(work / args.data), "--no-cache"]
    given += ["--embedding-model", str(work / "preflmr"), "--device", args.device, "--num-workers", str(args.workers)]
    given += ["--embedding-image-processor", str(work / "preflmr" / "clip-image-processor")]
    given += ["--output-dir", str(work / FULL_RUNS)]
    options, reranking = baseline.pipeline_options(parser.parse_args(given))
    if reranking is not None or options.runtime.dtype != "float32" or options.settings.preset != "preflmr":
        raise SystemExit(f"baseline m2kr --paper's options changed: {options.runtime.dtype}, {options.settings}")
    options = replace(options, output=replace(options.output, stats_json=args.stats))
    started = time.perf_counter()
    pipeline.run(options)
    print(f"PreFLMR end to end ({options.runtime.dtype}): {time.perf_counter() - started:.0f} s", flush=True)


def summary(args) -> None:
    """The table of every measured figure beside its estimate, and ``summary.json`` beside the log."""
    rows = [json.loads(line) for line in open(os.environ["SUMMARY"], encoding="utf-8") if line.strip()]
    steps = [json.loads(line) for line in open(os.environ["STEPS"], encoding="utf-8") if line.strip()]
    print("| what | measured | FLOP model | measured / model | GPU util (mean, busy) | peak allocated |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        estimate = row.get("estimate")
        util = row.get("gpu_util_mean")
        util_text = f"{util:.0f}%, {row['gpu_busy_share']:.0%}" if util is not None else "-"
        memory = row.get("max_memory_allocated_gib")
        model = f"{estimate:,.1f}" if estimate else "-"
        ratio = f"{row['rate'] / estimate:.2f}" if estimate else "-"
        memory_text = f"{memory:.1f} GiB" if memory else "-"
        print(
            f"| {row['label']} | {row['rate']:,.1f} {row['unit']} | {model} | {ratio} | {util_text} | {memory_text} |"
        )
    agreement = []
    if os.path.exists(os.environ.get("AGREEMENT", "")):
        agreement = [json.loads(line) for line in open(os.environ["AGREEMENT"], encoding="utf-8") if line.strip()]
    if agreement:
        print("\n| reranks compared | pairs | largest score difference | queries ranked alike |\n|---|---:|---:|---:|")
        for row in agreement:
            alike = f"{row['queries_ranked_alike']} of {row['queries']}"
            print(f"| {' vs '.join(row['runs'])} | {row['pairs']} | {row['largest_score_difference']:.2e} | {alike} |")
    print("\n| step | status | seconds |\n|---|---|---:|")
    for step in steps:
        print(f"| {step['step']} | {step['status']} | {step['seconds']} |")
    record = {
        "assumptions": {
            "sustained_tflops_bf16": flop_model.SUSTAINED_TFLOPS,
            "sustained_hbm_tbps": flop_model.SUSTAINED_HBM_TBPS,
        },
        "environment": json.loads(os.environ.get("ENVIRONMENT", "{}")),
        "measured": rows,
        "agreement": agreement,
        "steps": steps,
    }
    Path(args.output).write_text(json.dumps(record, indent=1), encoding="utf-8")
    undone = [step for step in steps if step["status"] != "ok"]
    if undone:
        named = ", ".join(f"{step['step']} ({STATUS_WORDS.get(step['status'], step['status'])})" for step in undone)
        print(
            f"\ngpu_check: {len(undone)} step(s) did not run to their end: {named}; their figures are missing "
            "(the log above says why)"
        )
        raise SystemExit(1)


STATUS_WORDS = {"skipped": "skipped: the budget was spent", "timed out": "timed out", "failed": "failed"}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    data = commands.add_parser("data")
    data.add_argument("work")
    for name in (
        "--corpus",
        "--queries",
        "--m2kr-corpus",
        "--m2kr-queries",
        "--rerank-queries",
        "--rerank-m2kr-queries",
    ):
        data.add_argument(name, type=int, required=True)
    models = commands.add_parser("models")
    models.add_argument("size")
    models.add_argument("folder")
    models.add_argument("--which", choices=("embedding", "reranker"), required=True)
    models.add_argument("--device", default="cuda")
    vectors = commands.add_parser("vectors")
    vectors.add_argument("run")
    vectors.add_argument("--cache-dir")
    phase = commands.add_parser("phase")
    phase.add_argument("label")
    phase.add_argument("stats")
    phase.add_argument("util")
    phase.add_argument("--candidates", type=int, default=flop_model.RERANK_CANDIDATES)
    agreement = commands.add_parser("agree")
    agreement.add_argument("first")
    agreement.add_argument("second")
    preflmr = commands.add_parser("preflmr")
    preflmr.add_argument("--device", default="cuda")
    preflmr.add_argument("--smoke", action="store_true")
    preflmr.add_argument("--passage-batch", type=int, default=128)
    preflmr.add_argument("--query-batch", type=int, default=64)
    preflmr.add_argument("--maxsim-queries", type=int, default=64)
    setup = commands.add_parser("preflmr-setup")
    setup.add_argument("work")
    setup.add_argument("--size", default="vit-g")
    setup.add_argument("--device", default="cuda")
    setup.add_argument("--passages", type=int, default=2048)
    setup.add_argument("--queries", type=int, default=256)
    setup.add_argument("--data", default="m2kr-real", help="the data's folder under WORK")
    full = commands.add_parser("preflmr-full")
    full.add_argument("work")
    full.add_argument("--data", default="m2kr-full")
    full.add_argument("--device", default="cuda")
    full.add_argument("--workers", type=int, default=1)
    full.add_argument("--stats", required=True)
    final = commands.add_parser("summary")
    final.add_argument("output")
    args = parser.parse_args(argv)
    {
        "data": make_data,
        "models": make_models,
        "vectors": check_vectors,
        "phase": report_phase,
        "agree": agree,
        "preflmr": run_preflmr,
        "preflmr-setup": preflmr_setup,
        "preflmr-full": preflmr_full,
        "summary": summary,
    }[args.command](args)


if __name__ == "__main__":
    main()
