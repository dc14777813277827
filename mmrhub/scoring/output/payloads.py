"""What ``--json`` writes: every value of a scoring command's rows (``scores_payload``) or of ``compare``'s tests
(``comparison_payload``), checked before any work and written whole; and what retrieve and rerank write to
``--stats-json`` (``stats_payload``)."""

import json
from dataclasses import astuple

from mmrhub.scoring.compare.comparison import FAMILY
from mmrhub.scoring.output.captions import TEST
from mmrhub.scoring.output.captions import non_default_readings
from mmrhub.scoring.output.captions import queries_averaged
from mmrhub.scoring.request import ScoringRequest
from mmrhub.writing import check_target
from mmrhub.writing import write_text


def scores_payload(request: ScoringRequest, truth, rows) -> dict:
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


def comparison_payload(comparison, benchmark_name: str, runs: list, baseline) -> dict:
    """Every pair, measure, raw and corrected p, with the test, the correction and its family."""
    keys = ("measure", "a", "b", "difference", "p", "p_corrected", "queries")
    return {
        "benchmark": benchmark_name,
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


def check_json_target(path, inputs=()) -> None:
    """The ``--json`` target, checked before any work (None: no ``--json``); see ``mmrhub.writing.check_target``."""
    if path is not None:
        check_target(path, "--json", inputs, example="scores.json")


def write_json(path, payload: dict) -> None:
    """The ``--json`` file: every value, indented, written atomically."""
    write_text(path, json.dumps(payload, ensure_ascii=False, indent=1) + "\n")


def stats_payload(context, dtype, model: str, preset: str, phases: dict, **stats) -> dict:
    """``--stats-json`` of retrieve and rerank: the device, world size, dtype, model, preset, ``stats`` and each
    phase's time and rate."""
    return {
        "device": str(context.device),
        "world_size": context.world_size,
        "dtype": str(dtype),
        "model": model,
        "preset": preset,
        **stats,
        "phases": phases,
    }
