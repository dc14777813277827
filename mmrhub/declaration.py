"""The shape of a benchmark's declaration: what the generic wings (scoring, export, report, retrieve) may ask of it.

It sits at the bottom of the package, as mteb's ``TaskMetadata`` does: every wing types against ``Benchmark``, and
each benchmark fills one in, in its own module (``mmrhub.benchmarks.mipr``, ``mmrhub.benchmarks.m2kr``).
"""

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable
from typing import Protocol

from mmrhub.data import SAMPLES

# The dataset cards' code, one real (linted) Python file a snippet, read at export time by mmrhub/export/card.py,
# which fills in its "{repo_id}", "{metric_space}" and "{mteb_task}".
CARD_SNIPPETS = Path(__file__).resolve().parent / "benchmarks" / "card_snippets"


@dataclass(frozen=True)
class Side:
    """Which builder config holds the queries (or the corpus), and the columns a model reads from it."""

    config: str
    id_column: str
    text_column: str
    image_name_column: str


class Judgments(Protocol):
    """A benchmark's judgments as its metric module prepares them (``mipr_measures.Qrels``,
    ``m2kr_measures.Positives``): the wings only hand them back, to that module's ``evaluate_run`` and to the
    benchmark's oracle."""

    num_queries: int  # judged queries, the rows of the judgments table


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
        """The first choice, or for a list option a list of it."""
        return self.choices[:1] if self.many else self.choices[0]


@dataclass(frozen=True)
class BundledRun:
    """A run shipped with the data (the official download's, or the bundled sample's simulated stand-in)."""

    name: str  # the row name in the MIPR paper's table; a sample run is named by its file
    official: str  # path under the official data folder, or "" if the official data ships none
    sample: str  # path under the bundled sample


@dataclass(frozen=True)
class PublishedBaseline:
    """A source document's one baseline row, which ``baseline --paper`` runs and prints beside ours: the system,
    the model and preset that run it, its numbers ((measure, value x100) pairs, as printed there), the document,
    and what our run does otherwise, one line each (the run's own differences are added from its record)."""

    name: str
    model: str
    preset: str
    row: tuple
    source: str
    differences: tuple = ()


@dataclass(frozen=True)
class Breakdown:
    """Per-group means: the command-line flag, the table's first column and the result key."""

    flag: str
    label: str
    key: str


@dataclass(frozen=True)
class Grade:
    """A grade as the gallery shows it."""

    label: str
    colour: str  # CSS colour of the thumbnail's frame


@dataclass(frozen=True)
class View:
    """How a report shows a benchmark."""

    top_k: int  # thumbnails per run
    main_measure: str  # plotted and used to pick queries; the first measure when a --k leaves it out
    grades: tuple  # Grade, best first; the last is what an item without a judgment shows
    relevant: str  # the grade whose missed items the gallery shows
    judgments_config: str  # the builder config holding the grades
    read_grades: Callable  # (judgments table, query ids) -> {query id: {item id: grade label}}
    judgment_word: str = "grade"  # what the gallery calls an item's label: MIPR's grade, M2KR's positive or not

    @property
    def unjudged(self) -> str:
        """What an item without a judgment shows."""
        return self.grades[-1].label


@dataclass(frozen=True)
class MtebFacts:
    """What MTEB's task metadata says of a benchmark, as plain data (mteb is not imported here): ``mmrhub.mteb``
    builds the task's ``TaskMetadata`` from it. The task's name, citation and licence are the builder's
    (``MTEB_TASK``, ``_CITATION``, ``_LICENSE``), reached through ``Benchmark.builder``, as the export card reaches
    them."""

    description: str
    eval_langs: tuple  # as MTEB writes languages: ISO 639-3 and script ("zho-Hans")
    main_score: str  # an MTEB score name
    domains: tuple  # MTEB's domain names
    annotations_creators: str  # MTEB's word for who made the judgments
    same_as: dict  # MTEB score -> the benchmark's measure, equal by definition
    differences: str  # where MTEB's other scores and the benchmark's measures differ by definition
    reference: str | None = None  # a page describing the benchmark


