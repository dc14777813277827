"""What a run tells as it goes and when it is done: wall time and item rate of each phase, printed on the main
process; then its table (unless asked not to) and ``--stats-json``."""

import json
import sys
import time

import torch

from mmrhub.retrieve.options import RerankOptions
from mmrhub.retrieve.options import RetrieveOptions
from mmrhub.retrieve.presets import Preset
from mmrhub.scoring.judgments import Truth
from mmrhub.scoring.output.captions import model_caption
from mmrhub.scoring.output.captions import table_captions
from mmrhub.scoring.output.payloads import stats_payload
from mmrhub.scoring.output.tables import scores_table
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.score import score_runs
from mmrhub.writing import write_text


class Phases:
    """Wall time and item rate per phase, printed as one line each on the main process."""

    def __init__(self, context):
        self.context = context
        self.stats = {}

    def say(self, message: str):
        """Print on the main process only."""
        if self.context.is_main:
            print(message, flush=True)

    def warn(self, message: str):
        """Print to stderr on the main process only."""
        if self.context.is_main:
            print(message, file=sys.stderr, flush=True)

    def done(self, name: str, items: int, started: float, note: str = "", unit: str = "item"):
        """Record and print the phase ``name`` begun at ``started`` (``time.perf_counter()``)."""
        if self.context.device.type == "cuda":
            torch.cuda.synchronize(self.context.device)
        seconds = time.perf_counter() - started
        # Epoch end time: lets a GPU monitor's samples be matched to the phase (bench/gpu_check.sh).
        self.stats[name] = {"items": items, "seconds": round(seconds, 4), "end": round(time.time(), 3)}
        if not items:
            self.say(f"[{name}] {seconds:.2f} s{note}")
            return
        rate = items / seconds if seconds > 0 else float("inf")
        self.stats[name]["items_per_s"] = round(rate, 2)
        self.say(f"[{name}] {items:,} {unit}s in {seconds:.2f} s: {rate:,.1f} {unit}s/s{note}")


def score_and_record(
    options: RetrieveOptions | RerankOptions, truth: Truth, output, settings: Preset, context, dtype, phases, **stats
) -> None:
    """Print the run's table (its pools checked against ``options.candidates``), under a caption naming the model
    and preset, and write ``--stats-json``: the device, dtype, model, preset and phases, plus ``stats``."""
    benchmark = options.data.benchmark
    if options.output.score and truth is None:
        phases.warn(
            f"Not scored: the judgment tables are read from {options.data.folder}, and scoring reads a local folder: "
            f"mmrhub evaluate {benchmark.name} {output} --data-dir <a local copy of the tables>."
        )
    elif options.output.score:
        request = ScoringRequest(
            benchmark,
            options.data.data_dir,
            runs=(str(output),),
            rerank=options.candidates,
            measure_options={"k": benchmark.measures.DEFAULT_K},
        )
        rows = score_runs(request, truth)
        print(model_caption(options.model, settings))
        print(scores_table(rows) + table_captions(request, truth, rows))
    if options.output.stats_json:
        if context.device.type == "cuda":  # the peak a GPU check records beside its rates
            stats["cuda_max_memory_allocated"] = torch.cuda.max_memory_allocated(context.device)
        record = stats_payload(context, dtype, options.model, settings.name, phases.stats, **stats)
        write_text(options.output.stats_json, json.dumps(record, indent=1))
