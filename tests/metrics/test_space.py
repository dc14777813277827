"""The metric Space starts: each folder's app.py, copied to a folder named ``app`` as a Space runs it, launches
headless and offline on 127.0.0.1 and computes its card's example through gradio's API, equal to ``evaluate.load``
of the metric folder. The card's ``sdk_version`` is the gradio installed here (the ``space`` extra)."""

import importlib.util
import inspect
import json
import os
import re
import shutil
import socket
import types

import evaluate
import pytest
from _metrics_helpers import M2KR
from _metrics_helpers import MIPR
from _paths import ROOT

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"  # before gradio is imported: no call home
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


def load_app(path):
    spec = importlib.util.spec_from_file_location(f"space_app_{path.parent.parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("name", NAMES)
def test_card_names_the_gradio_the_space_extra_installs(name):
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r"^space = \[(.*)\]$", pyproject, re.M).group(1) == f'"gradio=={card_sdk_version(name)}"'
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
    folder = tmp_path / "app"  # a Space's folder: evaluate.load(folder) would load app.py as the metric
    shutil.copytree(ROOT / "metrics" / name, folder, ignore=shutil.ignore_patterns("__pycache__"))
    app = load_app(folder / "app.py")
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
