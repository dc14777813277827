"""The board's page through ``gradio_client`` (the endpoints the page itself calls), launched in this process on
127.0.0.1: the board's rows are ``mmrhub evaluate``'s cells with ``compare``'s letters, the published rows are
marked, each group's view holds ``evaluate --by-category``'s means, an upload comes back scored and compared or
refused in a line per problem, and a pull request needs a Space and a login. The pull request itself is made by
huggingface_hub's own client against a loopback Hub that records the commit."""

import json

import pytest
from _cli import md_tables
from _cli import run_cli
from _hub_server import HubServer
from _leaderboard_helpers import Cells
from _leaderboard_helpers import evaluate_cells
from _leaderboard_helpers import free_port
from _paths import M2KR_RUN

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.cli import main
from mmrhub.leaderboard import html
from mmrhub.leaderboard.results import file_name

pytest.importorskip("gradio")
gradio_client = pytest.importorskip("gradio_client")


@pytest.fixture(scope="module")
def space(board):
    """The MIPR sample board's page, launched; (client, board folder)."""
    from mmrhub.leaderboard.page import build_page
    from mmrhub.leaderboard.page import launch_options

    demo = build_page(BENCHMARKS["mipr"], board)
    port = free_port()
    demo.launch(
        server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **launch_options(board)
    )
    try:
        yield gradio_client.Client(f"http://127.0.0.1:{port}/", verbose=False), board
    finally:
        demo.close()


def test_the_board_endpoint_gives_evaluate_s_cells_and_the_letters(capsys, space, runs):
    client, _ = space
    board = client.predict(api_name="/board")
    evaluated = evaluate_cells(capsys, "mipr", runs[:3])
    assert [row["label"] for row in board["rows"]] == ["a", "b", "c"]
    for row in board["rows"]:
        assert list(row["scores"].values()) == evaluated[row["name"]]
        assert row["run"]["file"] == f"{row['name']}.json" and row["record"] is None
    assert board["rows"][0]["letters"]["nDCG@10"] == ["b", "c"]  # the reranked run, above both embedding runs
    assert [row["name"] for row in board["published"]] == [
        "Qwen3-VL-Embedding-8B",
        "Qwen3-VL-Reranker-8B",
        "Candidate-pool Oracle",
    ]
    assert board["published"][0]["scores"]["nDCG@10"] == 49.23
    assert all(row["source"] == "the MIPR paper's table" for row in board["published"])


def test_each_category_s_view_holds_evaluate_s_means(capsys, space, runs):
    client, _ = space
    code, out, err = run_cli(capsys, "evaluate", "mipr", runs[1], "--by-category")
    assert code == 0, err
    categories = md_tables(out)[1]  # the reranked run's per-category table
    for category, *means, count in categories[1:]:
        table = Cells(client.predict(category, api_name="/group")).tables[0]
        row = next(cells for cells in table if cells[1] == "simulated_reranker_top50")
        assert row[2:] == [*means, count], category
    with pytest.raises(gradio_client.exceptions.AppError, match="no such is not in the list of choices"):
        client.predict("no such", api_name="/group")


def test_an_upload_comes_back_scored_and_compared(capsys, space, runs):
    client, _ = space
    status, shown, scores, command = client.predict(
        gradio_client.handle_file(str(runs[3])), "<b>new</b>", None, api_name="/score"
    )
    assert Cells(status).tables == [] and "swapped_reranker.json scored as '<b>new</b>' (row d)" in status.replace(
        "&#x27;", "'"
    ).replace("&lt;", "<").replace("&gt;", ">")
    assert scores["label"] == "d" and scores["name"] == "<b>new</b>"
    assert list(scores["scores"].values()) == evaluate_cells(capsys, "mipr", [runs[3]])["swapped_reranker"]
    table = Cells(shown).tables[0]
    assert [row[1] for row in table[1:5]] == [
        "simulated_reranker_top50",
        "simulated_embedding_top50",
        "swapped_embedding",
        "<b>new</b>",
    ]
    assert "<b>" not in shown and "&lt;b&gt;new&lt;/b&gt;" in shown
    assert "mmrhub leaderboard add BOARD swapped_reranker.json --name" in command.replace("&#x27;", "'")


def test_a_refused_upload_says_why_and_scores_nothing(space, tmp_path):
    client, _ = space
    bad = tmp_path / "bad.trec"
    bad.write_text("1 Q0 a 1\n")
    status, shown, scores, _ = client.predict(gradio_client.handle_file(str(bad)), "", None, api_name="/score")
    assert shown == "" and scores is None
    lines = [line.strip() for line in Cells(f"<table><tr><td>{status}</td></tr></table>").tables[0][0]]
    assert "bad.trec: not scored." in lines[0] and "bad.trec: line 1: expected 6 fields" in lines[0]


