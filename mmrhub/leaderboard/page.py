"""The board's page, with gradio (imported here only): the board, a view per group, what the columns mean, and the
form that scores an uploaded run beside the board and proposes it to the Space as a pull request.

The endpoints the page calls are the API (``gradio_client``): ``/board`` (every row's scores and letters),
``/group`` (a category's or task's view), ``/score`` (an upload scored and compared) and ``/pull_request``.
Scoring runs one upload at a time, a few queued at most; the upload's size is capped by gradio as sent (the board's
``max_upload_bytes``) and by ``upload`` once decompressed."""

import os
from pathlib import Path

import gradio as gr

from mmrhub.declaration import Benchmark
from mmrhub.leaderboard import html
from mmrhub.leaderboard.board import read_board
from mmrhub.leaderboard.live import LiveBoard
from mmrhub.leaderboard.live import UploadError
from mmrhub.leaderboard.pull_request import open_pull_request
from mmrhub.leaderboard.pull_request import space_id
from mmrhub.leaderboard.standings import payload

MAX_QUEUED = 8  # uploads waiting to be scored; more are turned away by gradio's queue


def can_sign_in() -> bool:
    """Whether gradio can sign a user in here: on a Space (the Hub's OAuth), or elsewhere with a Hub token, as which
    gradio signs in for trying a page locally; without either its login button would stop the page from starting."""
    if os.environ.get("SYSTEM") == "spaces":
        return True
    from huggingface_hub import get_token

    return get_token() is not None


def launch_options(folder) -> dict:
    """What ``demo.launch`` needs besides where to listen: the page's style and the upload cap as sent."""
    return {"css": html.STYLE, "max_file_size": read_board(folder).max_upload_bytes}


def build_page(benchmark: Benchmark, folder) -> gr.Blocks:
    """The page of the board in ``folder`` (read once, here)."""
    live = LiveBoard(benchmark, folder)
    board = live.board
    breakdown = benchmark.breakdown
    groups = html.groups_of(live.standings, benchmark)

    def show_board() -> dict:
        """Every row of the board: label, name, scores as evaluate prints them, letters, run and record."""
        return payload(live.standings, benchmark)

    def show_group(group: str) -> str:
        """The entries' means over one group's queries (gradio refuses a group that is not one of the choices)."""
        return html.groups_table(live.standings, benchmark, group)

    def score(run, name, record):
        """Score the uploaded run, show it beside the board with its letters against every row."""
        if not run:
            return html.said(["Choose a run file first."], error=True), "", None, None, ""
        shown = Path(run).name
        try:
            uploaded = live.score(run, shown, name or "", record or None)
        except UploadError as err:
            return html.said([f"{shown}: not scored."] + str(err).splitlines(), error=True), "", None, None, ""
        entry = uploaded.entry
        label = uploaded.standings.label(entry.name)
        lines = [f"{shown} scored as {entry.name!r} (row {label}), beside the board's {len(live.names)} entries."]
        shown_board = html.board_table(uploaded.standings, benchmark, upload=entry.name)
        command = html.add_command(space_id(), shown, entry.name)
        return (
            html.said(lines + uploaded.data["notes"]),
            shown_board,
            payload(uploaded.standings, benchmark, only=entry.name),
            uploaded.data,
            command,
        )

    def pull_request(data, oauth_token: gr.OAuthToken | None) -> str:
        """Open a pull request adding the scored upload's result file to the Space, with the user's login."""
        if not data:
            return html.said(["Score a run first: the pull request adds its result."], error=True)
        if not space_id():
            not_a_space = (
                "This board is not running as a Hub Space (SPACE_ID is not set): add the run with the commands below."
            )
            return html.said([not_a_space], error=True)
        if oauth_token is None:
            return html.said(
                ["Sign in with Hugging Face to open the pull request, or add the run with the commands below."]
            )
        try:
            url = open_pull_request(data, space_id(), oauth_token.token)
        except (PermissionError, ConnectionError) as err:
            return html.said([str(err)], error=True)
        return html.said([f"Pull request opened: {url}"])

    with gr.Blocks(title=f"{benchmark.title} leaderboard") as demo:
        gr.HTML(html.header(benchmark, board, len(live.standings.entries), live.problems))
        with gr.Tabs():
            with gr.Tab("Board"):
                gr.HTML(html.board_table(live.standings, benchmark), js_on_load=html.SORT_SCRIPT, elem_id="board")
                gr.HTML(html.definitions(benchmark, live.standings, board), elem_id="definitions")
            with gr.Tab(f"By {breakdown.label.lower()}"):
                group = gr.Dropdown(groups, value=groups[0] if groups else None, label=breakdown.label)
                first = html.groups_table(live.standings, benchmark, groups[0]) if groups else ""
                view = gr.HTML(first, js_on_load=html.SORT_SCRIPT, elem_id="group")
                group.change(show_group, group, view, api_name="group")
            with gr.Tab("Submit a run"):
                gr.Markdown(
                    "A run file: the official JSON, TREC, a ranx or pytrec_eval dict, or M2KR's Kaggle CSV; gzip, "
                    f"bz2 or xz compressed or not; at most {board.max_upload_bytes:,} bytes. Its record "
                    "(RUN.json.meta.json), if you have one, says how it was made."
                )
                with gr.Row():
                    run = gr.File(label="run", type="filepath", elem_id="run-file")
                    record = gr.File(label="record (optional)", type="filepath", elem_id="record-file")
                name = gr.Textbox(label="name (default: the file's name)", max_length=100, elem_id="entry-name")
                button = gr.Button("Score", variant="primary", elem_id="score")
                status = gr.HTML(elem_id="status")
                result = gr.HTML(js_on_load=html.SORT_SCRIPT, elem_id="result")
                scores = gr.JSON(label="the upload's scores", elem_id="scores")
                scored = gr.State()
                command = gr.HTML(elem_id="command")
                if can_sign_in():
                    gr.LoginButton()
                propose = gr.Button("Open a pull request adding this run", elem_id="pull-request")
                proposed = gr.HTML(elem_id="proposed")
        button.click(
            score,
            [run, name, record],
            [status, result, scores, scored, command],
            api_name="score",
            concurrency_limit=1,
        )
        propose.click(pull_request, scored, proposed, api_name="pull_request", concurrency_limit=1)
        gr.api(show_board, api_name="board")
    demo.queue(max_size=MAX_QUEUED)
    return demo
