"""Wall time and item rate of each phase of a run, printed on the main process and kept for --stats-json."""

import time

import torch


class Phases:
    """Wall time and item rate per phase, printed as one line each on the main process."""

    def __init__(self, context):
        self.context = context
        self.stats = {}

    def say(self, message: str):
        """Print on the main process only."""
        if self.context.is_main:
            print(message, flush=True)

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
