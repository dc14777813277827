"""``mmrhub rerun RUN.json.meta.json``: make a ``retrieve`` or ``rerank`` run again from its record, with the options
it recorded (defaults included), name every difference between then and now (libraries, mmrhub's commit, device,
data, candidates, model, settings; one line each), and say whether the repeated run is the recorded one.

The repeated run goes beside the recorded one (``<run>.rerun.json``; ``--output`` elsewhere) and replaces it only
with ``--replace``. Caches are not read: every vector and score is computed again (``--use-cache`` reads them).
Paths the record holds relative to the folder it ran in are taken from that folder. torch is imported only when the
command runs.
"""

import json
import os
from dataclasses import replace
from pathlib import Path

from mmr_inputs import read_regular
from mmrhub.commands.arguments import add_data_dir_argument
from mmrhub.commands.converters import non_negative_int
from mmrhub.commands.recorded import recorded_options
from mmrhub.records.differences import differences
from mmrhub.records.differences import same_run
from mmrhub.records.differences import table_digests
from mmrhub.records.meta import check_fields
from mmrhub.records.meta import meta_path
from mmrhub.records.meta import read_meta
from mmrhub.records.provenance import candidates_record
from mmrhub.records.provenance import source_commit
from mmrhub.records.provenance import versions
from mmrhub.retrieve.options import OutputOptions
from mmrhub.scoring.runs.reading import read_run_bytes
from mmrhub.writing import check_target
from mmrhub.writing import write_text
from mmrhub.writing import writes_onto


def register(subparsers):
    """Add ``rerun``."""
    parser = subparsers.add_parser(
        "rerun", help="make a retrieve or rerank run again from its RUN.json.meta.json, and name what differs"
    )
    parser.add_argument("meta", metavar="RUN.json.meta.json", help="the metadata written beside the run")
    parser.add_argument(
        "--output", "-o", help="where the repeated run goes (default: beside the recorded run, RUN.rerun.json)"
    )
    parser.add_argument(
        "--replace", action="store_true", help="write the repeated run over the recorded one and its metadata"
    )
    add_data_dir_argument(parser, default="the folder the run's record names")
    parser.add_argument("--device", help="run on this device instead of the recorded one (e.g. cpu)")
    parser.add_argument(
        "--num-workers", type=non_negative_int, help="DataLoader workers (default: the recorded number)"
    )
    parser.add_argument(
        "--use-cache", action="store_true", help="read cached embeddings and scores (default: compute them again)"
    )
    parser.add_argument("--no-eval", action="store_true", help="write the run without scoring it")
    parser.set_defaults(func=run)


def run(args) -> int:
    """Repeat the recorded run, then name what differs and whether the run is the same."""
    record = Path(args.meta)
    recorded = read_meta(record)
    check_fields(record, recorded)
    recorded_run = record.parent / recorded["run"]
    output = output_path(args, record, recorded_run)
    options, asked = repeated_options(recorded, args, output)
    check_target(output, "--output", [record])  # the data, candidates and model: the pipeline declares them
    check_target(meta_path(output), "--output's metadata", [] if args.replace else [record])
    recorded_bytes = read_regular(recorded_run) if recorded_run.is_file() else None

    print(f"Repeating the {recorded['command']} run {recorded_run} ({recorded['model_id']}) into {output}.")
    now = {
        "versions": versions(),
        "mmrhub_source": source_commit(),
        "data": {"tables": table_digests(options.data)},
        **(
            {"candidates_sha256": candidates_record(options.candidates)["candidates_sha256"]}
            if options.candidates
            else {}
        ),
    }
    said = set()
    report(differences(recorded, now, asked), said, "before the run")

    from mmrhub.retrieve.distributed import Context  # torch, as the pipelines

    if recorded["command"] == "retrieve":
        from mmrhub.retrieve.pipeline import run as run_pipeline
    else:
        from mmrhub.retrieve.rerank.pipeline import run as run_pipeline
    code = run_pipeline(options)
    if code:
        return code
    if not Context.from_launcher().is_main:
        return 0

    repeated = json.loads(meta_path(output).read_text(encoding="utf-8"))
    repeated["rerun_of"] = str(Path(args.meta))
    write_text(meta_path(output), json.dumps(repeated, indent=1, ensure_ascii=False, default=str) + "\n")
    report(differences(recorded, repeated, asked), said, "after the run")
    if not said:
        print("No difference in the environment, the inputs or the settings.")
    print(same_run(recorded_bytes, output.read_bytes(), recorded_run, read_run_bytes))
    return 0


