"""The arguments several commands share, and how they become the library's typed requests: the scoring commands'
(a ScoringRequest), the builders' (their keywords) and the model commands' (the retrieve wing's options).

In every command ``args.benchmark`` is the benchmark's declaration (a ``Benchmark``), never its name: the scoring
commands set it per subcommand, the others convert the positional name (``add_benchmark_argument``)."""

import argparse
from dataclasses import replace

from mmr_inputs import refuse_link_loop
from mmrhub.benchmarks import BENCHMARKS
from mmrhub.commands.converters import choice_of
from mmrhub.commands.converters import comma_list
from mmrhub.commands.converters import non_negative_int
from mmrhub.commands.converters import pixels
from mmrhub.commands.converters import positive_int
from mmrhub.commands.converters import query_id_list
from mmrhub.commands.converters import requests
from mmrhub.commands.converters import seconds
from mmrhub.commands.converters import whole_number
from mmrhub.declaration import Benchmark
from mmrhub.retrieve.options import DTYPES
from mmrhub.retrieve.options import DataOptions
from mmrhub.retrieve.options import ModelSettings
from mmrhub.retrieve.options import OutputOptions
from mmrhub.retrieve.options import RunOptions
from mmrhub.retrieve.options import default_num_workers
from mmrhub.retrieve.presets import EXIF_CHOICES
from mmrhub.retrieve.presets import NONE
from mmrhub.retrieve.presets import PRESET_CHOICES
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.runs.trec import ORDERS
from mmrhub.scoring.runs.validation import MISSING_QUERIES


def add_scoring_arguments(parser, benchmark: Benchmark, oracle: bool = True, json: bool = True) -> None:
    """What every scoring command takes: the data, the cutoffs, the benchmark's options, --json. ``oracle=False``
    for a command that scores no oracle (compare): the oracle's own options are then not offered; ``json=False``
    for one that writes its values elsewhere (leaderboard)."""
    add_data_dir_argument(parser)
    k = ",".join(map(str, benchmark.measures.DEFAULT_K))
    cutoff = whole_number(1, benchmark.max_cutoff)  # as the metric module takes k
    parser.add_argument("--k", type=comma_list(cutoff), metavar="K[,K...]", help=f"cutoffs (default: {k})")
    for option in benchmark.options:
        if option.oracle and not oracle:
            continue
        flag = "--" + option.name.replace("_", "-")
        if option.many:
            choices = ",".join(option.choices)
            parser.add_argument(
                flag,
                type=comma_list(choice_of(option.choices)),
                default=list(option.default),
                metavar="NAME[,NAME...]",
                help=f"{option.help} (any of {choices}; default: {','.join(option.default)})",
            )
        else:
            help = f"{option.help} (default: {option.default})"
            parser.add_argument(flag, choices=option.choices, default=option.default, help=help)
    parser.add_argument(
        "--ignore-unknown-queries",
        action="store_true",
        help="set aside entries of queries that are not the benchmark's (e.g. another track's rows in a Kaggle "
        "file), saying how many; without it they are an error",
    )
    parser.add_argument(
        "--trec-order",
        choices=ORDERS,
        default="score",
        help="how a TREC run's lines are ordered within a query: 'score' (default) as trec_eval orders them, score "
        "descending then docid descending, the rank column ignored; 'rank': by the rank column (JSON runs keep their "
        "list order, which is their ranking; dict runs are ordered as trec_eval orders them)",
    )
    parser.add_argument(
        "--missing-queries",
        choices=MISSING_QUERIES,
        default="refuse",
        help="a judged query a run does not list: 'refuse' the run (default), or 'zero': score it 0 on every measure "
        "and keep it in the means, as trec_eval -c does (the table says how many)",
    )
    if json:
        parser.add_argument("--json", metavar="OUT", help="also write every value (in [0, 1], aggregate and per query)")
    parser.set_defaults(benchmark=benchmark)


def add_data_dir_argument(parser, urls: bool = False, default: str = "the bundled sample") -> None:
    """``--data-dir``, as every command takes it: the benchmark's data folder (``urls``: or a URL, where the builder
    reads the data; scoring reads local tables only). Left out, the command reads the bundled sample
    (``Benchmark.data_folder``), and says so."""
    where = "folder or URL" if urls else "folder"
    parser.add_argument("--data-dir", help=f"the benchmark's data {where} (default: {default})")


