"""What each benchmark is, in one place. Commands read these declarations and never branch on a benchmark's name.

Importing this module is cheap: the builders (which import ``datasets``, about a second) are imported only by
``Benchmark.builder()``, which only the commands that build a dataset call; scoring reads the tables directly.
"""

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable

from mmrhub import oracle
from mmrhub import truth
from mmrhub.data import SAMPLES
from mmrhub.export import card_text
from mmrhub.export import mteb
from mmrhub.metrics.m2kr import m2kr_measures
from mmrhub.metrics.mipr import mipr_measures
from mmrhub.report.views import M2KR_VIEW
from mmrhub.report.views import MIPR_VIEW
from mmrhub.report.views import View


@dataclass(frozen=True)
class Side:
    """Which builder config holds the queries (or the corpus), and the columns a model reads from it."""

    config: str
    id_column: str
    text_column: str
    image_name_column: str


@dataclass(frozen=True)
class Option:
    """A scoring option: a keyword of the metric's ``evaluate_run`` (or of the oracle's), as ``--name``."""

    name: str
    choices: tuple  # the first is the default
    help: str
    many: bool = False  # several choices at once (M2KR's variants)
    oracle: bool = False  # an option of the oracle's reordering, not of the measures

    @property
    def default(self):
        return self.choices[:1] if self.many else self.choices[0]


@dataclass(frozen=True)
class BundledRun:
    """A run shipped with the data (the official download's, or the bundled sample's simulated stand-in)."""

    name: str  # the row name of the official run (the seed's); a sample run is named by its file
    official: str  # path under the official data folder, or "" if the official data ships none
    sample: str  # path under the bundled sample


@dataclass(frozen=True)
class Breakdown:
    """Per-group means: the command-line flag, the table's first column and the result key."""

    flag: str
    label: str
    key: str


@dataclass(frozen=True)
class Benchmark:
    name: str
    title: str
    builder: Callable[[], ModuleType]  # imports the builder module, and with it datasets
    split: str
    configs: tuple
    default_config: str  # of the builder and of exports
    queries: Side
    corpus: Side
    measures: ModuleType  # the metric folder's measure code: evaluate_run, DEFAULT_K
    oracle: Callable  # (judgments, baseline rankings, **options) -> the Candidate-pool Oracle's rankings
    read_truth: Callable  # (data_dir) -> truth.Truth, without datasets
    options: tuple  # Option: the rules a user may choose
    breakdown: Breakdown
    card: dict  # the export card's prose
    mteb_tables: Callable  # (builder module, load) -> (config, Dataset) pairs in MTEB's layout
    bundled_runs: tuple  # BundledRun: the first one's pools are the others' candidates and the oracle's
    report: View  # how ``mmrhub report`` shows it
    seed_table: tuple = ()  # the source document's rows for the shipped runs and their oracle ({measure: x100})
    images_dir_option: bool = False  # whether the builder takes images_dir= (archives kept elsewhere)

    @property
    def sample_dir(self) -> Path:
        """The bundled sample in the official layout (also inside an installed wheel)."""
        return SAMPLES / self.name

    def builder_options(self, check_images: bool = True, images_dir=None) -> dict:
        """The builder's own keywords: ``check_images``, and M2KR's ``images_dir`` (archives kept elsewhere)."""
        if images_dir and not self.images_dir_option:
            raise ValueError(f"{self.title} takes no --images-dir: its images are read from DATA_DIR/images/.")
        return {"check_images": check_images, **({"images_dir": images_dir} if images_dir else {})}

    def runs_shipped_with(self, data_dir=None) -> list:
        """(row name, path) of the runs shipped with the data folder (the bundled sample without one)."""
        if data_dir is None:
            return [(Path(run.sample).stem, self.sample_dir / run.sample) for run in self.bundled_runs]
        shipped = [(run.name, Path(data_dir) / run.official) for run in self.bundled_runs if run.official]
        missing = [str(path) for _, path in shipped if not path.is_file()]
        if missing or not shipped:
            raise FileNotFoundError(
                f"{data_dir} holds no bundled runs of {self.title} ({', '.join(missing) or 'none are released'}): "
                "name the run files to score."
            )
        return shipped


