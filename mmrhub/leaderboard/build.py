"""``mmrhub leaderboard``'s work: a board folder built from runs (the judgments copied in, each run scored into its
result file, the Space's files), written aside and moved into place whole; and ``leaderboard add``, an entry added
to a board folder (one result file, written whole)."""

from pathlib import Path

from mmrhub import __version__
from mmrhub.declaration import Benchmark
from mmrhub.leaderboard import judgments
from mmrhub.leaderboard.board import BOARD_FILE
from mmrhub.leaderboard.board import JUDGMENTS
from mmrhub.leaderboard.board import RESULTS
from mmrhub.leaderboard.board import Board
from mmrhub.leaderboard.board import read_board
from mmrhub.leaderboard.records import sha256_of
from mmrhub.leaderboard.results import check_name
from mmrhub.leaderboard.results import file_name
from mmrhub.leaderboard.results import read_entries
from mmrhub.leaderboard.results import result_json
from mmrhub.leaderboard.results import score_files
from mmrhub.leaderboard.results import template
from mmrhub.leaderboard.space import write_space
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.runs.source import STDIN
from mmrhub.scoring.score import load_truth
from mmrhub.writing import write_bytes
from mmrhub.writing import write_folder

MAX_UPLOAD_BYTES = 64 << 20  # a run as uploaded: a top-100 MIPR run is about 16 MB as JSON, less compressed
MAX_DECODED_BYTES = 256 << 20  # once decompressed: bounds what reading one upload holds


def check_runs(runs) -> None:
    """Each entry is a file: a board records its sha256, so standard input is refused."""
    if not runs:
        raise ValueError("name at least one run file to put on the board.")
    if STDIN in map(str, runs):
        raise ValueError(f"'{STDIN}' (standard input) cannot be an entry: give a file, whose sha256 the board records.")


def default_source(request: ScoringRequest, repo=None) -> str:
    """Where the judgments come from, when the command is not told: the dataset repo, the bundled sample, or the
    folder's name."""
    if repo:
        return f"the dataset repo {repo[0]} at commit {repo[1]}"
    if request.sample:
        return f"the bundled {request.benchmark.title} sample of mmrhub {__version__}"
    return f"the {request.benchmark.title} data folder {Path(request.folder).resolve().name}"


def build(
    request: ScoringRequest,
    out,
    permutations: int,
    seed: int,
    source: str = "",
    with_rankings: bool = False,
    max_upload_bytes: int = MAX_UPLOAD_BYTES,
    judgments_repo: str = "",
) -> Path:
    """Score ``request``'s runs (its options are the board's) and write the board folder ``out``, which must not
    exist; returns it. ``judgments_repo`` (``org/name@COMMIT``): the Space reads the tables from that dataset
    repo when it starts, rather than holding a copy (``request``'s data folder must hold the same files)."""
    repo = judgments.parse_repo(judgments_repo) if judgments_repo else None
    check_runs(request.runs)
    out = Path(out)
    if out.exists() or out.is_symlink():
        raise FileExistsError(
            f"{out} already exists: add entries to a board with `mmrhub leaderboard add {out} RUN`, or choose "
            "another -o folder."
        )
    for name in request.names:
        check_name(name)
    benchmark = request.benchmark
    truth = load_truth(request)
    tables = judgments.tables(benchmark, request.folder)
    board = Board(
        benchmark_name=benchmark.name,
        measure_options={name: list(v) if isinstance(v, tuple) else v for name, v in request.measure_options.items()},
        trec_order=request.trec_order,
        missing_queries=request.missing_queries,
        ignore_unknown_queries=request.ignore_unknown_queries,
        permutations=permutations,
        seed=seed,
        correction="holm",
        judgments={
            "files": {name: sha256_of(path) for name, path in tables.items()},
            "source": source or default_source(request, repo),
            "sample": request.sample,
            "queries": len(truth.query_ids),
            **({"repo": repo[0], "revision": repo[1]} if repo else {}),
        },
        max_upload_bytes=max_upload_bytes,
        max_decoded_bytes=max(MAX_DECODED_BYTES, max_upload_bytes),
        mmrhub=__version__,
    )
    results = score_files(request, truth, board, with_rankings)
    for data in results:
        check_name(data["name"])  # a file stem, where no --name was given
    with write_folder(out) as work:
        for name, path in tables.items() if repo is None else ():
            target = work / JUDGMENTS / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
        (work / RESULTS).mkdir()
        for data in results:
            (work / RESULTS / file_name(data["name"])).write_bytes(result_json(data))
        (work / BOARD_FILE).write_text(board.to_json(), encoding="utf-8")
        write_space(work, benchmark, board)
    return out


def add(benchmark: Benchmark, folder, runs, names=(), with_rankings: bool = False) -> list:
    """Score ``runs`` as the board in ``folder`` scores (its judgments and options) and add each as an entry (one
    result file each); returns the files written. A name already on the board is refused before anything is
    written."""
    check_runs(runs)
    folder = Path(folder)
    board = read_board(folder)
    if board.benchmark_name != benchmark.name:
        raise ValueError(f"{folder} is a board of {board.benchmark_name}, not of {benchmark.name}.")
    if board.mmrhub != __version__:
        raise ValueError(
            f"{folder} was built by mmrhub {board.mmrhub}, and this is mmrhub {__version__}: its entries and these "
            f"would be scored by different code. Install mmrhub {board.mmrhub} to add to it, or build a new board."
        )
    judgments.fetch(folder, board)
    names = tuple(check_name(name) for name in names)
    request = board.request(benchmark, folder, runs=runs, names=names)
    truth = load_truth(request)
    results = score_files(request, truth, board, with_rankings)
    expected = template(benchmark, truth, request.measure_options)
    entries, _ = read_entries(folder, board, benchmark, expected)
    taken = {entry.name for entry in entries}
    for data in results:
        check_name(data["name"])
        if data["name"] in taken:
            raise ValueError(
                f"an entry named {data['name']!r} is on the board in {folder} already: give the run another --name."
            )
    written = []
    for data in results:
        target = folder / RESULTS / file_name(data["name"])
        if target.exists():
            raise FileExistsError(f"{target} exists (an entry this board could not read): move it away first.")
        target.parent.mkdir(exist_ok=True)
        written.append(write_bytes(target, result_json(data)))
    return written