@dataclass(frozen=True)
class Benchmark:
    """One benchmark as the commands and wings see it: its builder, tables, measures, rules, card and views."""

    name: str
    title: str
    builder: Callable[[], ModuleType]  # imports the builder module, and with it datasets
    split: str
    configs: tuple
    default_config: str  # of the builder and of exports
    queries: Side
    corpus: Side
    measures: ModuleType  # the metric folder's measure code: evaluate_run, DEFAULT_K, DEFINITIONS
    oracle: Callable  # (judgments, baseline rankings, **options) -> the Candidate-pool Oracle's rankings
    read_truth: Callable  # (data_dir) -> mmrhub.scoring.judgments.Truth, without datasets
    judgment_files: Callable  # (data folder) -> the tables read_truth reads (a run's record fingerprints them)
    image_inputs: Callable  # (data folder) -> the image folders and archives the builder and reports read
    options: tuple  # Option: the rules a user may choose
    breakdown: Breakdown
    card: dict  # the export card's prose, and its snippets' files (under CARD_SNIPPETS)
    mteb_tables: Callable  # (builder module, load) -> (config, Dataset) pairs in MTEB's layout
    qrels_tables: Callable  # (builder module, load) -> (name, Dataset) pairs of qrels rows, the metric's gains
    bundled_runs: tuple  # BundledRun: the first one's pools are the others' candidates and the oracle's
    report: View  # how ``mmrhub report`` shows it
    mteb: MtebFacts  # what its MTEB task's metadata says (``mmrhub.mteb``)
    published_table: tuple = ()  # the source document's rows for the shipped runs and their oracle ({measure: x100})
    published_counts: tuple = ()  # (result key, value): the counts the source document states for that table
    published_baseline: PublishedBaseline | None = None  # a source document's baseline row (M2KR card's PreFLMR)
    images_dir_option: bool = False  # whether the builder takes images_dir= (archives kept elsewhere)
    oracle_readings: tuple = ()  # readings of the measures' open rules that the oracle follows too
    oracle_help: str = "relevant items first"  # what the oracle does, in the command's help
    runs_help: str = "the runs shipped with the data"  # what `evaluate` scores when no run is named
    # The measures (keys of measures.DEFINITIONS) whose names alone do not say what they are: defined under the
    # first table that shows them
    footnoted: tuple = ()

    @property
    def max_cutoff(self) -> int:
        """The deepest cutoff its metric module takes (the metric folder's own bound), for ``--k``."""
        return self.measures.shared.MAX_CUTOFF

    @property
    def sample_dir(self) -> Path:
        """The bundled sample in the official layout (also inside an installed wheel)."""
        return SAMPLES / self.name

    def data_folder(self, data_dir=None) -> str:
        """The data a command reads: ``data_dir`` as given (a folder, or a URL where the builder reads one), or,
        when none was given, the bundled sample. The one place that fallback is written."""
        return str(self.sample_dir if data_dir is None else data_dir)

    def data_inputs(self, data_dir) -> list:
        """Everything a command reads from the data folder, tables and images: no output may be written onto one (a
        folder given as a URL holds no local file)."""
        if "://" in str(data_dir):
            return []
        return self.judgment_files(data_dir) + self.image_inputs(data_dir)

    def builder_options(self, check_images: bool = True, images_dir=None, download_archives: bool = False) -> dict:
        """The builder's own keywords: ``check_images``, and M2KR's ``images_dir`` (archives kept elsewhere) and
        ``download_archives`` (remote archives downloaded whole rather than read in place)."""
        for flag, given in (("--images-dir", images_dir), ("--download-archives", download_archives)):
            if given and not self.images_dir_option:
                raise ValueError(f"{self.title} takes no {flag}: its images are read from DATA_DIR/images/.")
        options = {"check_images": check_images, **({"images_dir": images_dir} if images_dir else {})}
        return {**options, **({"download_archives": True} if download_archives else {})}

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
