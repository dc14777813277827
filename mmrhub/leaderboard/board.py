"""A board's settings, ``board.json`` in its folder: the benchmark, how every entry is scored (the measures' options
and how runs are read), how entries are compared (``compare``'s test: its sign flips, seed and correction), the
judgments the board holds and where they came from, and what an upload may weigh. ``mmrhub leaderboard`` writes
it once; ``leaderboard add`` and the Space read it, so every entry and every upload is scored alike."""

import json
from dataclasses import asdict
from dataclasses import dataclass
from pathlib import Path

from mmr_inputs import load_json_file
from mmrhub.declaration import Benchmark
from mmrhub.scoring.compare.corrections import CORRECTIONS
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.runs.trec import ORDERS
from mmrhub.scoring.runs.validation import MISSING_QUERIES

BOARD_FILE = "board.json"
RESULTS = "results"  # one file per entry
JUDGMENTS = "judgments"  # the benchmark's judgment tables, in its official layout
FORMAT = "mmrhub-leaderboard/1"
MAX_BOARD = 1 << 20  # bytes of board.json: a few kB as written


@dataclass(frozen=True)
class Board:
    """Everything about a board but its entries."""

    benchmark_name: str  # the benchmark's name
    measure_options: dict  # the metric's keywords, ``k`` included, as ScoringRequest.measure_options
    trec_order: str
    missing_queries: str
    ignore_unknown_queries: bool
    permutations: int  # compare's test: sign flips and seed, and the correction across the pairs
    seed: int
    correction: str
    judgments: dict  # {"files": {path under judgments/: sha256}, "source": text, "sample": bool}
    max_upload_bytes: int  # an uploaded file, as sent (compressed or not)
    max_decoded_bytes: int  # an upload once decompressed or transcoded to UTF-8
    mmrhub: str  # the version that built the board
    format: str = FORMAT

    @property
    def sample(self) -> bool:
        """Whether the board scores against a bundled sample (its numbers mean nothing)."""
        return bool(self.judgments.get("sample"))

    def request(self, benchmark: Benchmark, folder, runs=(), names=()) -> ScoringRequest:
        """How a run is scored on this board: against ``folder``'s judgments, with the board's options."""
        return ScoringRequest(
            benchmark=benchmark,
            data_dir=str(Path(folder) / JUDGMENTS),
            runs=tuple(str(run) for run in runs),
            names=tuple(names),
            measure_options={name: tuple(v) if isinstance(v, list) else v for name, v in self.measure_options.items()},
            breakdown=True,
            ignore_unknown_queries=self.ignore_unknown_queries,
            trec_order=self.trec_order,
            missing_queries=self.missing_queries,
        )

    def to_json(self) -> str:
        """The board.json text."""
        return json.dumps(asdict(self), ensure_ascii=False, indent=1) + "\n"


def read_board(folder) -> Board:
    """``folder``'s board.json, checked field by field; one line naming the file and the field otherwise."""
    path = Path(folder) / BOARD_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} does not exist: {folder} is not a board folder (`mmrhub leaderboard BENCHMARK RUN ... -o DIR` "
            "writes one)."
        )
    data = load_json_file(str(path), limit=MAX_BOARD)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a board's settings ({FORMAT!r} expected in its format field).")

    def field(name, kind, check=lambda value: True, expected=""):
        value = data.get(name)
        if not isinstance(value, kind) or isinstance(value, bool) and kind is int or not check(value):
            raise ValueError(f"{path}: {name}: expected {expected or kind.__name__}, got {value!r:.80}.")
        return value

    whole = (lambda value: value >= 1, "a whole number of at least 1")
    return Board(
        benchmark_name=field("benchmark_name", str),
        measure_options=field("measure_options", dict),
        trec_order=field("trec_order", str, lambda v: v in ORDERS, f"one of {', '.join(ORDERS)}"),
        missing_queries=field(
            "missing_queries", str, lambda v: v in MISSING_QUERIES, f"one of {', '.join(MISSING_QUERIES)}"
        ),
        ignore_unknown_queries=field("ignore_unknown_queries", bool),
        permutations=field("permutations", int, *whole),
        seed=field("seed", int, lambda v: 0 <= v < 2**32, "a seed from 0 to 2**32 - 1"),
        correction=field("correction", str, lambda v: v in CORRECTIONS, f"one of {', '.join(CORRECTIONS)}"),
        judgments=field("judgments", dict, lambda v: isinstance(v.get("files"), dict), "an object with files"),
        max_upload_bytes=field("max_upload_bytes", int, *whole),
        max_decoded_bytes=field("max_decoded_bytes", int, *whole),
        mmrhub=field("mmrhub", str),
    )