def scoring_request(args, runs=(), **fields) -> ScoringRequest:
    """The request the parsed arguments of a scoring command describe; ``fields`` add or override its fields."""
    benchmark = args.benchmark
    measures = {"k": tuple(args.k or benchmark.measures.DEFAULT_K)}
    oracle = {}
    for option in benchmark.options:
        if option.oracle and not hasattr(args, option.name):
            continue  # a command that scores no oracle (compare) offers none of its options
        value = getattr(args, option.name)
        (oracle if option.oracle else measures)[option.name] = tuple(value) if option.many else value
    request = ScoringRequest(
        benchmark=benchmark,
        data_dir=args.data_dir,
        runs=tuple(str(run) for run in runs),
        names=tuple(getattr(args, "name", None) or ()),
        oracle=getattr(args, "oracle", None),
        rerank=getattr(args, "rerank", None),
        measure_options=measures,
        oracle_options=oracle,
        breakdown=getattr(args, "breakdown", False),
        ignore_unknown_queries=args.ignore_unknown_queries,
        trec_order=args.trec_order,
        missing_queries=args.missing_queries,
    )
    request = replace(request, **fields)
    for path in (*request.runs, request.oracle, request.rerank):
        if path:
            refuse_link_loop(path)  # before any path is resolved
    return request


def add_build_arguments(parser, images_dir: bool = True) -> None:
    """The options of the commands that build a benchmark's configs: the image checks, and where archives are."""
    parser.add_argument(
        "--no-check-images",
        dest="check_images",
        action="store_false",
        help="skip the checks of the image folders and archives (M2KR then reads no archive)",
    )
    if images_dir:
        parser.add_argument("--images-dir", help=IMAGES_DIR_HELP)
        add_download_archives_argument(parser)
        add_remote_arguments(parser)


def add_remote_arguments(parser) -> None:
    """How remote archives are read: requests in flight, how long one may wait, whether ETags are checked."""
    parser.add_argument(
        "--max-requests",
        type=requests,
        metavar="N",
        help="M2KR: range requests open at once when reading remote archives (default: enough to keep a 1 Gbit/s "
        "link busy with 200 ms per request, 4 to 64)",
    )
    parser.add_argument(
        "--read-timeout",
        type=seconds,
        metavar="SECONDS",
        help="M2KR: how long a remote request may wait for its next byte before it stops (default 60)",
    )
    parser.add_argument(
        "--no-etag-check",
        dest="check_etags",
        action="store_false",
        default=None,
        help="M2KR: accept answers whose ETag differs from the file's (a server whose ETags change from one answer "
        "to the next); each part's size and each member's CRC-32 are still checked",
    )


def add_download_archives_argument(parser) -> None:
    """``--download-archives``: remote archives downloaded whole, for a server that cannot serve byte ranges."""
    parser.add_argument(
        "--download-archives",
        action="store_true",
        help="M2KR: download remote archive parts whole (about 121 GB for the real screenshots) rather than read "
        "each image in place; only for a server without Range support",
    )


def build_options(benchmark: Benchmark, args) -> dict:
    """The builder's own keywords (``check_images``; M2KR's ``images_dir`` and ``download_archives``) from the
    parsed arguments."""
    images_dir, download = getattr(args, "images_dir", None), getattr(args, "download_archives", False)
    return benchmark.builder_options(args.check_images, images_dir, download)


def benchmark_named(benchmarks: dict):
    """A converter from a benchmark's name to its declaration, accepting only the names in ``benchmarks``."""

    def convert(text: str) -> Benchmark:
        if text not in benchmarks:
            raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from {', '.join(benchmarks)})")
        return benchmarks[text]

    return convert


def add_benchmark_argument(parser, benchmarks: dict = BENCHMARKS, **options) -> None:
    """The positional benchmark name, parsed into its declaration: ``args.benchmark`` is a ``Benchmark``."""
    metavar = "{" + ",".join(benchmarks) + "}"
    parser.add_argument("benchmark", type=benchmark_named(benchmarks), metavar=metavar, **options)


def add_query_ids_argument(parser, what: str) -> None:
    """``--query-ids``, as ``report`` and ``retrieve`` take it; ``what``: what the command does with them."""
    parser.add_argument(
        "--query-ids",
        type=query_id_list,
        metavar="ID[,ID...]|@FILE",
        help=f"{what}, in this order: comma-separated, or @FILE with one id a line",
    )


