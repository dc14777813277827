"""A run's record says whether its model had random weights (the tiny checkpoints mark their folders), and every
table with a row of that run says so under it; a record of another run file says nothing of this one."""

import json
import shutil

from _paths import MIPR_EMBEDDING
from _paths import MIPR_RERANKED

from mmrhub.cli import main
from mmrhub.records.meta import made_with_random_weights
from mmrhub.records.meta import meta_path
from mmrhub.records.random_weights import RANDOM_WEIGHTS
from mmrhub.records.random_weights import has_random_weights
from mmrhub.records.random_weights import mark_random_weights

CAPTION = (
    "of a checkpoint with random weights (its folder holds random-weights.json, as the tiny models of "
    "scripts/make_tiny_models.py do): the numbers test the pipeline, never a model._"
)


def recorded_run(folder, name: str, random_weights, run_named=None):
    """A copy of the sample's embedding run with a record beside it."""
    run = shutil.copy(MIPR_EMBEDDING, folder / f"{name}.json")
    meta = {"command": "retrieve", "run": run_named or f"{name}.json", "random_weights": random_weights}
    meta_path(run).write_text(json.dumps(meta))
    return run


def test_a_marked_folder_has_random_weights_and_nothing_else_has(tmp_path):
    assert not has_random_weights(str(tmp_path)) and not has_random_weights("Qwen/Qwen3-VL-Embedding-2B")
    assert mark_random_weights(tmp_path) == tmp_path and has_random_weights(str(tmp_path))
    assert json.loads((tmp_path / RANDOM_WEIGHTS).read_text())["weights"] == "random"


def test_only_a_record_of_the_same_run_saying_so_counts(tmp_path):
    assert made_with_random_weights(recorded_run(tmp_path, "tiny", True))
    assert not made_with_random_weights(recorded_run(tmp_path, "trained", False))
    assert not made_with_random_weights(recorded_run(tmp_path, "renamed", True, run_named="other.json"))
    assert not made_with_random_weights(MIPR_EMBEDDING)  # no record
    broken = shutil.copy(MIPR_EMBEDDING, tmp_path / "broken.json")
    meta_path(broken).write_text("{")
    assert not made_with_random_weights(broken)


def test_tables_name_the_runs_of_random_weights(capsys, tmp_path):
    tiny = recorded_run(tmp_path, "tiny", True)
    assert main(["evaluate", "mipr", str(tiny), str(MIPR_RERANKED), "--oracle", str(tiny)]) == 0
    out = capsys.readouterr().out
    assert f"_tiny is a run {CAPTION}" in out.splitlines()
    other = recorded_run(tmp_path, "other", True)
    assert main(["compare", "mipr", str(tiny), str(other), "--permutations", "10"]) == 0
    assert f"_tiny, other are runs {CAPTION}" in capsys.readouterr().out.splitlines()
    assert main(["evaluate", "mipr", str(MIPR_EMBEDDING), str(recorded_run(tmp_path, "trained", False))]) == 0
    assert "random weights" not in capsys.readouterr().out
