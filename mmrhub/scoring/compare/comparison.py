"""Runs compared pair by pair: which pairs, the paired test of every measure, the correction across the pairs."""

from dataclasses import dataclass
from typing import Optional

from mmrhub.scoring.compare.corrections import adjust
from mmrhub.scoring.compare.significance import pairs_tests
from mmrhub.scoring.score import measure_names

FAMILY = "per measure: the tests of one measure across all the pairs compared"


@dataclass(frozen=True)
class Test:
    """One measure of one pair: the means over the queries both runs define, B - A, the raw and corrected p
    (None where untested) and how many queries the test saw (None without a per-query form)."""

    measure: str
    a: Optional[float]
    b: Optional[float]
    difference: Optional[float]
    p: Optional[float]
    corrected: Optional[float]
    queries: Optional[int]


@dataclass(frozen=True)
class Pair:
    """Run A against run B (differences are B - A): a Test per measure, in the scores table's order."""

    a: str
    b: str
    tests: tuple


@dataclass(frozen=True)
class Comparison:
    """Every pair compared, and how: the test's draws, the correction, the measures left untested."""

    pairs: tuple
    permutations: int
    seed: int
    correction: str
    queries: int  # judged queries
    untested: tuple  # measures of the table without a per-query form


def index_pairs(count: int, baseline: bool) -> list:
    """(A, B) row indices: the first row against each other one with a baseline, else every pair in order."""
    if baseline:
        return [(0, index) for index in range(1, count)]
    return [(first, second) for first in range(count) for second in range(first + 1, count)]


def compare_runs(
    rows: list,
    permutations: int,
    seed: int,
    correction: str = "holm",
    baseline: bool = False,
    earlier: Optional[Comparison] = None,
):
    """The Comparison of scored rows (pairs as ``index_pairs``); each measure's p-values corrected across the pairs.

    ``earlier``: a comparison of some of these rows, with the same permutations and seed, whose pairs (by their
    rows' names, which must name the same per-query values) are not tested again: a pair's raw p depends only on
    its two columns, the seed and the number of queries (``randomisation_ps``), so only the correction is new."""
    if len(rows) < 2:
        raise ValueError(f"a comparison needs at least two runs, got {len(rows)}")
    first = rows[0].result
    tested = [name for name in first["per_query"] if name != "query_id"]
    order = list(dict.fromkeys(measure_names(first) + tested))  # the scores table's order
    pairs = [(rows[index_a], rows[index_b]) for index_a, index_b in index_pairs(len(rows), baseline)]
    known = tested_before(earlier, permutations, seed)
    new = [(a, b) for a, b in pairs if (a.name, b.name) not in known]
    # all new pairs at once: one sign matrix for the command, not one per pair
    fresh = iter(
        pairs_tests([(a.result["per_query"], b.result["per_query"]) for a, b in new], tested, permutations, seed)
    )
    found = [known[(a.name, b.name)] if (a.name, b.name) in known else next(fresh) for a, b in pairs]
    corrected = {name: adjust([tests[name][3] for tests in found], correction) for name in tested}
    compared = []
    for number, ((a, b), tests) in enumerate(zip(pairs, found)):
        row = []
        for name in order:
            if name in tests:
                mean_a, mean_b, difference, p, queries = tests[name]
                row.append(Test(name, mean_a, mean_b, difference, p, corrected[name][number], queries))
            else:  # no per-query form: the aggregate means, untested
                x, y = a.result[name], b.result[name]
                row.append(Test(name, x, y, None if x is None or y is None else y - x, None, None, None))
        compared.append(Pair(a.name, b.name, tuple(row)))
    untested = tuple(name for name in order if name not in tested)
    return Comparison(tuple(compared), permutations, seed, correction, len(first["per_query"]["query_id"]), untested)


def tested_before(earlier: Optional[Comparison], permutations: int, seed: int) -> dict:
    """{(name A, name B): {measure: (mean A, mean B, B - A, raw p, queries)}} of ``earlier``'s tested measures, as
    ``pairs_tests`` gives them; an earlier comparison drawn otherwise is refused (its p-values would differ)."""
    if earlier is None:
        return {}
    if (earlier.permutations, earlier.seed) != (permutations, seed):
        raise ValueError(
            f"the earlier comparison drew {earlier.permutations} sign flips with seed {earlier.seed}, not "
            f"{permutations} with seed {seed}: its p-values are not this comparison's"
        )
    return {
        (pair.a, pair.b): {
            test.measure: (test.a, test.b, test.difference, test.p, test.queries)
            for test in pair.tests
            if test.queries is not None
        }
        for pair in earlier.pairs
    }
