"""Settings every test runs under, and the fixtures several test folders share."""

import os
import sys
import tempfile

import pytest
from _paths import ROOT

# Tests never reach the Hub and never touch the user's cache: set before datasets is imported.
_HF_HOME = tempfile.mkdtemp(prefix="mmrhub-test-hf-")
os.environ["HF_HOME"] = _HF_HOME
os.environ["HF_DATASETS_CACHE"] = os.path.join(_HF_HOME, "datasets")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_EVALUATE_OFFLINE"] = "1"

# The tiny random checkpoints are built by scripts/tiny_models.py (which scripts/make_tiny_models.py and
# bench/gpu_check.sh use too): a script's module, not the library's, imported by the tests as ``tiny_models``.
sys.path.append(str(ROOT / "scripts"))


@pytest.fixture(scope="session")
def exported(tmp_path_factory):
    """``exported(benchmark, format)`` -> the repo folder, exported from the bundled sample on first use."""
    from _export_helpers import export  # here, not at the top: datasets is imported once HF_HOME is set above

    root = tmp_path_factory.mktemp("export")
    done = {}

    def get(benchmark: str, format: str = "hf"):
        if (benchmark, format) not in done:
            done[benchmark, format] = export(benchmark, root / f"{benchmark}-{format}", format=format)
        return done[benchmark, format]

    return get


@pytest.fixture
def range_server(tmp_path):
    """A loopback HTTP server (``tests/_range_server.py``) over a fresh folder ``server.root``, counting requests."""
    from _range_server import RangeServer

    root = tmp_path / "served"
    root.mkdir()
    with RangeServer(root) as server:
        yield server


@pytest.fixture
def hub_server(range_server, monkeypatch):
    """``range_server`` as the Hub: huggingface_hub (and ``hf://``) talks to it, online, with fresh file systems.

    Add repos with ``hub_server.add_repo("owner/name", folder)``.
    """
    from _range_server import HUB_URL_TEMPLATE
    from huggingface_hub import HfFileSystem
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", range_server.url)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", range_server.url + HUB_URL_TEMPLATE)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    if "datasets" in sys.modules:  # datasets gives hf:// its own endpoint (storage options) and offline flag
        monkeypatch.setattr(sys.modules["datasets"].config, "HF_ENDPOINT", range_server.url)
        monkeypatch.setattr(sys.modules["datasets"].config, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_ENDPOINT", range_server.url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "0")
    HfFileSystem.clear_instance_cache()
    yield range_server
    HfFileSystem.clear_instance_cache()
