"""Settings every test runs under, and the fixtures several test folders share."""

import os
import sys
import tempfile

import pytest

# The shared helpers (tests/helpers/_*.py) are imported by name from every test folder.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "helpers"))
from _paths import ROOT  # noqa: E402

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


# How remote archives are read (mmr_remote.configure, m2kr.load's keywords) is carried by the environment to every
# process a test starts; each test starts without these settings, and what it set is dropped after it.
REMOTE_SETTINGS = ("MMRHUB_MAX_REQUESTS", "MMRHUB_READ_TIMEOUT", "MMRHUB_CHECK_ETAGS")


@pytest.fixture(autouse=True)
def remote_settings_of_the_test_only(monkeypatch):
    for variable in REMOTE_SETTINGS:
        monkeypatch.setenv(variable, "")  # recorded, so the variable is removed again after the test
        monkeypatch.delenv(variable)


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """``built(builder, name, *args, **kwargs)``: a tiny model built once per test run, whichever test
    or xdist worker asks first (``tests/helpers/_built_once.py``)."""
    from _built_once import built_once
    from _built_once import shared_root

    root = shared_root(tmp_path_factory)

    def get(builder, name, *args, **kwargs):
        return built_once(root, builder, name, *args, **kwargs)

    return get


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
    """A loopback HTTP server (``tests/helpers/_range_server.py``) over a fresh folder ``server.root``,
    counting requests."""
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
    import mmr_remote
    from m2kr_archive import SplitZipFileSystem  # its instances hold Hub files of an earlier test's server

    monkeypatch.setattr(mmr_remote, "_LOCATIONS", {})  # where this process was sent for each Hub file
    monkeypatch.setattr(mmr_remote, "_HUB_FILES", {})
    HfFileSystem.clear_instance_cache()
    SplitZipFileSystem.clear_instance_cache()
    yield range_server
    HfFileSystem.clear_instance_cache()
    SplitZipFileSystem.clear_instance_cache()


@pytest.fixture
def writable_hub(monkeypatch):
    """A writable Hub (``tests/helpers/_hub_server.py``: repos, commits, blobs, LFS, pull requests) that
    huggingface_hub's own client talks to, online, uploading LFS files without Xet; ``HF_TOKEN`` set.

    Make repos with ``writable_hub.create_repo("owner/name")`` (or let ``HfApi.create_repo`` make them).
    """
    from _hub_server import HubServer
    from huggingface_hub import constants

    with HubServer() as server:
        monkeypatch.setattr(constants, "ENDPOINT", server.url)
        monkeypatch.setattr(
            constants, "HUGGINGFACE_CO_URL_TEMPLATE", server.url + "/{repo_id}/resolve/{revision}/{filename}"
        )
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_HUB_OFFLINE", "0")
        monkeypatch.setenv("HF_TOKEN", "hf_test_token")
        yield server
