"""A copy of the bundled MIPR sample for each test that breaks one on purpose."""

import pytest
from _mipr_helpers import copy_sample


@pytest.fixture
def data_dir(tmp_path):
    """A fresh copy of the MIPR sample at ``tmp_path/mipr``."""
    return copy_sample(tmp_path / "mipr")
