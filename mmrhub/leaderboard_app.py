"""A leaderboard Space's ``app.py``: ``mmrhub leaderboard`` copies this file into every board folder, beside the
scoring code it runs (``mmrhub/``). An entry point, as ``cli.py`` is: it names the benchmarks, and the leaderboard
wing builds the page from the declaration it is given. ``python app.py`` starts it, as a Space does."""

from pathlib import Path

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.leaderboard.board import read_board
from mmrhub.leaderboard.page import build_page
from mmrhub.leaderboard.page import launch_options

HERE = Path(__file__).resolve().parent
BOARD = read_board(HERE)
if BOARD.benchmark_name not in BENCHMARKS:
    raise SystemExit(
        f"{HERE / 'board.json'}: benchmark {BOARD.benchmark_name!r} is not one of {', '.join(BENCHMARKS)}."
    )
demo = build_page(BENCHMARKS[BOARD.benchmark_name], HERE)

if __name__ == "__main__":
    demo.launch(**launch_options(HERE))
