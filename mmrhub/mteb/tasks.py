"""MIPR and M2KR as MTEB 2 retrieval tasks (image+text queries, image+text documents) over an export in MTEB's
layout: a folder written by ``mmrhub export {mipr,m2kr} OUT --format mteb``, or that folder pushed to the Hub.

    import mteb
    from mmrhub.mteb import MIPRIT2ITRetrieval  # or M2KRIT2ITRetrieval; their facts: each Benchmark's ``mteb``

    task = MIPRIT2ITRetrieval("exports/mipr-mteb")  # or its Hub repo: ("org/mipr-mteb", revision="main")
    result = mteb.evaluate(mteb.get_model("openai/clip-vit-base-patch32"), task, prediction_folder="predictions")

Any model object ``mteb.evaluate`` takes works: a registered model's name through ``mteb.get_model``, a
sentence-transformers model, or an object of mteb's ``EncoderProtocol`` or ``SearchProtocol``. MTEB's scores are
MTEB's (``MIPRIT2ITRetrieval.same_as`` names the ones that are a benchmark measure by definition); for the benchmark's
own table, SC-R-L1 included, turn the saved predictions into a run (``mmrhub.mteb.predictions``) and score it with
``mmrhub evaluate``, or run ``mmrhub mteb mipr --model NAME``, which does both.

This module imports mteb (seconds): ``mmrhub.mteb`` and the ``mmrhub`` command import it only when a task is asked
for.
"""

import hashlib
from pathlib import Path
from typing import Optional

from mteb import TaskMetadata
from mteb.abstasks import AbsTaskRetrieval

from mmrhub.declaration import Benchmark
from mmrhub.export.mteb_layout import EVAL_SPLIT

# MTEB's own cutoffs; a task built with ``top_k`` keeps those up to it, and ranks ``top_k`` documents per query.
MTEB_K_VALUES = AbsTaskRetrieval.k_values


def folder_revision(folder: Path) -> str:
    """A label for a local export, as MTEB records a dataset's revision: a digest of every file's path, size and
    modification time, so two exports (of the sample and of the full data, say) never share one."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        stat = path.stat()
        digest.update(f"{path.relative_to(folder).as_posix()}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return f"local-{digest.hexdigest()[:16]}"


class ExportRetrieval(AbsTaskRetrieval):
    """A benchmark's MTEB export as an MTEB retrieval task; each benchmark's subclass (``task_class``) holds its
    metadata.

    ``path``: the export folder (``mmrhub export ... --format mteb``) or its Hub repo id; ``revision``: the Hub
    revision (default ``main``; a folder is labelled by its files); ``top_k``: documents ranked per query, saved in
    the predictions (default: MTEB's, 1000), MTEB's cutoffs kept up to it.
    """

    benchmark_name: str  # the mmrhub benchmark this task is of
    same_as: dict  # MTEB score -> the benchmark's measure, equal by definition
    differences: str  # where MTEB's other scores and the benchmark's measures differ by definition

    def __init__(self, path, revision: Optional[str] = None, top_k: Optional[int] = None, **kwargs):
        if top_k is not None:
            if top_k < 1:
                raise ValueError(f"top_k={top_k}: rank at least one document per query.")
            self.k_values = tuple(sorted({k for k in MTEB_K_VALUES if k <= top_k} | {top_k}))
        local = Path(path).is_dir()
        dataset = {
            "path": str(Path(path).absolute()) if local else str(path),
            "revision": revision or (folder_revision(Path(path)) if local else "main"),
        }
        # the class's metadata describes the layout; this task's names the export it reads
        self._export_metadata = type(self).metadata.model_copy(update={"dataset": dataset})
        self.metadata = self._export_metadata
        super().__init__(**kwargs)

    def unload_data(self) -> None:
        """MTEB's unloading, which drops a task's own metadata (for filtered data) and would leave the class's:
        this task keeps naming its export, so it can be evaluated again."""
        super().unload_data()
        self.metadata = self._export_metadata

    @property
    def top_k(self) -> int:
        """Documents ranked per query: the largest cutoff."""
        return max(self.k_values)


_MADE = {}  # benchmark name -> its task class: one class per benchmark, so MTEB sees one task


def task_class(benchmark: Benchmark) -> type:
    """The benchmark's task class, made once from its declaration (``Benchmark.mteb``) and named as its task (the
    builder's ``MTEB_TASK``), as MTEB names its own; ``mmrhub.mteb`` offers it under that name."""
    made = _MADE.get(benchmark.name)
    if made is None:
        made = _MADE[benchmark.name] = _make(benchmark)
    return made


def _make(benchmark: Benchmark) -> type:
    facts, builder = benchmark.mteb, benchmark.builder()  # the builder's own name, citation and licence
    equal = ", ".join(f"{mteb_name} is {measure}" for mteb_name, measure in facts.same_as.items())
    metadata = TaskMetadata(
        name=builder.MTEB_TASK,
        description=facts.description,
        reference=facts.reference,
        dataset={"path": f"your-org/{benchmark.name}-mteb", "revision": "main"},  # each task names its export
        type="Any2AnyRetrieval",
        category="it2it",
        modalities=["image", "text"],
        eval_splits=[EVAL_SPLIT],
        eval_langs=list(facts.eval_langs),
        main_score=facts.main_score,
        domains=list(facts.domains),
        task_subtypes=["Image Text Retrieval"],
        license=builder._LICENSE,
        annotations_creators=facts.annotations_creators,
        dialect=[],
        sample_creation="found",
        bibtex_citation=builder._CITATION,
    )
    fields = {
        "__doc__": f"{facts.description}\n\nEqual by definition: {equal}. {facts.differences}",
        "__module__": "mmrhub.mteb",  # where the class is found by its name
        "benchmark_name": benchmark.name,
        "same_as": facts.same_as,
        "differences": facts.differences,
        "metadata": metadata,
    }
    return type(builder.MTEB_TASK, (ExportRetrieval,), fields)
