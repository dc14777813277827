"""A copy of the bundled M2KR sample for each test that breaks one on purpose; a process state as a new process
has it, for the remote-reading tests."""

import pytest
from _m2kr_helpers import copy_sample


@pytest.fixture
def data_dir(tmp_path):
    """A fresh copy of the M2KR sample in ``tmp_path``."""
    return copy_sample(tmp_path)


@pytest.fixture
def fresh_process(monkeypatch, tmp_path):
    """Each test starts as a new process would: no directory parsed yet, no Hub URL resolved, its own HF_HOME."""
    import m2kr_archive
    import mmr_remote

    monkeypatch.setattr(m2kr_archive, "_ARCHIVES", {})
    monkeypatch.setattr(m2kr_archive, "_STATES", {})
    monkeypatch.setattr(mmr_remote, "_LOCATIONS", {})
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