# What each of MIPR's open rules decides (the metric card says which rules the seed fixes and why the defaults).
MIPR_READINGS = {
    "no_l1": "a query without L1: zero = scores 0 on R-L1 and SC-R-L1 and stays in their means, skip = left out",
    "recall_denominator": "R-L1@k's denominator: judged = |L1|, capped = min(k, |L1|)",
    "covered_by": "what covers a category in SC-R-L1: L1 = an L1 item, judged = any judged item of an L1 category",
    "category": "the leaf category: path = the whole treecate_full_path, leaf = its last segment",
    "ideal": "nDCG's ideal DCG: cutoff = the k largest judged gains (trec_eval ndcg_cut), all = every judged gain",
}

# Why each default (the metric card gives the same reasons).
MIPR_WHY_DEFAULT = {
    "no_l1": "trec_eval's rule: a query without relevant items scores 0 and stays in the mean",
    "recall_denominator": "the seed's R-L1 is recall of the judged L1 products, so of all of them",
    "covered_by": "the measure is L1 recall: only an optimal (L1) product solves the need",
    "category": "the seed: treecate_full_path provides the leaf category",
    "ideal": "trec_eval's ndcg_cut: the ideal ranking is cut at k, as the run is",
}


def _mipr_builder() -> ModuleType:
    import mipr

    return mipr


def _m2kr_builder() -> ModuleType:
    import m2kr

    return m2kr


MIPR = Benchmark(
    name="mipr",
    title="MIPR",
    builder=_mipr_builder,
    split="test",
    configs=("queries", "corpus", "qrels"),
    default_config="qrels",
    queries=Side("queries", "idx", "query", "image_url"),
    corpus=Side("corpus", "item_id", "title", "pict_url"),
    measures=mipr_measures,
    oracle=oracle.mipr,
    read_truth=truth.read_mipr,
    options=(
        *(
            Option(name, values, f"{MIPR_READINGS[name]}; the default: {MIPR_WHY_DEFAULT[name]}")
            for name, values in mipr_measures.READINGS.items()
        ),
        Option("order", oracle.ORDERS, "the oracle's order within a grade", oracle=True),
    ),
    breakdown=Breakdown("--by-category", "Top-level category", "by_category"),
    card=card_text.MIPR,
    mteb_tables=mteb.mipr_tables,
    bundled_runs=(
        BundledRun("Qwen3-VL-Embedding-8B", "baseline/qwen3_vl_embedding_8b_top50.json", "baseline/simulated_embedding_top50.json"),
        BundledRun("Qwen3-VL-Reranker-8B", "baseline/qwen3_vl_reranker_8b_top50.json", "baseline/simulated_reranker_top50.json"),
    ),
    report=MIPR_VIEW,
    seed_table=tuple(
        dict(zip(("nDCG@10", "R-L1@10", "Hit-L1@1", "Hit-L1@10", "SC-R-L1@10", "SC-R-L1@10*"), values))
        for values in (
            (49.23, 53.98, 47.02, 85.63, 61.33, 55.86),  # Qwen3-VL-Embedding-8B
            (60.11, 66.00, 59.26, 91.25, 71.52, 67.00),  # Qwen3-VL-Reranker-8B
            (86.04, 78.95, 94.97, 94.97, 82.80, 80.22),  # Candidate-pool Oracle
        )
    ),
)

M2KR = Benchmark(
    name="m2kr",
    title="M2KR",
    builder=_m2kr_builder,
    split="train",
    configs=("challenge_data", "challenge_passage", "challenge_answers"),
    default_config="challenge_data",
    queries=Side("challenge_data", "question_id", "question", "img_path"),
    corpus=Side("challenge_passage", "passage_id", "passage_content", "page_screenshot"),
    measures=m2kr_measures,
    oracle=oracle.m2kr,
    read_truth=truth.read_m2kr,
    options=(
        Option(
            "variants", tuple(m2kr_measures.VARIANTS), "recall: the M2KR track's measure; hit: FLMR's Recall@K "
            "(any positive in the top k); strict: all positives in the top k", many=True,
        ),
    ),
    breakdown=Breakdown("--by-task", "Task", "by_task"),
    card=card_text.M2KR,
    mteb_tables=mteb.m2kr_tables,
    bundled_runs=(BundledRun("", "", "baseline/simulated_top5.json"),),
    report=M2KR_VIEW,
    images_dir_option=True,
)

BENCHMARKS = {benchmark.name: benchmark for benchmark in (MIPR, M2KR)}
