"""A table to reproduce, the published one or a ``--target`` file, and the numbers a scored table differs in."""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional
from typing import Union

from mmrhub.declaration import Benchmark


@dataclass(frozen=True)
class Target:
    """Rows of {measure: value x100} in the scored rows' order, and the counts ({result key: value}) behind them."""

    rows: tuple
    counts: dict
    name: str  # what the output calls it: "the MIPR paper's table", "the target table"
    published: bool  # the benchmark's published table, not a --target file

    @property
    def size(self) -> int:
        """How many numbers there are to reproduce."""
        return sum(len(row) for row in self.rows) + len(self.counts)


@dataclass(frozen=True)
class Difference:
    """A number not reproduced: its row (None for a count of the whole table), its measure or count, both values."""

    row: Optional[str]
    measure: str
    ours: Union[float, int, None]  # x100 (None where undefined), or a count
    theirs: Union[float, int, None]


def published_target(benchmark: Benchmark) -> Target:
    """The benchmark's published table (the MIPR paper's) and the counts it states."""
    name = f"the {benchmark.title} paper's table"
    return Target(tuple(benchmark.published_table), dict(benchmark.published_counts), name, True)


def read_target(path, benchmark: Benchmark) -> Target:
    """A ``--target`` file: a list of rows, or {"rows": [...]} with some of the published counts beside it."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"--target {path}: not JSON ({err})") from err
    counts = dict(data) if isinstance(data, dict) else {"rows": data}
    rows = counts.pop("rows", None)
    if not isinstance(rows, list) or not rows or not all(isinstance(row, dict) and row for row in rows):
        raise ValueError(
            f'--target {path}: expected a list of rows, each {{measure: value x100}}, or {{"rows": [...]}}'
        )
    known = dict(benchmark.published_counts)
    unknown = sorted(set(counts) - set(known))
    if unknown:
        raise ValueError(f'--target {path}: unknown key {unknown[0]!r}; expected "rows" or one of {sorted(known)}')
    return Target(tuple(rows), counts, "the target table", False)


def as_published(value):
    """A score as the published tables give it: x100, two decimals (None stays None)."""
    return None if value is None else round(100 * value, 2)


def differences(target: Target, rows: list) -> list:
    """Each number of ``target`` that the scored ``rows`` (``mmrhub.scoring.score.Scored``) do not give."""
    if len(rows) != len(target.rows):
        raise ValueError(f"{target.name} has {len(target.rows)} rows; the runs scored give {len(rows)}")
    found = []
    for row, wanted in zip(rows, target.rows):
        for measure, theirs in wanted.items():
            if measure not in row.result:
                raise ValueError(f"{target.name}: unknown measure {measure!r}")
            ours = as_published(row.result[measure])
            if ours != theirs:
                found.append(Difference(row.name, measure, ours, theirs))
    for key, theirs in target.counts.items():
        if rows[0].result[key] != theirs:  # a count of the judgments, the same in every row
            found.append(Difference(None, key, rows[0].result[key], theirs))
    return found


# What the PreFLMR authors' example does where a run's record may differ (LinWeizheDragon/FLMR@be4b748).
AUTHORS_MODEL_DTYPE = "torch.float32"  # examples/example_use_preflmr.py:245-249: from_pretrained, no dtype given


def baseline_differences(baseline, record: dict) -> list:
    """What the run (its ``RUN.json.meta.json`` as a dict) does otherwise than ``baseline``'s authors, one line
    each: the baseline's own lines, then the run's model dtype, passage dtype and image processor."""
    lines = list(baseline.differences)
    dtype = (record.get("model") or {}).get("dtype")
    if dtype and dtype != AUTHORS_MODEL_DTYPE:
        lines.append(
            f"Model in {dtype} (--dtype); the authors' example loads float32 (example_use_preflmr.py:245-249): "
            "--dtype float32 runs theirs."
        )
    search = record.get("search") or {}
    if search.get("passage_dtype"):
        lines.append(
            f"Passage vectors in {search['passage_dtype']}: half on a GPU as the authors cast them "
            "(modeling_flmr.py:1338-1339), float32 on CPU."
        )
    processor = (record.get("settings") or {}).get("image_processor")
    lines.append(
        f"Image processor: {processor} (given); the authors' example loads the query image processor it is "
        "named (--image_processor_name, example_use_preflmr.py:250)."
        if processor
        else "Image processor: the config's vision_model_version (the vision tower's own); the authors' example "
        "loads the query image processor it is named (--image_processor_name, example_use_preflmr.py:250)."
    )
    return lines
