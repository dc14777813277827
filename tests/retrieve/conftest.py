"""The retrieve tests' shared fixtures."""

import pytest
from _retrieve_helpers import mipr_with_self_queries


@pytest.fixture(scope="module")
def mipr_dir(tmp_path_factory):
    """The MIPR sample plus two queries: a copy of the middle corpus item (its image and title), and the first
    query's image with an empty question."""
    return mipr_with_self_queries(tmp_path_factory.mktemp("mipr") / "data")