# ---------------------------------------------------------------------------------------------------------------
# The model commands (retrieve, rerank, baseline) and the retrieve wing's options they become


IMAGES_DIR_HELP = (
    "M2KR: the folder, URL or hf:// repo of the image archives, if not DATA_DIR/images or DATA_DIR; a remote one is "
    "read in place, only the images used (e.g. hf://datasets/Jingbiao/M2KR-Challenge)"
)


def add_data_arguments(parser) -> None:
    """The benchmark and where its data is."""
    add_benchmark_argument(parser)
    add_data_dir_argument(parser, urls=True)
    parser.add_argument("--split", help="split to load (default: the benchmark's own, test / train)")
    parser.add_argument("--images-dir", help=IMAGES_DIR_HELP)
    add_download_archives_argument(parser)
    add_remote_arguments(parser)


def add_query_subset_arguments(parser) -> None:
    """The queries ``retrieve`` embeds: all, the first N, or those named (a trial reads only their images)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--queries",
        type=positive_int,
        metavar="N",
        help="embed only the first N queries of the table (a trial: only their images are read); the run is not "
        "scored, its means would not be the benchmark's",
    )
    add_query_ids_argument(group, "embed only these queries (unscored, as --queries)")


def add_output_argument(parser) -> None:
    """Where the run is written."""
    parser.add_argument("--output", "-o", help="run file to write (default: runs/<benchmark>_<model>.json)")


def add_dtype_argument(group) -> None:
    """The model's dtype."""
    group.add_argument(
        "--dtype",
        choices=DTYPES,
        default="auto",
        help="auto: the preset's (PreFLMR: float32, as its authors load it), else bfloat16 on CUDA, float32 on CPU",
    )


def add_device_arguments(group) -> None:
    """The DataLoader workers and the device."""
    group.add_argument(
        "--num-workers",
        type=non_negative_int,
        default=default_num_workers(),
        help="DataLoader workers preparing the inputs: decoding, resizing, the model's processor, tokenising "
        f"(default: one per core this process may use, here {default_num_workers()})",
    )
    group.add_argument("--device", help="default: cuda:<local rank> when CUDA is available, else cpu")


def add_cache_arguments(group, what: str, default: str) -> None:
    """Where ``what`` is cached, and the switch that turns the cache off."""
    group.add_argument("--cache-dir", help=f"{what} cache (default: {default})")
    group.add_argument("--no-cache", action="store_true", help=f"neither read nor write cached {what}s")


def add_reranker_arguments(group, batch_size: int = 16) -> None:
    """The reranker's options (all but --model), as ``mmrhub rerank`` takes them."""
    group.add_argument("--revision", help="Hub revision (branch, tag or commit) of the reranker")
    add_dtype_argument(group)
    add_preset_arguments(group, "reranker")
    add_batch_size_argument(group, "", batch_size)
    add_pool_arguments(group)
    add_device_arguments(group)
    add_cache_arguments(group, "pair score", "$HF_HOME/mmrhub/rerank")


def add_batch_size_argument(group, prefix: str, batch_size: int = 16) -> None:
    """The reranker's pairs per forward pass (``prefix``: ``reranker-`` in ``baseline``)."""
    group.add_argument(
        f"--{prefix}batch-size",
        type=positive_int,
        default=batch_size,
        help=f"pairs per forward pass (default {batch_size})",
    )


def add_pool_arguments(group) -> None:
    """How much of each pool is reranked, and in what chunks it is cached."""
    group.add_argument(
        "--top-n",
        type=positive_int,
        help="rerank only the first N candidates of each pool; the rest keep "
        "their baseline order after them (default: the whole pool)",
    )
    group.add_argument(
        "--chunk-queries",
        type=positive_int,
        default=64,
        help="queries per cached chunk of scores: an interrupted rerank resumes at the last chunk written; a "
        "DataLoader worker prepares whole chunks, each image once (default 64)",
    )
    group.add_argument(
        "--no-shared-prefix",
        action="store_true",
        help="run every (query, candidate) pair whole, as one sequence; by default a Qwen3-VL reranker runs each "
        "query's image and prompt once for all its candidates, with the same scores and about half the work",
    )


