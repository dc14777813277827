"""MIPR and M2KR as MTEB 2 retrieval tasks (image+text queries, image+text documents) over an export in MTEB's
layout: a folder written by ``mmrhub export {mipr,m2kr} OUT --format mteb``, or that folder pushed to the Hub.

    import mteb
    from mmrhub.mteb import MIPRIT2ITRetrieval

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

import m2kr
import mipr

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
    """A benchmark's MTEB export as an MTEB retrieval task; the subclasses below hold each benchmark's metadata.

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


class MIPRIT2ITRetrieval(ExportRetrieval):
    """MIPR: an image and a Chinese question retrieve the products (image and title) that meet the need.

    On the export's ``qrels`` (score = the grade's gain, L1=2, L2=1, others 0) MTEB's ``ndcg_at_k`` is MIPR's
    nDCG@k; every judged query is ranked, a query without an L1 judgment included.
    """

    benchmark_name = "mipr"
    same_as = {"ndcg_at_10": "nDCG@10"}
    differences = (
        "MTEB's recall_at_k and hit_rate_at_k count L2 products as relevant (a hit rate over L2, not Hit-L1); on the "
        "export's qrels-l1 config they are R-L1@k and Hit-L1@k, but MTEB leaves out the queries without an L1 "
        "judgment, which MIPR keeps (scoring 0); SC-R-L1 has no MTEB score (it needs the products' categories)."
    )

    metadata = TaskMetadata(
        name=mipr.MTEB_TASK,
        description=(
            "MIPR: reasoning-intensive multimodal intent-to-product retrieval in Chinese e-commerce. A query is a "
            "situational image and a free-form question; the corpus holds Taobao products (image and title); the "
            "graded judgments (L1, L2, N1, N2, N3) score L1=2, L2=1, others 0."
        ),
        dataset={"path": "your-org/mipr-mteb", "revision": "main"},  # each task names its export
        type="Any2AnyRetrieval",
        category="it2it",
        modalities=["image", "text"],
        eval_splits=["test"],
        eval_langs=["zho-Hans"],
        main_score="ndcg_at_10",
        domains=["E-commerce"],
        task_subtypes=["Image Text Retrieval"],
        license="apache-2.0",
        annotations_creators="LM-generated",
        dialect=[],
        sample_creation="found",
        bibtex_citation=mipr._CITATION,  # the builder's
    )


class M2KRIT2ITRetrieval(ExportRetrieval):
    """M2KR WWW 2025 challenge: an image, with an optional question, retrieves its passages (text and screenshot).

    MTEB's ``recall_at_k`` is the track's Recall@k (every positive scores 1), and ``hit_rate_at_k`` the Hit@k
    variant (FLMR's Recall@K).
    """

    benchmark_name = "m2kr"
    same_as = {"recall_at_1": "Recall@1", "recall_at_3": "Recall@3", "recall_at_5": "Recall@5"}
    differences = (
        "MTEB's hit_rate_at_k is the Hit@k variant (any positive in the top k), not Recall@k; Recall-mean, the "
        "track score, has no MTEB score; mteb 2 appends each query's instruction after the question, the reverse of "
        "PreFLMR's order."
    )

    metadata = TaskMetadata(
        name=m2kr.MTEB_TASK,
        description=(
            "M2KR WWW 2025 challenge (Task 2 of Track 1, EReL@MIR): for each image or image+question query, "
            "retrieve its passages from a shared pool of Wikipedia-like passages with web screenshots."
        ),
        reference="https://arxiv.org/abs/2402.08327",
        dataset={"path": "your-org/m2kr-mteb", "revision": "main"},  # each task names its export
        type="Any2AnyRetrieval",
        category="it2it",
        modalities=["image", "text"],
        eval_splits=["test"],
        eval_langs=["eng-Latn"],
        main_score="recall_at_5",
        domains=["Encyclopaedic", "Web"],
        task_subtypes=["Image Text Retrieval"],
        license="mit",
        annotations_creators="derived",
        dialect=[],
        sample_creation="found",
        bibtex_citation=m2kr._CITATION,  # the builder's
    )


# Each class is named as its task (``metadata.name``, the builder's MTEB_TASK), as MTEB names its own.
TASKS = {task.benchmark_name: task for task in (MIPRIT2ITRetrieval, M2KRIT2ITRetrieval)}
