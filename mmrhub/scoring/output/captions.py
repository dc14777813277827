"""What a command says beside its table, and where it goes: the unusual columns' definitions, the readings and
smaller means, the runs of random-weight checkpoints, the sample caption, ``compare``'s footnote and summary, the
model line above a retrieve, rerank or baseline table, the notes on stderr."""

import re
import sys

from mmrhub.declaration import Benchmark
from mmrhub.records.meta import made_with_random_weights
from mmrhub.records.random_weights import RANDOM_WEIGHTS
from mmrhub.scoring.output.tables import SUMMARY_ALPHA
from mmrhub.scoring.output.tables import corrected_column
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.score import measure_names
from mmrhub.terminal import printable

TEST = "paired randomisation test (sign flips of per-query differences), two-sided"


def table_captions(request: ScoringRequest, truth, rows) -> str:
    """Everything said under a table of scored rows: ``page_captions``, then the bundled sample."""
    return page_captions(request, rows) + sample_caption(request, truth)


def page_captions(request: ScoringRequest, rows) -> str:
    """What the report's page says under its scores (the sample it says under its title): the table's unusual
    columns, what was computed, the runs of random-weight checkpoints."""
    return columns_caption(request.benchmark, rows) + computed_caption(request, rows) + random_weights_caption(rows)


def compare_captions(request: ScoringRequest, truth, rows) -> str:
    """What ``compare`` says after its footnote: its unusual measures, the queries scored 0, the runs of
    random-weight checkpoints and the bundled sample."""
    return (
        columns_caption(request.benchmark, rows)
        + missing_caption(rows)
        + random_weights_caption(rows)
        + sample_caption(request, truth)
    )


def sample_line(request: ScoringRequest, truth) -> str:
    """Said wherever the bundled sample was scored, so its numbers are never taken for the benchmark's ('' on a
    data folder)."""
    if not request.sample:
        return ""
    return (
        f"Bundled {request.benchmark.title} sample ({len(truth.query_ids)} queries), not the benchmark: its numbers "
        "mean nothing. Pass --data-dir for the real data."
    )


def sample_caption(request: ScoringRequest, truth) -> str:
    """``sample_line`` under a table."""
    line = sample_line(request, truth)
    return f"\n\n_{line}_" if line else ""


def columns_caption(benchmark: Benchmark, rows) -> str:
    """A line defining each of the benchmark's footnoted measures (``Benchmark.footnoted``) that the table shows,
    in the words of the metric's DEFINITIONS, the open rules named by their flags."""
    shown = measure_names(rows[0].result) if rows else []
    lines = []
    for key in benchmark.footnoted:
        name = key.split(" (")[0]  # "Hit@k (variant `hit`)": the measure is Hit@k
        pattern = re.escape(name).replace("@k", r"@\d+")
        if any(re.fullmatch(pattern, column) for column in shown):
            lines.append(f"{name}: {_plain(benchmark.measures.DEFINITIONS[key], benchmark)}.")
    return "".join(f"\n\n_{line}_" for line in lines)


def _plain(definition: str, benchmark: Benchmark) -> str:
    """A DEFINITIONS cell as a sentence: no Markdown table escapes, an option of the open rules as its flag."""
    options = {option.name for option in benchmark.options}

    def flag(match):
        return f"--{match[1].replace('_', '-')}" if match[1] in options else match[0]

    return re.sub(r"`(\w+)`", flag, definition.replace("\\|", "|"))


def random_weights_caption(rows) -> str:
    """The line naming the rows whose run's record says its model had random weights
    (``mmrhub.records.random_weights``), or ''."""
    names = [row.name for row in rows if row.run is not None and made_with_random_weights(row.run.path)]
    if not names:
        return ""
    runs = f"{names[0]} is a run" if len(names) == 1 else f"{', '.join(names)} are runs"
    return (
        f"\n\n_{runs} of a checkpoint with random weights (its folder holds {RANDOM_WEIGHTS}, as the tiny models of "
        "scripts/make_tiny_models.py do): the numbers test the pipeline, never a model._"
    )


def sample_cannot_decide(table_name: str) -> str:
    """``reproduce`` on the bundled sample: why its answer is an illustration only."""
    return (
        "The bundled sample cannot decide between the interpretations: its runs are simulated, not the runs behind "
        f"{table_name}, so no interpretation can be confirmed or excluded on it. Give --data-dir with the official "
        "data."
    )


def non_default_readings(request: ScoringRequest) -> dict:
    """{option name: value} of every reading of the open rules that is not the benchmark's default."""
    chosen = request.options
    readings = {}
    for option in request.benchmark.options:
        value = chosen.get(option.name, option.default)
        if (tuple(value) if option.many else value) != (tuple(option.default) if option.many else option.default):
            readings[option.name] = list(value) if option.many else value
    return readings


