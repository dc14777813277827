"""The board Space started as a Space checkout starts it, and looked at in headless Chromium.

A fresh venv holds only the board's ``requirements.txt`` and the gradio its card's ``sdk_version`` names (what the
Space's SDK installs): no mmrhub, so ``python app.py`` runs the code copied into the board folder. The Hub is a
loopback emulation (``_hub_server``) that gradio's local sign-in asks who the token is, and that records the pull
request's commit. In the page: the board shows the sample's entries as ``mmrhub evaluate`` prints them with
``mmrhub compare``'s letters, every column sorts, an upload's scores are ``evaluate``'s to the last printed digit and
its letters ``compare``'s, hostile uploads give one line and run nothing, a signed-in user opens the pull request,
and ``gradio_client`` gets the same from the same endpoints. Slow: the venv is built once (about half a minute)."""

import csv
import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest
from _browser import chromium
from _browser import missing
from _browser import skip_or_fail
from _hub_server import HubServer
from _leaderboard_helpers import compare_summary
from _leaderboard_helpers import evaluate_cells
from _leaderboard_helpers import free_port
from _leaderboard_helpers import mipr_runs
from _paths import M2KR_RUN
from _paths import MIPR_EMBEDDING

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.cli import main
from mmrhub.leaderboard.space import sdk_version

pytestmark = pytest.mark.slow
REPO = "org/mipr-board"
TOKEN = "user-token"
SIGNED_IN = "mock-oauth-token-for-local-dev"  # the token gradio's local sign-in gives a signed-in user


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A fresh venv from a board's requirements.txt and the card's gradio; its python."""
    if missing():
        skip_or_fail(missing())
    folder = tmp_path_factory.mktemp("space-venv")
    board = folder / "board"
    assert main(["leaderboard", "mipr", str(MIPR_EMBEDDING), "-o", str(board)]) == 0
    subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True)
    python = folder / "venv" / "bin" / "python"
    requirements = ["-r", str(board / "requirements.txt"), f"gradio=={sdk_version(BENCHMARKS['mipr'])}"]
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", *requirements], capture_output=True, text=True, timeout=900
    )
    if installed.returncode:
        skip_or_fail(f"cannot install the Space's requirements: {installed.stderr.strip().splitlines()[-1:]}")
    outside = subprocess.run([str(python), "-c", "import mmrhub"], cwd=folder, capture_output=True, text=True)
    assert "No module named 'mmrhub'" in outside.stderr  # the Space's code is the board's copy, nothing else
    return python


@pytest.fixture(scope="module")
def space(tmp_path_factory, venv):
    """The MIPR sample board (three runs, uploads capped at 1 MB) started with ``python app.py`` in its folder."""
    folder = tmp_path_factory.mktemp("space")
    runs = mipr_runs(folder)
    board = folder / "board"
    assert main(["leaderboard", "mipr", *map(str, runs[:3]), "-o", str(board), "--max-upload-mb", "1"]) == 0
    port = free_port()
    with HubServer(tokens={TOKEN: "someone", SIGNED_IN: "someone"}) as hub:
        hub.create_repo(REPO, "space")
        env = {
            **{name: value for name, value in os.environ.items() if not name.startswith(("HF_", "GRADIO_"))},
            "PYTHONPATH": "",
            "GRADIO_SERVER_NAME": "127.0.0.1",
            "GRADIO_SERVER_PORT": str(port),
            "GRADIO_ANALYTICS_ENABLED": "False",
            "GRADIO_TEMP_DIR": str(folder / "gradio"),
            "HF_HOME": str(folder / "hf"),
            "HF_ENDPOINT": hub.url,
            "HF_TOKEN": TOKEN,  # gradio signs in locally as this token's user (whoami on the loopback Hub)
            "HF_HUB_OFFLINE": "0",  # the Hub here is the loopback one
            "HF_HUB_DISABLE_XET": "1",  # which speaks LFS, not Xet
            "SPACE_ID": REPO,
        }
        log = open(folder / "app.log", "w")
        process = subprocess.Popen([str(venv), "app.py"], cwd=board, env=env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}/"
        try:
            for _ in range(240):
                if process.poll() is not None:
                    break
                try:
                    urllib.request.urlopen(url, timeout=2)
                    break
                except OSError:
                    time.sleep(0.25)
            else:
                pytest.fail("the Space did not answer within a minute")
            assert process.poll() is None, (folder / "app.log").read_text()[-3000:]
            yield {"url": url, "board": board, "runs": runs, "hub": hub, "folder": folder}
        finally:
            process.terminate()
            process.wait(timeout=30)
            log.close()


@pytest.fixture
def browser(space):
    driver = chromium()
    driver.get(space["url"])
    wait(driver, "return document.querySelectorAll('#board table.board tbody tr').length")
    yield driver
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    driver.quit()
    assert errors == []


def wait(driver, script: str, timeout: float = 60):
    """The first truthy value ``script`` returns, polled."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"nothing came of {script!r} within {timeout} s")


