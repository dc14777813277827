"""``mmrhub mteb``: a benchmark's MTEB export, any MTEB model run on it through ``mteb.evaluate``, MTEB's saved
predictions turned into a run in the official format (with ``RUN.json.meta.json``), and the benchmark's full table
printed with MTEB's own main score beside it. mteb is imported only when the model runs (``evaluate_with_mteb``)."""

import json
import os
import sys
import tempfile
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Optional

from mmrhub.declaration import Benchmark
from mmrhub.mteb.predictions import Predictions
from mmrhub.mteb.predictions import aligned
from mmrhub.mteb.predictions import check_scores
from mmrhub.mteb.predictions import ranked
from mmrhub.mteb.predictions import read_predictions
from mmrhub.mteb.predictions import write
from mmrhub.records.meta import check_run_replaceable
from mmrhub.records.meta import meta_path
from mmrhub.records.meta import model_source
from mmrhub.records.provenance import versions
from mmrhub.retrieve.finite import check as check_finite
from mmrhub.retrieve.run_files import slug
from mmrhub.scoring.output.captions import mteb_caption
from mmrhub.scoring.output.captions import print_notes
from mmrhub.scoring.output.captions import sample_line
from mmrhub.scoring.output.captions import table_captions
from mmrhub.scoring.output.tables import table
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.score import sample_scored
from mmrhub.scoring.score import score_runs
from mmrhub.terminal import printable

if TYPE_CHECKING:  # mteb is imported only when a model runs
    from mteb import ModelMeta

    from mmrhub.mteb.tasks import ExportRetrieval
from mmrhub.writing import check_target
from mmrhub.writing import write_text

DEFAULT_TOP_K = 100
DEFAULT_RESULTS = "runs/mteb"
LIBRARIES = ("mteb", "torch", "transformers", "sentence-transformers", "mmrhub")
AGREEMENT = 1e-5  # MTEB rounds its scores to five decimals


@dataclass(frozen=True)
class MtebOptions:
    """What ``mmrhub mteb`` runs: the benchmark (a declaration), the MTEB model, the data and the outputs."""

    benchmark: Benchmark
    model: str  # an MTEB model name (``mteb.get_model``)
    revision: Optional[str] = None
    device: Optional[str] = None
    data_dir: Optional[str] = None  # None: the bundled sample
    export: Optional[str] = None  # an MTEB export folder or Hub repo id; None: exported to a temporary folder
    output: Optional[str] = None  # None: runs/<benchmark>_<model>_mteb.json
    results: str = DEFAULT_RESULTS  # MTEB's own results (its ResultCache)
    top_k: int = DEFAULT_TOP_K
    batch_size: int = 32
    builder_options: dict = field(default_factory=dict)  # the export's builder keywords

    @property
    def folder(self) -> str:
        """The data folder scored: ``data_dir``, or the bundled sample."""
        return self.benchmark.data_folder(self.data_dir)

    def run_path(self) -> Path:
        """``output``, else ``runs/<benchmark>_<model>_mteb.json``, which is refused when it holds another model's
        run."""
        if self.output:
            return Path(self.output)
        path = Path("runs") / f"{self.benchmark.name}_{slug(self.model)}_mteb.json"
        check_run_replaceable(path, self.model)
        return path


def check_options(options: MtebOptions) -> Path:
    """Everything that can be checked before the model runs; returns the run's path."""
    benchmark = options.benchmark
    deepest = max(benchmark.measures.DEFAULT_K)
    if options.top_k < deepest:
        raise ValueError(
            f"--top-k {options.top_k}: {benchmark.title}'s table reads the top {deepest}; give at least that."
        )
    if options.export is not None:
        check_export(options)
    path = options.run_path()
    if not path.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)  # as retrieve does for its runs
    inputs = benchmark.data_inputs(options.folder)
    if options.export is not None:
        inputs.append(Path(options.export))  # a local export: its card and shards (a Hub id names no local file)
    check_target(path, "--output", inputs, example=f"{benchmark.name}.json")
    check_target(meta_path(path), "--output's metadata", inputs)
    return path


