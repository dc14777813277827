"""What retrieve and rerank do once their run is written: score it (unless asked not to) and write the stats."""

import json

from mmrhub.retrieve.provenance import caption
from mmrhub.scoring.output import sample_caption
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.score import score_runs
from mmrhub.scoring.tables import table
from mmrhub.writing import write_text


def score_and_record(options, data, truth, output, settings, context, dtype, phases, **stats) -> None:
    """Print the run's table (its pools checked against ``options.candidates``), under a caption naming the model
    and preset, and write ``--stats-json``: the device, dtype, model, preset and phases, plus ``stats``."""
    benchmark = data.benchmark
    if options.output.score:
        request = ScoringRequest(
            benchmark,
            data.data_dir,
            runs=(str(output),),
            rerank=options.candidates,
            measure_options={"k": benchmark.measures.DEFAULT_K},
        )
        rows = score_runs(request, truth)
        print(caption(options.model, settings))
        print(table([(row.name, row.result) for row in rows]) + sample_caption(request, truth))
    if options.output.stats_json:
        record = {
            "device": str(context.device),
            "world_size": context.world_size,
            "dtype": str(dtype),
            "model": options.model,
            "preset": settings.name,
            **stats,
            "phases": phases.stats,
        }
        write_text(options.output.stats_json, json.dumps(record, indent=1))
