"""The randomisation test as one product for all measures and pairs, with one sign matrix a command: every p-value
equal to the code before (one matrix-vector product per measure, the signs drawn again for every pair)."""

import numpy as np
import pytest

from mmrhub.scoring.compare import significance
from mmrhub.scoring.compare import signs
from mmrhub.scoring.compare.comparison import compare_runs
from mmrhub.scoring.compare.significance import pairs_tests
from mmrhub.scoring.compare.significance import randomisation_ps
from mmrhub.scoring.score import Scored


def before_ps(diffs, permutations=10000, seed=0, chunk=1000):
    """The p-values of the columns of ``diffs`` before this change: one matrix-vector product per measure."""
    columns = np.asarray(diffs, dtype=float).T.copy()
    count = columns.shape[1]
    tested = columns.any(axis=1)
    if not tested.any():
        return [1.0] * len(columns)
    observed = [abs(column.mean()) - 1e-12 for column in columns]
    rng = np.random.default_rng(seed)
    hits = [0] * len(columns)
    for start in range(0, permutations, chunk):
        size = min(chunk, permutations - start)
        signs = (rng.integers(0, 2, size=(size, count), dtype=np.int8) * 2 - 1).astype(float)
        for index in np.flatnonzero(tested):
            hits[index] += int((np.abs(signs @ columns[index]) / count >= observed[index]).sum())
    return [(h + 1) / (permutations + 1) if t else 1.0 for h, t in zip(hits, tested)]


def before_pair_tests(a, b, measures, permutations, seed):
    """One pair's tests before this change: measures grouped by the queries both runs define, signs drawn per pair."""
    columns = {}
    for name in measures:
        x = np.array([np.nan if v is None else v for v in a[name]], dtype=float)
        y = np.array([np.nan if v is None else v for v in b[name]], dtype=float)
        columns[name] = (x, y, ~(np.isnan(x) | np.isnan(y)))
    by_queries = {}
    for name, (_, _, defined) in columns.items():
        by_queries.setdefault(defined.tobytes(), []).append(name)
    tests = {}
    for names in by_queries.values():
        defined = columns[names[0]][2]
        if not defined.any():
            tests.update((name, (None, None, None, None, 0)) for name in names)
            continue
        diffs = np.column_stack([columns[name][1][defined] - columns[name][0][defined] for name in names])
        for name, p in zip(names, before_ps(diffs, permutations, seed)):
            mean_a, mean_b = (float(column[defined].mean()) for column in columns[name][:2])
            tests[name] = (mean_a, mean_b, mean_b - mean_a, p, int(defined.sum()))
    return {name: tests[name] for name in measures}


MEASURES = ["ndcg", "recall", "hit1", "hit10", "coverage", "same"]


def random_runs(count: int, queries: int, seed: int) -> list:
    """Per-query columns as the measures give them: graded gains (many ties), 0/1 hits, a measure defined on some
    queries only (None elsewhere), and one on which every run scores alike."""
    rng = np.random.default_rng(seed)
    undefined = rng.random(queries) < 0.3
    runs = []
    for _ in range(count):
        columns = {
            "ndcg": (rng.integers(0, 9, queries) / 8).tolist(),
            "recall": rng.random(queries).round(3).tolist(),
            "hit1": rng.integers(0, 2, queries).astype(float).tolist(),
            "hit10": (rng.random(queries) < 0.8).astype(float).tolist(),
            "coverage": [None if u else float(v) for u, v in zip(undefined, rng.random(queries))],
            "same": [0.5] * queries,
        }
        columns["recall"][rng.integers(queries)] = None  # one query this run leaves undefined
        runs.append(columns)
    return runs


@pytest.mark.parametrize(("queries", "permutations", "seed"), [(40, 3000, 1), (500, 2500, 7), (3522, 1200, 0)])
def test_p_values_equal_the_code_before_on_random_data(queries, permutations, seed):
    runs = random_runs(4, queries, seed)
    pairs = [(runs[i], runs[j]) for i in range(4) for j in range(i + 1, 4)]
    found = pairs_tests(pairs, MEASURES, permutations, seed)
    for (a, b), tests in zip(pairs, found):
        assert tests == before_pair_tests(a, b, MEASURES, permutations, seed)  # means, p and counts, exactly
        assert pairs_tests([(a, b)], MEASURES, permutations, seed) == [tests]
    assert all(tests["same"][3] == 1.0 for tests in found)
    assert len({tests[name][3] for tests in found for name in MEASURES}) > 10


def test_one_product_for_all_columns_equals_one_per_column():
    rng = np.random.default_rng(4)
    diffs = np.column_stack([rng.normal(0.05, 1, 700), rng.integers(-1, 2, 700), np.zeros(700), rng.random(700)])
    assert randomisation_ps(list(diffs.T), 4000, 11) == before_ps(diffs, 4000, 11)


def test_the_sign_matrix_is_drawn_once_a_command(monkeypatch):
    runs = random_runs(5, 60, 3)
    drawn = []
    real = np.random.default_rng
    signs._raw_words_match_numpy()  # its check against numpy's own draws, made once a process, is no test's draw

    def counting(seed):
        drawn.append(seed)
        return real(seed)

    monkeypatch.setattr(significance.np.random, "default_rng", counting)
    rows = [Scored(f"run{i}", None, {"per_query": {"query_id": list(range(60)), **run}}) for i, run in enumerate(runs)]
    comparison = compare_runs(rows, 500, 5)
    assert len(comparison.pairs) == 10
    # one draw for each number of queries the tests see: all 60, the coverage queries, and each recall gap
    lengths = {
        int(sum(x is not None and y is not None for x, y in zip(a[m], b[m])))
        for i, a in enumerate(runs)
        for b in runs[i + 1 :]
        for m in MEASURES
    }
    assert len(drawn) == len(lengths) < 10 * len(MEASURES)
    assert set(drawn) == {5}


def numpy_signs(seed, count, rows_per_call):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 2, size=(rows, count), dtype=np.int8) * 2.0 - 1.0 for rows in rows_per_call]


@pytest.mark.parametrize(("count", "rows_per_call"), [(3522, [1000, 1000, 7]), (5, [3, 1, 3, 2]), (1, [1, 3, 2, 9])])
def test_signs_from_raw_words_are_numpys_draws(count, rows_per_call):
    # odd numbers of 32-bit words leave half a 64-bit word to the next call; a call's last word is used in part
    assert signs._raw_words_match_numpy()  # the fast path, on this machine
    draws = signs.SignDraws(9, count, max(rows_per_call))
    assert draws.raw is not None
    for rows, expected in zip(rows_per_call, numpy_signs(9, count, rows_per_call)):
        drawn = draws(rows)
        assert drawn.dtype == np.float64 and np.array_equal(drawn, expected)


def test_numpy_draws_the_signs_where_raw_words_do_not_match(monkeypatch):
    rng = np.random.default_rng(2)
    columns = [rng.normal(0.02, 1, 1001), rng.integers(-1, 2, 1001).astype(float), rng.random(333) - 0.4]
    fast = randomisation_ps(columns, 2500, 8)
    real = signs._RawBits.__call__
    monkeypatch.setattr(signs._RawBits, "__call__", lambda self, *args: 1 - real(self, *args))  # another numpy
    signs._raw_words_match_numpy.cache_clear()
    try:
        assert not signs._raw_words_match_numpy()
        assert signs.SignDraws(8, 1001, 1000).raw is None
        assert randomisation_ps(columns, 2500, 8) == fast == [before_ps(c[:, None], 2500, 8)[0] for c in columns]
    finally:
        signs._raw_words_match_numpy.cache_clear()
