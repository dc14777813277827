"""A copy of the bundled M2KR sample for each test that breaks one on purpose."""

import pytest
from _m2kr_helpers import copy_sample


@pytest.fixture
def data_dir(tmp_path):
    """A fresh copy of the M2KR sample in ``tmp_path``."""
    return copy_sample(tmp_path)