ROWS = """return Array.from(document.querySelectorAll('SELECTOR tbody tr'), row =>
  Array.from(row.cells, cell => cell.innerText.replace(/\\s+/g, ' ').trim()));"""


def rows(driver, selector: str) -> list:
    return driver.execute_script(ROWS.replace("SELECTOR", selector))


def tab(driver, name: str) -> None:
    from selenium.webdriver.common.by import By

    next(button for button in driver.find_elements(By.CSS_SELECTOR, "button[role=tab]") if name in button.text).click()


def upload(driver, path, name: str = "") -> list:
    """Upload ``path`` in the Submit tab, as ``name``, press Score: the status lines."""
    from selenium.webdriver.common.by import By

    tab(driver, "Submit")
    driver.find_elements(By.CSS_SELECTOR, "#run-file input[type=file]")[0].send_keys(str(path))
    # the component shows the name's stem and its extension on lines of their own
    wait(driver, f"return document.querySelector('#run-file').innerText.includes({json.dumps(path.stem)})")
    if name:
        driver.find_element(By.CSS_SELECTOR, "#entry-name textarea, #entry-name input").send_keys(name)
    driver.find_element(By.CSS_SELECTOR, "#score").click()
    return wait(driver, "return Array.from(document.querySelectorAll('#status p'), p => p.innerText)")


def board_cells(summary: dict, names: list) -> list:
    """compare's summary cells as the page shows them (the letters right after the value)."""
    return [[summary[name][0], name, *(cell.replace(" >", ">") for cell in summary[name][1])] for name in names]


def test_the_board_shows_the_entries_as_evaluate_and_compare_print_them(capsys, space, browser):
    runs = space["runs"][:3]
    shown = rows(browser, "#board table.board")
    entries = shown[:3]
    names = [row[1] for row in entries]
    evaluated = evaluate_cells(capsys, "mipr", runs)
    assert [[cell.split(">")[0] for cell in row[2:8]] for row in entries] == [evaluated[name] for name in names]
    summary = compare_summary(capsys, "mipr", [next(r for r in runs if r.stem == name) for name in names])
    assert [row[:8] for row in entries] == board_cells(summary, names)
    published = shown[3:]
    assert [row[1] for row in published] == [
        f"{name} (the MIPR paper's table, as published, not recomputed)"
        for name in ("Qwen3-VL-Embedding-8B", "Qwen3-VL-Reranker-8B", "Candidate-pool Oracle")
    ]
    assert published[0][2:8] == ["49.23", "53.98", "47.02", "85.63", "61.33", "55.86"]
    header = browser.execute_script("return document.querySelector('.mmrhub-board').innerText")
    assert "Bundled MIPR sample, not the benchmark: its numbers mean nothing." in header
    assert "the bundled MIPR sample of mmrhub 0.1.0: mipr_query.jsonl (sha256" in header
    definitions = rows(browser, "#definitions table.definitions")
    assert [row[0] for row in definitions] == list(BENCHMARKS["mipr"].measures.DEFINITIONS)
    assert definitions[1][1] == "|L1 in top k| / |L1 judged| (trec_eval recall; recall_denominator, no_l1)"
    tab(browser, "category")
    categories = rows(browser, "#group table.groups")
    assert sorted(row[1] for row in categories) == sorted(names)


