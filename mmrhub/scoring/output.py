"""What every scoring command says besides its table: the sample caption, the notes, the ``--json`` payload."""

import sys

from mmrhub.scoring.request import ScoringRequest


def sample_caption(request: ScoringRequest, truth) -> str:
    """Said under every table scored on the bundled sample, so its numbers are never taken for the benchmark's."""
    if not request.sample:
        return ""
    return (
        f"\n\n_Bundled {request.benchmark.title} sample ({len(truth.query_ids)} queries), not the benchmark: its "
        "numbers mean nothing. Pass --data-dir for the real data._"
    )


def print_notes(truth, rows) -> None:
    """The judgments' and the runs' notes, one ``note:`` line each on stderr."""
    notes = truth.notes + [note for row in rows if row.run is not None for note in row.run.notes]
    for note in notes:
        print(f"note: {note}", file=sys.stderr)


def json_payload(request: ScoringRequest, truth, rows) -> dict:
    """Every row's aggregate and per-query values, with the data folder, the readings and the notes."""
    key = request.benchmark.breakdown.key
    runs = []
    for row in rows:
        result = dict(row.result)
        per_query = result.pop("per_query")
        groups = {key: result.pop(key)} if request.breakdown else {}
        query_ids = per_query.pop("query_id")
        values = {qid: {name: column[i] for name, column in per_query.items()} for i, qid in enumerate(query_ids)}
        run = row.run.path if row.run else None
        runs.append({"name": row.name, "run": run, "aggregate": result, **groups, "per_query": values})
    return {
        "benchmark": request.benchmark.name,
        "data_dir": str(request.folder),
        "sample": request.sample,
        "options": request.options,
        "notes": truth.notes,
        "runs": runs,
    }
