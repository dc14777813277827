"""What a scoring command asks for, as one typed object: the library takes this, never parsed arguments."""

from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path
from typing import Optional

from mmrhub.declaration import Benchmark


@dataclass(frozen=True)
class ScoringRequest:
    """The benchmark, its data (None: the bundled sample), the runs and every reading of the open rules."""

    benchmark: Benchmark
    data_dir: Optional[str] = None
    runs: tuple = ()  # run files, a row each
    names: tuple = ()  # a name per run, or none (then the file stems)
    oracle: Optional[str] = None  # a baseline run whose Candidate-pool Oracle row is added
    rerank: Optional[str] = None  # a baseline run whose pools every other run must rank exactly
    measure_options: dict = field(default_factory=dict)  # the metric's keywords, ``k`` included
    oracle_options: dict = field(default_factory=dict)  # the oracle's keywords
    breakdown: bool = False  # also the means per group (category, task)
    ignore_unknown_queries: bool = False  # set aside entries of queries that are not the benchmark's
    trec_order: str = "score"  # TREC runs: 'score' (trec_eval's order) or 'rank' (the rank column)
    missing_queries: str = "refuse"  # a judged query a run lacks: 'refuse' the run, or score it 'zero' (trec_eval -c)

    @property
    def sample(self) -> bool:
        """Whether the bundled sample is scored (no data folder given)."""
        return self.data_dir is None

    @property
    def folder(self) -> str:
        """The data folder read: ``data_dir``, or the bundled sample."""
        return self.benchmark.data_folder(self.data_dir)

    @property
    def options(self) -> dict:
        """Every reading, the measures' and the oracle's, as recorded in ``--json``."""
        return {**self.measure_options, **self.oracle_options}

    @property
    def inputs(self) -> list:
        """Every file the request reads: its runs and the benchmark's tables and images (an output must be none)."""
        runs = [run for run in (*self.runs, self.oracle, self.rerank) if run]
        return [Path(run) for run in runs] + self.benchmark.data_inputs(self.folder)

    def with_shipped_runs(self) -> "ScoringRequest":
        """No run named: the runs shipped with the data, the first one's pools as candidates and oracle."""
        shipped = self.benchmark.runs_shipped_with(self.data_dir)
        runs = tuple(str(path) for _, path in shipped)
        several = len(runs) > 1
        return replace(
            self,
            runs=runs,
            names=tuple(name for name, _ in shipped),
            rerank=self.rerank or (runs[0] if several else None),
            oracle=self.oracle or (runs[0] if several else None),
        )