def test_every_column_sorts(space, browser):
    from selenium.webdriver.common.by import By

    def column(index):
        return [row[index] for row in rows(browser, "#board table.board")]

    def heading(text):
        return next(th for th in browser.find_elements(By.CSS_SELECTOR, "#board th") if th.text.startswith(text))

    for name in ("nDCG@10", "R-L1@10", "Hit-L1@1", "SC-R-L1@10*"):
        index = 2 + ["nDCG@10", "R-L1@10", "Hit-L1@1", "Hit-L1@10", "SC-R-L1@10", "SC-R-L1@10*"].index(name)
        heading(name).click()
        values = [float(cell.split(">")[0]) for cell in column(index)]
        assert values == sorted(values, reverse=True), name
        heading(name).click()
        values = [float(cell.split(">")[0]) for cell in column(index)]
        assert values == sorted(values), name
    heading("System").click()
    assert column(1) == sorted(column(1), reverse=True)


def test_an_upload_scores_as_evaluate_and_compares_as_compare(capsys, space, browser):
    runs = space["runs"]
    lines = upload(browser, runs[3], "uploaded")
    assert lines == ["swapped_reranker.json scored as 'uploaded' (row d), beside the board's 3 entries."]
    shown = rows(browser, "#result table.board")[:4]
    assert shown[3][1] == "uploaded"
    evaluated = evaluate_cells(capsys, "mipr", [runs[3]])["swapped_reranker"]
    assert [cell.split(">")[0] for cell in shown[3][2:8]] == evaluated
    ordered = [next(r for r in runs if r.stem == row[1]) for row in shown[:3]] + [runs[3]]
    summary = compare_summary(capsys, "mipr", ordered)
    summary["uploaded"] = summary.pop("swapped_reranker")
    assert [row[:8] for row in shown] == board_cells(summary, [row[1] for row in shown])
    marked = browser.execute_script("return document.querySelector('#result tr.upload').cells[1].innerText")
    assert marked == "uploaded"


HOSTILE = '<img src=x onerror="window.__ran=1">${window.__ran=2}{{constructor.constructor("window.__ran=3")()}}'