def export_is_sample(folder: Path) -> Optional[bool]:
    """Whether an export's card says it is of the bundled sample (None: no card to tell)."""
    card = folder / "README.md"
    if not card.is_file():
        return None
    from mmrhub.export.push import read_card  # a card that is not UTF-8 or whose YAML does not parse: named

    return "sample" in (read_card(card, then="run again").data.tags or [])


def check_export(options: MtebOptions) -> None:
    """An export folder and the judgments scored must be of the same data: its card says whether it is the
    sample's. A Hub repo id is taken as it is (its queries are checked against the judgments after the run)."""
    folder = Path(options.export)
    if not folder.is_dir():
        if "/" not in options.export or os.path.isabs(options.export) or options.export.startswith("."):
            raise FileNotFoundError(f"--export {options.export}: no such folder (nor a Hub repo id, org/name).")
        return
    sample = export_is_sample(folder)
    if sample and options.data_dir:
        raise ValueError(
            f"--export {folder} is an export of the bundled sample, but --data-dir {options.data_dir} is scored: "
            "export that folder (or leave --export out)."
        )
    if sample is False and not options.data_dir:
        raise ValueError(
            f"--export {folder} is an export of the full data, but no --data-dir was given, so the bundled sample "
            "would be scored: give the --data-dir it was exported from."
        )


@dataclass
class Evaluated:
    """What ``mteb.evaluate`` gave: the task, the model's metadata, MTEB's scores and the saved predictions."""

    task: "ExportRetrieval"
    model_meta: "ModelMeta"
    scores: dict  # MTEB's scores of the evaluated split
    predictions: Predictions
    mteb_version: str


def evaluate_with_mteb(options: MtebOptions, export: str, work: Path) -> Evaluated:
    """The model on the task over ``export``, through ``mteb.evaluate``: MTEB's results go to ``options.results``,
    its predictions to ``work``."""
    import mteb

    from mmrhub.mteb.tasks import task_class

    task = task_class(options.benchmark)(export, top_k=options.top_k)
    model = checked(mteb.get_model(options.model, revision=options.revision, device=options.device), options.model)
    result = mteb.evaluate(
        model,
        task,
        cache=mteb.ResultCache(options.results),
        overwrite_strategy="always",  # the predictions are this run's, never a cached result's
        prediction_folder=work,
        encode_kwargs={"batch_size": options.batch_size},
        co2_tracker=False,
    )
    split = task.eval_splits[0]
    predictions = read_predictions(work / task.prediction_file_name, split=split)
    check_scores(predictions, options.model)
    scores = result.task_results[0].scores[split][0]
    return Evaluated(task, model.mteb_model_meta, scores, predictions, mteb.__version__)


def checked(model, name: str):
    """``model`` (MTEB's wrapper of it) with every embedding and score it gives MTEB checked (``finite.check``)
    before MTEB keeps, scores or writes any."""
    for method in ("encode", "predict"):
        given = getattr(model, method, None)
        if callable(given):
            setattr(model, method, _checked_call(given, name, "embedding" if method == "encode" else "score"))
    return model


def _checked_call(given, name: str, kind: str):
    def call(*args, **kwargs):
        output = given(*args, **kwargs)
        role = getattr(kwargs.get("prompt_type"), "value", None) or "input"
        check_finite(output, name, lambda row: f"the {kind} of {role} {row + 1} of a batch MTEB asked for")
        return output

    return call