def test_a_pull_request_needs_a_space_and_a_login(space, runs, monkeypatch):
    client, _ = space
    monkeypatch.delenv("SPACE_ID", raising=False)
    client.predict(gradio_client.handle_file(str(M2KR_RUN)), "", None, api_name="/score")  # refused: nothing to add
    assert "Score a run first" in client.predict(api_name="/pull_request")
    client.predict(gradio_client.handle_file(str(runs[3])), "later", None, api_name="/score")
    assert "not running as a Hub Space (SPACE_ID is not set)" in client.predict(api_name="/pull_request")
    monkeypatch.setenv("SPACE_ID", "org/mipr-board")
    assert "Sign in with Hugging Face to open the pull request" in client.predict(api_name="/pull_request")


def test_the_pull_request_is_a_commit_to_the_space_with_create_pr(space, monkeypatch):
    """huggingface_hub's own create_commit, against a loopback Hub that records it."""
    import huggingface_hub.constants

    from mmrhub.leaderboard.pull_request import open_pull_request

    _, board = space
    data = json.loads((board / "results" / file_name("swapped_embedding")).read_text())
    data["name"] = "proposed"
    with HubServer(tokens={"user-token": "someone"}) as hub:
        hub.create_repo("org/mipr-board", "space")
        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", hub.url)
        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_XET", True)
        url = open_pull_request(data, "org/mipr-board", "user-token")
        with pytest.raises(PermissionError, match=r"the Hub refused the pull request to org/mipr-board \(401\)"):
            open_pull_request(data, "org/mipr-board", "stolen")
        with pytest.raises(PermissionError, match=r"to org/elsewhere \(404\)"):
            open_pull_request(data, "org/elsewhere", "user-token")
    assert url == f"{hub.url}/spaces/org/mipr-board/discussions/1"
    repo = hub.repo("org/mipr-board", "space")
    [pull_request] = repo.pull_requests
    commit = repo.resolve(f"refs/pr/{pull_request.num}")
    assert repo.head != commit.oid and commit.parent == repo.head and commit.token == "user-token"
    path = f"results/{file_name('proposed')}"
    assert commit.operations == [("add", path)] and list(repo.pull_request_files(1)) == [path]
    assert json.loads(repo.pull_request_files(1)[path]) == data
    assert commit.message == "Add proposed to the board" and "sha256" in commit.description


def test_every_shown_text_is_escaped_markup_and_template_alike():
    hostile = "<img src=x onerror=alert(1)>${alert(2)}{{constructor}}`x`"
    escaped = html.escape(hostile)
    assert "<" not in escaped and "$" not in escaped and "{" not in escaped and "`" not in escaped
    assert Cells(f"<table><tr><td>{escaped}</td></tr></table>").tables[0][0] == [hostile]
    assert html.escape("a\x1b[2Jb") == "a\\x1b[2Jb"  # a terminal escape shown, never sent


def test_the_m2kr_page_shows_the_card_s_row_and_its_tasks(tmp_path):
    from mmrhub.leaderboard.page import build_page

    board = tmp_path / "board"
    assert main(["leaderboard", "m2kr", str(M2KR_RUN), "-o", str(board)]) == 0
    demo = build_page(BENCHMARKS["m2kr"], board)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        client = gradio_client.Client(f"http://127.0.0.1:{port}/", verbose=False)
        shown = client.predict(api_name="/board")
        tasks = Cells(client.predict("image+text-to-document", api_name="/group")).tables[0]
    finally:
        demo.close()
    assert shown["published"] == [
        {
            "name": "PreFLMR ViT-G",
            "source": "the M2KR challenge card",
            "scores": {"Recall@1": 19.5, "Recall@3": 34.0, "Recall@5": 41.2, "Recall-mean": 31.6},
        }
    ]
    assert tasks[1][1] == "simulated_top5" and tasks[1][-1] == "10"


def test_a_board_whose_every_entry_was_left_out_still_starts_and_scores(space, tmp_path, runs):
    import shutil

    from mmrhub.leaderboard.page import build_page

    _, board = space
    empty = shutil.copytree(board, tmp_path / "board")
    for result in (empty / "results").glob("*.json"):
        result.write_text("{}")
    demo = build_page(BENCHMARKS["mipr"], empty)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        client = gradio_client.Client(f"http://127.0.0.1:{port}/", verbose=False)
        shown = client.predict(api_name="/board")
        _, _, scores, _ = client.predict(gradio_client.handle_file(str(runs[3])), "", None, api_name="/score")
    finally:
        demo.close()
    assert shown["rows"] == [] and len(shown["published"]) == 3
    assert scores["label"] == "a" and scores["letters"]["nDCG@10"] == []