def test_hostile_uploads_give_one_line_and_run_nothing(space, browser, tmp_path):
    malformed = tmp_path / "malformed.json"
    malformed.write_text('[{"qid": "1", "ranked": [')
    lines = upload(browser, malformed)
    assert lines[0] == "malformed.json: not scored."
    assert len(lines) == 2 and lines[1].startswith("malformed.json: line 1, column 26, byte offset 25: not valid JSON")

    browser.refresh()
    wait(browser, "return document.querySelectorAll('#board table.board tbody tr').length")
    huge = tmp_path / "huge.json"
    huge.write_text("[" + " " * (2 << 20) + "]")
    tab(browser, "Submit")
    browser.find_elements("css selector", "#run-file input[type=file]")[0].send_keys(str(huge))
    toast = wait(browser, "return Array.from(document.querySelectorAll('[data-testid=toast-body]'), t => t.innerText)")
    assert any('File(s) exceed the maximum allowed size of 1.0 Mb: "huge.json"' in text for text in toast)
    assert browser.execute_script("return document.querySelectorAll('#status p').length") == 0

    browser.refresh()
    wait(browser, "return document.querySelectorAll('#board table.board tbody tr').length")
    entries = json.loads(space["runs"][0].read_text())
    entries[0]["qid"] = HOSTILE
    entries[1]["ranked"][0]["did"] = HOSTILE
    ids = tmp_path / f"ids{''.join(c for c in HOSTILE if c.isalnum())[:20]}.json"
    ids.write_text(json.dumps(entries))
    lines = upload(browser, ids, HOSTILE)
    assert lines[1] == f"{ids.name} does not fit the benchmark: 3 problem(s):"
    assert lines[2] == f"query {HOSTILE!r} (entry 1): not a query of the benchmark"
    assert lines[3] == f"query '2' position 1 (entry 2): {HOSTILE!r} is not in the corpus"
    assert browser.execute_script("return window.__ran") is None
    assert browser.execute_script("return document.querySelectorAll('#status img, #result img').length") == 0

    kaggle = tmp_path / "m2kr_submission.csv"
    with open(kaggle, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question_id", "passage_id"])
        for entry in json.loads(M2KR_RUN.read_text()):
            writer.writerow([entry["qid"], json.dumps([item["did"] for item in entry["ranked"]])])
    browser.refresh()
    wait(browser, "return document.querySelectorAll('#board table.board tbody tr').length")
    lines = upload(browser, kaggle)
    assert lines[0] == "m2kr_submission.csv: not scored." and len(lines) == 2
    assert lines[1].startswith("m2kr_submission.csv: none of its 30 queries (e.g. '4100') is a query of MIPR")


def test_a_signed_in_user_opens_the_pull_request(capsys, space, browser):
    from selenium.webdriver.common.by import By

    tab(browser, "Submit")
    next(button for button in browser.find_elements(By.CSS_SELECTOR, "button") if "Sign in" in button.text).click()
    time.sleep(1)  # the button sends the page to the sign-in and back: a new page
    wait(browser, "return document.querySelectorAll('#board table.board tbody tr').length")
    tab(browser, "Submit")
    wait(
        browser, "return Array.from(document.querySelectorAll('button'), b => b.innerText).includes('Logout (someone)')"
    )
    run = space["runs"][3]
    upload(browser, run, "proposed")
    browser.find_element(By.CSS_SELECTOR, "#pull-request").click()
    said = wait(browser, "return Array.from(document.querySelectorAll('#proposed p'), p => p.innerText)")
    hub = space["hub"]
    repo = hub.repo(REPO, "space")
    number = repo.pull_requests[-1].num
    assert said == [f"Pull request opened: {hub.url}/spaces/{REPO}/discussions/{number}"]
    commit = repo.resolve(f"refs/pr/{number}")
    assert commit.token == SIGNED_IN and commit.parent == repo.head
    [(path, content)] = repo.pull_request_files(number).items()
    data = json.loads(content)
    assert path.startswith("results/proposed-") and data["name"] == "proposed"
    evaluated = evaluate_cells(capsys, "mipr", [run])["swapped_reranker"]
    assert [f"{100 * value:.2f}" for value in list(data["table"].values())[:6]] == evaluated


def test_gradio_client_gets_what_the_page_shows(space, browser):
    from gradio_client import Client
    from gradio_client import handle_file

    client = Client(space["url"], verbose=False)
    board = client.predict(api_name="/board")
    shown = rows(browser, "#board table.board")[:3]
    assert [[row["label"], row["name"], *row["scores"].values()] for row in board["rows"]] == [
        [row[0], row[1], *(cell.split(">")[0] for cell in row[2:8])] for row in shown
    ]
    _, _, scores, _ = client.predict(handle_file(str(space["runs"][3])), "", None, api_name="/score")
    lines = upload(browser, space["runs"][3])
    assert lines[0].endswith("(row d), beside the board's 3 entries.")
    page = rows(browser, "#result table.board")[3]
    assert [scores["label"], scores["name"], *scores["scores"].values()] == [
        page[0],
        page[1],
        *(cell.split(">")[0] for cell in page[2:8]),
    ]