def run(options: MtebOptions) -> int:
    """Export (unless given an export), run the model through ``mteb.evaluate``, write the run and print the
    table."""
    benchmark = options.benchmark
    path = check_options(options)
    truth = benchmark.read_truth(options.folder)  # the judgments, checked before the model runs
    with tempfile.TemporaryDirectory(prefix="mmrhub-mteb-") as work:
        export = options.export
        if export is None:
            from mmrhub.export.repo import export as export_repo  # imports datasets

            print(f"Exporting {benchmark.title} in MTEB's layout to a temporary folder ...", file=sys.stderr)
            export = str(
                export_repo(
                    benchmark,
                    Path(work) / "export",
                    data_dir=options.data_dir,
                    format="mteb",
                    builder_options=options.builder_options,
                )
            )
        evaluated = evaluate_with_mteb(options, export, Path(work) / "predictions")
    sample = sample_scored(benchmark.title, truth) if options.data_dir is None else ""
    ranking = aligned(ranked(evaluated.predictions.scored), truth, options.export or "the export", sample)
    write(path, ranking)
    write_text(meta_path(path), json.dumps(run_metadata(options, path, evaluated, ranking), indent=1) + "\n")
    print(f"Run written to {path} ({len(ranking.query_ids):,} queries, top {ranking.depth}).", file=sys.stderr)
    for note in ranking.notes:
        print(printable(f"note: {note}"), file=sys.stderr)
    if options.data_dir is None:  # also here, after MTEB's progress, where it cannot scroll away unseen
        print(f"note: {sample_line(ScoringRequest(benchmark), truth)}", file=sys.stderr)
    print_table(options, path, truth, evaluated, unranked=len(ranking.unranked))
    return 0


def run_metadata(options: MtebOptions, path: Path, evaluated: Evaluated, ranking) -> dict:
    """``RUN.json.meta.json``: the model MTEB ran (name and revision), mteb's version, the task and its export,
    the depth asked for and reached, MTEB's scores that are the benchmark's, and the library versions."""
    task, scores = evaluated.task, evaluated.scores
    main_score = task.metadata.main_score
    return {
        "command": "mteb",
        "run": path.name,
        "benchmark": options.benchmark.name,
        "model_id": model_source(options.model),  # what a later run to the same default path must be of
        "model_name": evaluated.model_meta.name,
        "model_revision": evaluated.model_meta.revision,
        "mteb_version": evaluated.mteb_version,
        "task": task.metadata.name,
        "task_revision": task.metadata.revision,
        "top_k": options.top_k,
        "depth": ranking.depth,
        "export": options.export,  # None: a temporary export of data_dir, removed after the run
        "data_dir": None if options.data_dir is None else str(Path(options.data_dir).absolute()),
        "mteb_results": str(Path(options.results).absolute()),
        "mteb_main_score": {main_score: scores[main_score]},
        "mteb_scores": {name: scores[name] for name in task.same_as},
        "versions": versions(LIBRARIES),
    }


def print_table(options: MtebOptions, path: Path, truth, evaluated: Evaluated, unranked: int = 0) -> None:
    """The run's table as ``mmrhub evaluate`` prints it, MTEB's main score in a last column, and the captions: what
    agrees with MTEB by definition, what differs, and the sample."""
    task, scores, model_meta = evaluated.task, evaluated.scores, evaluated.model_meta
    benchmark = options.benchmark
    request = ScoringRequest(
        benchmark, options.data_dir, runs=(str(path),), measure_options={"k": benchmark.measures.DEFAULT_K}
    )
    rows = score_runs(request, truth)
    print_notes(truth, rows)
    row = rows[0]
    main_score = task.metadata.main_score
    for mteb_name, measure in task.same_as.items():
        ours = row.result.get(measure)
        if ours is not None and not unranked and abs(ours - scores[mteb_name]) > AGREEMENT:
            print(
                f"note: MTEB's {mteb_name} ({scores[mteb_name]:.5f}) differs from {measure} ({ours:.5f}), though "
                "the two are defined alike: MTEB scored other queries or another ranking than the run holds.",
                file=sys.stderr,
            )
    name = model_meta.name or options.model
    ran = f"through mteb {evaluated.mteb_version}: task {task.metadata.name}, top {task.top_k}"
    print(f"{name} (revision {model_meta.revision}) {ran}")
    cells = {**row.result, f"MTEB {main_score}": scores[main_score]}
    captions = mteb_caption(benchmark.title, task.same_as, unranked, task.differences) + table_captions(
        request, truth, rows
    )
    print(table([(name, cells)]) + captions)
