"""What ``mmrhub compare`` and the report show of a Comparison: a table per pair, the footnote, the --json payload."""

from dataclasses import astuple

from mmrhub.scoring.compare.comparison import FAMILY
from mmrhub.scoring.output.tables import cell

TEST = "paired randomisation test (sign flips of per-query differences), two-sided"


def corrected_column(comparison):
    """The corrected p's column heading, or None when there is nothing to correct (one pair, or no correction)."""
    if len(comparison.pairs) < 2 or comparison.correction == "none":
        return None
    return f"p ({comparison.correction})"


def pair_rows(comparison, pair) -> list:
    """A pair's table as rows of cells, the heading first: measure, A, B, B - A (x100), p [, corrected p]."""
    corrected = corrected_column(comparison)
    rows = [["Measure", pair.a, pair.b, "B - A", "p"] + ([corrected] if corrected else [])]
    for test in pair.tests:
        cells = [test.measure, cell(test.a), cell(test.b), _signed(test.difference), _p(test.p)]
        rows.append(cells + ([_p(test.corrected)] if corrected else []))
    return rows


def markdown(rows: list) -> str:
    """Rows of cells (the heading first) as a Markdown table, numbers right-aligned."""
    lines = ["| " + " | ".join(rows[0]) + " |", "|---|" + "---:|" * (len(rows[0]) - 1)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows[1:]])


def footnote(comparison) -> str:
    """What the p-values are, the correction and its family, and the measures tested on fewer queries or not at all;
    only what applies to the measures shown."""
    count = len(comparison.pairs)
    notes = [
        f"p: {TEST}, {comparison.permutations} sign flips (seed {comparison.seed}), over the queries both runs define."
    ]
    if count == 1:
        notes.append("One pair: nothing to correct.")
    elif comparison.correction == "none":
        notes.append(f"p is not corrected for the {count} pairs.")
    else:
        notes.append(
            f"{corrected_column(comparison)}: {comparison.correction.capitalize()}-adjusted per measure "
            f"across the {count} pairs (each measure's {count} tests corrected together)."
        )
    for measure, counts in _partial(comparison).items():
        if max(counts) == 0:
            notes.append(f"{measure} is defined on no query of both runs and is not tested.")
            continue
        shown = f"{min(counts)}" if len(counts) == 1 else f"{min(counts)}-{max(counts)}"
        notes.append(f"{measure} is tested on the {shown} of {comparison.queries} queries that define it.")
    notes += [f"{measure} has no per-query form and is not tested." for measure in comparison.untested]
    return " ".join(notes + ["Scores x100."])


def json_payload(comparison, benchmark: str, runs: list, baseline) -> dict:
    """Every pair, measure, raw and corrected p, with the test, the correction and its family."""
    keys = ("measure", "a", "b", "difference", "p", "p_corrected", "queries")
    return {
        "benchmark": benchmark,
        "runs": runs,
        "baseline": baseline,
        "test": TEST,
        "permutations": comparison.permutations,
        "seed": comparison.seed,
        "correction": comparison.correction,
        "family": FAMILY,
        "family_size": len(comparison.pairs),
        "queries": comparison.queries,
        "not_tested": list(comparison.untested),
        "pairs": [
            {"a": pair.a, "b": pair.b, "measures": [dict(zip(keys, astuple(test))) for test in pair.tests]}
            for pair in comparison.pairs
        ],
    }


def _partial(comparison) -> dict:
    """{measure: the query counts its tests saw} for the measures some pair tested on fewer than all queries."""
    counts = {}
    for pair in comparison.pairs:
        for test in pair.tests:
            if test.queries is not None:
                counts.setdefault(test.measure, set()).add(test.queries)
    return {name: found for name, found in counts.items() if min(found) < comparison.queries}


def _signed(value) -> str:
    return "-" if value is None else f"{100 * value:+.2f}"


def _p(value) -> str:
    return "-" if value is None else f"{value:.4f}"
