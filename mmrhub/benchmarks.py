"""What each benchmark is, in one place. Commands read these declarations and never branch on a benchmark's name.

Importing this module is cheap: the builders (which import ``datasets``, about a second) are imported only by
``Benchmark.builder()``, which only the commands that build a dataset call; scoring reads the tables directly.
"""

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable

from mmrhub import truth
from mmrhub.data import SAMPLES
from mmrhub.export import card_text
from mmrhub.export import mteb
from mmrhub.metrics.m2kr import m2kr_measures
from mmrhub.metrics.mipr import mipr_measures


@dataclass(frozen=True)
class Side:
    """Which builder config holds the queries (or the corpus), and the columns a model reads from it."""

    config: str
    id_column: str
    text_column: str
    image_name_column: str


@dataclass(frozen=True)
class Option:
    """A scoring option: a keyword of the metric's ``evaluate_run`` (or of its ``oracle_rankings``), as ``--name``."""

    name: str
    choices: tuple  # the first is the default
    help: str
    many: bool = False  # several choices at once (M2KR's variants)
    oracle: bool = False  # an option of the oracle's reordering, not of the measures

    @property
    def default(self):
        return self.choices[:1] if self.many else self.choices[0]


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
    measures: ModuleType  # the metric folder's measure code: evaluate_run, oracle_rankings, DEFAULT_K
    read_truth: Callable  # (data_dir) -> truth.Truth, without datasets
    options: tuple  # Option: the rules a user may choose
    breakdown: Breakdown
    card: dict  # the export card's prose
    mteb_tables: Callable  # (builder module, load) -> (config, Dataset) pairs in MTEB's layout

    @property
    def sample_dir(self) -> Path:
        """The bundled sample in the official layout (also inside an installed wheel)."""
        return SAMPLES / self.name


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
    read_truth=truth.read_mipr,
    options=(),  # TODO(merge metrics): the readings of mipr_measures.READINGS and the oracle's order
    breakdown=Breakdown("--by-category", "Top-level category", "by_category"),
    card=card_text.MIPR,
    mteb_tables=mteb.mipr_tables,
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
)

BENCHMARKS = {benchmark.name: benchmark for benchmark in (MIPR, M2KR)}