def queries_averaged(row) -> dict:
    """{measure: queries its mean is over} for the measures whose mean leaves some of the row's queries out."""
    per_query = row.result["per_query"]
    total = len(per_query["query_id"])
    counts = {name: sum(value is not None for value in values) for name, values in per_query.items()}
    return {name: count for name, count in counts.items() if name != "query_id" and count != total}


def computed_caption(request: ScoringRequest, rows) -> str:
    """What was computed, when it is not what the table's header alone says: the non-default readings, and the
    measures that average fewer queries than the table's rows score."""
    lines = []
    readings = non_default_readings(request)
    if readings:
        shown = ", ".join(f"--{name.replace('_', '-')} {_flag_value(value)}" for name, value in readings.items())
        lines.append(f"Options other than the defaults: {shown}.")
    averaged = queries_averaged(rows[0]) if rows else {}
    if averaged:
        total = len(rows[0].result["per_query"]["query_id"])
        counts = ", ".join(f"{name} over {count}" for name, count in averaged.items())
        lines.append(f"Means over fewer than the {total} scored queries: {counts}.")
    return "".join(f"\n\n_{line}_" for line in lines) + missing_caption(rows)


def missing_caption(rows) -> str:
    """The line on the judged queries runs lacked and that were scored 0 (``--missing-queries zero``), or ''."""
    lacking = [f"{row.name} {row.missing}" for row in rows if getattr(row, "missing", 0)]
    if not lacking:
        return ""
    return f"\n\n_Judged queries missing from a run, scored 0 (--missing-queries zero): {', '.join(lacking)}._"


def _flag_value(value) -> str:
    return ",".join(value) if isinstance(value, list) else str(value)


def model_caption(model_id: str, settings) -> str:
    """The line above a retrieve, rerank or baseline table: the model and its preset (a ``Preset``)."""
    return f"{model_id} (preset: {settings.name})"


def pools_caption(baseline_row: str, top_k: int, folder) -> str:
    """The line under ``baseline``'s table: whose candidates the reranker and the oracle work on."""
    return f"Reranking and the Oracle operate on {baseline_row}'s top-{top_k} candidates; runs in {folder}."


def mteb_caption(title: str, same_as: dict, unranked: int, differences: str) -> str:
    """The caption of ``mmrhub mteb``'s table: which of MTEB's scores equal which of ours by definition, over which
    queries, and what differs (``differences``, the task's own words)."""
    agreed = ", ".join(f"{mteb_name} is {measure}" for mteb_name, measure in same_as.items())
    queries = (
        f"over the judged queries but the {unranked} with an empty judgment list, which MTEB leaves out and "
        f"{title} keeps (scoring 0)"
        if unranked
        else "over the same queries"
    )
    return (
        f"\n\n_The table is {title}'s, from the run; the last column is MTEB's main score. By definition "
        f"MTEB's {agreed}, {queries}. {differences}_"
    )


def footnote(comparison) -> str:
    """``compare``'s footnote: what the p-values are, the correction and its family, and the measures tested on
    fewer queries or not at all; only what applies to the measures shown."""
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


def summary_caption(comparison) -> str:
    """The line under ``compare``'s summary: what its markers mean."""
    p = corrected_column(comparison) or "p"
    return (
        f"_Each run's means x100, as mmrhub evaluate prints them; >a after a value: above run a's, {p} < "
        f"{SUMMARY_ALPHA} in the pair's table below._"
    )


def _partial(comparison) -> dict:
    """{measure: the query counts its tests saw} for the measures some pair tested on fewer than all queries."""
    counts = {}
    for pair in comparison.pairs:
        for test in pair.tests:
            if test.queries is not None:
                counts.setdefault(test.measure, set()).add(test.queries)
    return {name: found for name, found in counts.items() if min(found) < comparison.queries}


def print_table(text: str, captions: str, format: str = "markdown") -> None:
    """A table on stdout with its captions under it (Markdown), or, in CSV, LaTeX or JSON, with the captions on
    stderr as notes, so stdout stays one table a program or a paper can take as it is."""
    if format == "markdown":
        print(text + captions)
        return
    print(text)
    for caption in filter(None, captions.split("\n\n")):
        print(f"note: {caption.strip('_')}", file=sys.stderr)


def print_notes(truth, rows) -> None:
    """The judgments' and the runs' notes, one ``note:`` line each on stderr."""
    notes = truth.notes + [note for row in rows if row.run is not None for note in row.run.notes]
    for note in notes:
        print(printable(f"note: {note}"), file=sys.stderr)
