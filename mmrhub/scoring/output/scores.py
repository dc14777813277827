"""What every scoring command says besides its table: the sample caption, the notes, the ``--json`` payload."""

import sys

from mmrhub.scoring.request import ScoringRequest
from mmrhub.terminal import printable


def sample_caption(request: ScoringRequest, truth) -> str:
    """Said under every table scored on the bundled sample, so its numbers are never taken for the benchmark's."""
    if not request.sample:
        return ""
    return (
        f"\n\n_Bundled {request.benchmark.title} sample ({len(truth.query_ids)} queries), not the benchmark: its "
        "numbers mean nothing. Pass --data-dir for the real data._"
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


def json_payload(request: ScoringRequest, truth, rows) -> dict:
    """Every row's aggregate and per-query values, with the data folder, the readings and the notes."""
    key = request.benchmark.breakdown.key
    runs = []
    for row in rows:
        result = dict(row.result)
        per_query = dict(result.pop("per_query"))  # a copy: the row keeps its values
        groups = {key: result.pop(key)} if request.breakdown else {}
        query_ids = per_query.pop("query_id")
        values = {qid: {name: column[i] for name, column in per_query.items()} for i, qid in enumerate(query_ids)}
        run = row.run.path if row.run else None
        averaged = queries_averaged(row)
        runs.append(
            {
                "name": row.name,
                "run": run,
                "aggregate": result,
                "queries_averaged": averaged,
                **groups,
                "per_query": values,
            }
        )
    return {
        "benchmark": request.benchmark.name,
        "data_dir": str(request.folder),
        "sample": request.sample,
        "options": request.options,
        "non_default_readings": non_default_readings(request),
        "notes": truth.notes,
        "runs": runs,
    }
