"""The metric Space starts: each folder's app.py, copied to a folder named ``app`` as a Space runs it, launches
headless and offline on 127.0.0.1 and computes its card's example through gradio's API, equal to ``evaluate.load``
of the metric folder. The card's ``sdk_version`` is the gradio installed here (the ``space`` extra)."""

import inspect
import json
import re
import socket
import types

import evaluate
import pytest
from _metrics_helpers import M2KR
from _metrics_helpers import MIPR
from _paths import ROOT
from _space_helpers import space_app

NAMES = ["mipr", "m2kr"]
COLUMNS = {"mipr": ["predictions", "references", "grades", "categories"], "m2kr": ["predictions", "references"]}


def card_example(name: str) -> dict:
    """The keyword arguments of the first ``compute`` call in the card's "How to Use", as the card writes them."""
    card = (ROOT / "metrics" / name / "README.md").read_text(encoding="utf-8")
    lines = []
    for line in card.split("## How to Use", 1)[1].splitlines():
        if line.startswith(">>> ") and not line.startswith(">>> import "):
            lines.append(line[4:])
            if ".compute(" in line:
                break
    calls = []
    recorder = types.SimpleNamespace(compute=lambda **kwargs: calls.append(kwargs))
    exec("\n".join(lines), {"evaluate": types.SimpleNamespace(load=lambda path: recorder)})
    return calls[0]


def card_sdk_version(name: str) -> str:
    card = (ROOT / "metrics" / name / "README.md").read_text(encoding="utf-8")
    return re.search(r"^sdk_version: (\S+)$", card, re.M).group(1)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("name", NAMES)
def test_card_names_the_gradio_the_space_extra_installs(name):
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    # the OAuth extra: a leaderboard Space signs users in (mmrhub leaderboard)
    assert re.search(r"^space = \[(.*)\]$", pyproject, re.M).group(1) == f'"gradio[oauth]=={card_sdk_version(name)}"'
    assert "gradio" not in (ROOT / "metrics" / name / "requirements.txt").read_text()  # the SDK brings it
    gradio = pytest.importorskip("gradio")
    assert gradio.__version__ == card_sdk_version(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_space_starts_and_computes_the_card_example(name, tmp_path, monkeypatch):
    pytest.importorskip("gradio")
    client = pytest.importorskip("gradio_client")
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    app = space_app(name, tmp_path)
    example = card_example(name)
    assert app.EXAMPLE == example  # the page opens on the card's example
    table = {"headers": COLUMNS[name], "data": [[json.dumps(example[c][i]) for c in COLUMNS[name]] for i in range(2)]}
    k = ",".join(map(str, example.get("k", M2KR.DEFAULT_K)))  # M2KR's example keeps the default cutoffs
    options = [reading.default for reading in app.READINGS.values()] if name == "mipr" else [example["variants"]]
    repeated = {**table, "data": [[json.dumps(["a", "a"]), *row[1:]] for row in table["data"]]}
    port = free_port()
    app.demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        space = client.Client(f"http://127.0.0.1:{port}/", verbose=False)
        scores = space.predict(table, k, *options, api_name="/compute")
        with pytest.raises(Exception, match="lists 'a' a second time"):  # the metric's refusal, shown on the page
            space.predict(repeated, k, *options, api_name="/compute")
    finally:
        app.demo.close()
    assert scores == evaluate.load(str(ROOT / "metrics" / name)).compute(**example)
    # every option of the metric is on the page, by its keyword, the default first
    if name == "mipr":
        assert list(inspect.signature(app.compute).parameters)[2:] == list(MIPR.READINGS) == list(app.READINGS)
    else:
        assert app.VARIANTS == list(M2KR.VARIANTS) and app.DEFAULT_K == list(M2KR.DEFAULT_K)


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    pytest.importorskip("gradio")
    root = tmp_path_factory.mktemp("spaces")
    return {name: space_app(name, root) for name in NAMES}


def page_error(app, table, k="1"):
    """The one line the page shows for ``table`` (a gradio error), or the scores."""
    options = [reading.default for reading in app.READINGS.values()] if hasattr(app, "READINGS") else [["recall"]]
    try:
        return app.compute(table, k, *options)
    except Exception as err:
        assert type(err).__name__ == "Error", repr(err)  # gradio's: shown on the page, never a traceback
        return str(err.message)


WHERE = "queries: row 2, column references"
EXPECTED = "expected a JSON list of strings or comma-separated values"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "cell, said",
    [
        ('["a", null]', f"{WHERE}, position 2: null, expected a string (an id in quotes)"),
        ('["a", ["b"]]', f"{WHERE}, position 2: a list, expected a string (an id in quotes)"),
        ('["a", 7]', f"{WHERE}, position 2: the number 7, expected a string (an id in quotes)"),
        ("[" * 100_000, f"{WHERE}: lists nested too deep, {EXPECTED}"),
        ('["a", "b"', f"{WHERE}: '[\"a\", \"b\"' is not JSON (Expecting ',' delimiter, character 10), {EXPECTED}"),
    ],
)
def test_space_cells_are_checked_naming_row_and_column(apps, name, cell, said):
    good = ["a", "a", "L1", "x-1"][: len(COLUMNS[name])]
    bad = [cell if column == "references" else value for column, value in zip(COLUMNS[name], good)]
    assert page_error(apps[name], [good, bad]) == said


@pytest.mark.parametrize("name", NAMES)
def test_space_rows_and_cutoffs_are_checked(apps, name):
    columns = ", ".join(COLUMNS[name])
    good = ["a", "a", "L1", "x-1"][: len(COLUMNS[name])]
    assert page_error(apps[name], [good, ["a"]]) == f"queries: row 2 has 1 cell(s), expected {len(good)} ({columns})"
    assert page_error(apps[name], [good, None]) == f"queries: row 2 has NoneType, expected {len(good)} ({columns})"
    assert page_error(apps[name], [good, [*good[:-1], 3]]) == (
        f"queries: row 2, column {COLUMNS[name][-1]}: int 3, {EXPECTED}"
    )
    assert page_error(apps[name], [good], k="1,x") == "k: expected a whole number from 1 to 1,000, got 'x'"
    # JSON cells and comma-separated ones score alike
    assert page_error(apps[name], [good, ['["b", "a"]', *good[1:]]]) == page_error(
        apps[name], [good, ["b, a", *good[1:]]]
    )
