"""The metric Space's table over generated cells (seeded and bounded): every table ends in scores or in one line
naming the row and column at fault, never a traceback; a JSON cell holding anything but strings is never scored."""

import json

import pytest
from _space_helpers import space_app
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
COLUMNS = {"mipr": ["predictions", "references", "grades", "categories"], "m2kr": ["predictions", "references"]}
IDS = st.sampled_from(["a", "b", "c", "L1", "N1", "x-1", "", " a ", "[", ",", "None"])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | IDS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(IDS, inner, max_size=2),
    max_leaves=6,
)
CELLS = st.one_of(
    st.none(),
    st.lists(IDS, max_size=4).map(json.dumps),  # a JSON list of strings
    st.lists(JSON, min_size=1, max_size=3).map(json.dumps),  # a JSON list of anything
    st.lists(IDS, max_size=4).map(", ".join),  # comma-separated
    st.text(alphabet='[]",ab \\n{}nul', max_size=8),  # broken JSON and stray brackets
    st.integers(0, 3).map(lambda depth: "[" * 10**depth + "]" * 10**depth),  # deep, possibly too deep
    st.integers(),  # a number where the page sends text (the API)
)


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    pytest.importorskip("gradio")
    root = tmp_path_factory.mktemp("spaces")
    return {name: space_app(name, root) for name in COLUMNS}


def first_non_string(table: list, columns: list):
    """(row, column) of the first JSON cell holding a value other than a string, row-major; None if none."""
    for number, row in enumerate(table, 1):
        if all(cell is None or (isinstance(cell, str) and not cell.strip()) for cell in row):
            continue
        for column, cell in zip(columns, row):
            if cell is not None and not isinstance(cell, str):
                return None  # a number where text belongs: another refusal, first
            try:
                values = json.loads(cell.strip()) if isinstance(cell, str) and cell.strip().startswith("[") else []
            except (ValueError, RecursionError):
                return None  # a malformed cell comes first or at all: another refusal
            if not all(isinstance(value, str) for value in values):
                return number, column
    return None


@SETTINGS
@given(data=st.data(), name=st.sampled_from(sorted(COLUMNS)))
def test_generated_tables_give_scores_or_one_line_naming_the_cell(apps, data, name):
    columns = COLUMNS[name]
    table = data.draw(st.lists(st.lists(CELLS, min_size=len(columns), max_size=len(columns)), min_size=1, max_size=3))
    app = apps[name]
    options = [reading.default for reading in app.READINGS.values()] if name == "mipr" else [["recall", "hit"]]
    try:
        result = app.compute(table, "1,3", *options)
    except Exception as err:
        assert type(err).__name__ == "Error", repr(err)  # gradio's error: one line on the page
        said = str(err.message)
        assert "\n" not in said and said, said
        bad = first_non_string(table, columns)
        if bad is not None:
            assert said.startswith(f"queries: row {bad[0]}, column {bad[1]}, position "), (said, bad)
        return
    assert isinstance(result, dict) and result["num_queries"] >= 0
    assert first_non_string(table, columns) is None, table  # nothing stringified and scored