def output_path(args, record: Path, recorded_run: Path) -> Path:
    """Where the repeated run goes: beside the recorded one, ``--output``, or with ``--replace`` over the recorded run,
    which must then be the run this record was written beside (a record may name any file as its run)."""
    if args.replace:
        if not writes_onto(meta_path(recorded_run), record):
            raise ValueError(
                f"--replace: {record} names {recorded_run} as its run, whose record would be "
                f"{meta_path(recorded_run)}, not this file; give --output for the repeated run."
            )
        return recorded_run
    output = Path(args.output or rerun_path(recorded_run))
    if output.resolve() == recorded_run.resolve() or writes_onto(output, recorded_run):
        raise ValueError(f"--output {output} is the recorded run; give --replace to write over it.")
    return output


def rerun_path(recorded_run: Path) -> Path:
    """``<run>.rerun.json`` beside the recorded run, or ``.rerun-2.json``, ... when that is taken."""
    stem = recorded_run.name[: -len(".json")] if recorded_run.name.endswith(".json") else recorded_run.name
    candidate, number = recorded_run.with_name(f"{stem}.rerun.json"), 1
    while candidate.exists():
        number += 1
        candidate = recorded_run.with_name(f"{stem}.rerun-{number}.json")
    return candidate


def repeated_options(recorded: dict, args, output: Path) -> tuple:
    """(the recorded options, paths made absolute against the folder the run ran in, with this command's
    overrides; the dotted names of the options changed as asked)."""
    options = recorded_options(args.meta, recorded)
    check_consistent(args.meta, recorded, options)
    ran_in = recorded.get("cwd")

    def absolute(path):  # a URL (an image folder on the Hub) names the same thing from any folder
        return path if path is None or ran_in is None or "://" in path else os.path.join(ran_in, path)

    data = replace(
        options.data,
        data_dir=args.data_dir or absolute(options.data.data_dir),
        images_dir=absolute(options.data.images_dir),
    )
    device, moved = args.device or options.runtime.device, False
    if args.device is None and recorded_on_cuda(recorded, device) and not cuda_here():
        device, moved = "cpu", True
        where = f"{recorded.get('device') or device} ({recorded.get('device_name') or 'a GPU'})"
        print(
            f"note: {args.meta} was made on {where}; CUDA is not available here, so the run is repeated on the CPU "
            "(--device chooses)."
        )
    runtime = replace(
        options.runtime,
        device=device,
        num_workers=options.runtime.num_workers if args.num_workers is None else args.num_workers,
        cache_dir=absolute(options.runtime.cache_dir),
        use_cache=args.use_cache,
    )
    model = recorded["model_id"] if os.path.isabs(recorded.get("model_id", "")) else options.model
    candidates = absolute(options.candidates)
    if candidates is not None and not os.path.lexists(candidates):
        raise FileNotFoundError(
            f"{args.meta}: options.candidates names {candidates}, which is not there: the run this one reranked. Put "
            "it back at that path to repeat the run."
        )
    score = options.output.score and not args.no_eval
    options = replace(
        options,
        data=data,
        model=model,
        candidates=candidates,
        runtime=runtime,
        output=OutputOptions(path=str(output), score=score),
    )
    asked = {"options.runtime.use_cache"}
    asked |= {"options.data.data_dir", "data.folder", "data.sample"} if args.data_dir else set()
    asked |= {"options.runtime.device", "device", "device_name", "dtype"} if args.device or moved else set()
    asked |= {"options.runtime.num_workers"} if args.num_workers is not None else set()
    asked |= {"options.output.score"} if args.no_eval else set()
    return options, asked


def check_consistent(path, recorded: dict, options) -> None:
    """The record's options name the model and the benchmark its other fields do (``model_id``, ``data``): a record
    that disagrees with itself (edited) is refused before any work, naming both."""
    ran_in = recorded.get("cwd") or ""
    model_id = recorded.get("model_id")
    named = {options.model, os.path.normpath(os.path.join(ran_in, options.model))}
    if isinstance(model_id, str) and model_id not in named:
        raise ValueError(
            f"{path}: options.model is {options.model!r} but model_id is {model_id!r}; a record names one model. Was "
            "it edited? Repeat the run of the model you mean with retrieve or rerank."
        )
    data = recorded.get("data")
    benchmark = data.get("benchmark") if isinstance(data, dict) else None
    if benchmark is not None and benchmark != options.data.benchmark.name:
        raise ValueError(
            f"{path}: options.data.benchmark is {options.data.benchmark.name!r} but the run read {benchmark!r} "
            "(data.benchmark); a record names one benchmark. Was it edited?"
        )


def recorded_on_cuda(recorded: dict, device) -> bool:
    """Whether the record ran (or asks to run) on a CUDA device."""
    return any(str(value or "").startswith("cuda") for value in (device, recorded.get("device")))


def cuda_here() -> bool:
    """Whether this machine's torch sees a CUDA device."""
    import torch

    return torch.cuda.is_available()


def report(lines: list, said: set, when: str) -> None:
    """Print the difference lines not yet printed."""
    fresh = [(name, line) for name, line in lines if name not in said]
    if fresh:
        print(f"Differences {when}:")
    for name, line in fresh:
        said.add(name)
        print(f"  {line}")