def add_preset_arguments(group, role: str, prefix: str = "") -> None:
    """The preset and its overrides, for an ``embedding`` or ``reranker`` model; ``prefix`` names the model in
    ``baseline`` (``--embedding-preset``, ``--reranker-preset``)."""
    names = ", ".join(PRESET_CHOICES)
    group.add_argument(
        f"--{prefix}preset",
        choices=PRESET_CHOICES,
        help=f"reference settings as the model's authors run it ({names}); default: the one the model id names, "
        f"none for a local folder; {NONE}: the checkpoint's own",
    )
    if role == "embedding":
        group.add_argument(
            f"--{prefix}query-instruction",
            *([] if prefix else ["--query-prompt"]),
            dest=f"{prefix.replace('-', '_')}query_instruction",
            help="every query's instruction: Qwen3-VL's system turn, else a prefix of the text (default: the "
            "preset's; with the Qwen3-VL preset each M2KR query's own instruction)",
        )
        group.add_argument(
            f"--{prefix}document-instruction",
            dest=f"{prefix.replace('-', '_')}document_instruction",
            help="corpus items' instruction, as --query-instruction (default: the preset's)",
        )
        group.add_argument(
            f"--{prefix}image-processor",
            metavar="NAME_OR_FOLDER",
            dest=f"{prefix.replace('-', '_')}image_processor",
            help="PreFLMR: the CLIP image processor, a Hub id or folder (default: the checkpoint config's "
            "vision_model_version)",
        )
    else:
        group.add_argument(
            f"--{prefix}instruction",
            *([] if prefix else ["--prompt"]),
            dest=f"{prefix.replace('-', '_')}query_instruction",
            help="the reranker's instruction, its <Instruct> line (default: the preset's, else the model's own)",
        )
    group.add_argument(
        f"--{prefix}default-instruction",
        dest=f"{prefix.replace('-', '_')}default_instruction",
        action="store_true",
        help="every query gets the preset's instruction, not its row's own (M2KR's queries carry one; the Qwen3-VL "
        "presets take each row's, as QwenLM's evaluation does)",
    )
    for bound in ("min", "max"):
        group.add_argument(
            f"--{prefix}{bound}-pixels",
            type=pixels,
            help=f"{bound}imum pixels of an image, resized to fit (Qwen3-VL; default: the preset's)",
        )
    group.add_argument(
        f"--{prefix}max-length",
        type=positive_int,
        help="max tokens of an input: text is cut, image tokens never (default: the preset's, else the model's)",
    )
    group.add_argument(
        f"--{prefix}exif-orientation",
        choices=EXIF_CHOICES,
        help="photos tagged with an EXIF orientation: apply (turned upright, as datasets decodes them) or ignore "
        "(the stored pixels, as the Qwen3-VL and Chinese-CLIP authors read their files); default: the preset's "
        "(ignore for every preset), else apply",
    )


def model_settings(args, prefix: str = "") -> ModelSettings:
    """The preset and overrides from the parsed arguments (``prefix``: ``embedding_`` or ``reranker_`` in
    ``baseline``)."""
    return ModelSettings(
        preset=getattr(args, f"{prefix}preset"),
        query_instruction=getattr(args, f"{prefix}query_instruction"),
        document_instruction=getattr(args, f"{prefix}document_instruction", None),
        min_pixels=getattr(args, f"{prefix}min_pixels"),
        max_pixels=getattr(args, f"{prefix}max_pixels"),
        max_length=getattr(args, f"{prefix}max_length"),
        exif_orientation=getattr(args, f"{prefix}exif_orientation", None),
        image_processor=getattr(args, f"{prefix}image_processor", None),
        default_instruction=getattr(args, f"{prefix}default_instruction", False),
    )


def add_run_file_arguments(parser) -> None:
    """Whether the run is scored, and where the per-phase timings go."""
    parser.add_argument("--no-eval", action="store_true", help="write the run without scoring it")
    parser.add_argument("--stats-json", metavar="PATH", help="also write per-phase timings as JSON")


def data_options(args) -> DataOptions:
    """The benchmark's declaration and its data folder, split and archives from the parsed arguments."""
    return DataOptions(args.benchmark, args.data_dir, args.split, args.images_dir, args.download_archives)


def run_options(args) -> RunOptions:
    """Device, dtype, workers and cache from the parsed arguments."""
    return RunOptions(
        device=args.device,
        dtype=args.dtype,
        num_workers=args.num_workers,
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
    )


def output_options(args) -> OutputOptions:
    """Run path, scoring and timings from the parsed arguments."""
    return OutputOptions(path=args.output, score=not args.no_eval, stats_json=args.stats_json)
