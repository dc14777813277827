"""The Qwen3-VL-Embedding path (image + text as one input) with a tiny random Qwen3-VL.

transformers builds the Qwen3-VL processor only with torchvision installed, so this skips without it.
"""

import json

import pytest

pytest.importorskip("torchvision")
pytest.importorskip("sentence_transformers")

from _retrieve_helpers import build_tiny_qwen3_vl_embedding  # noqa: E402
from test_retrieve import IMAGE_ONLY_QUERY  # noqa: E402
from test_retrieve import SELF_QUERY  # noqa: E402
from test_retrieve import mipr_dir  # noqa: E402,F401  (fixture)
from test_retrieve import retrieve  # noqa: E402
from test_retrieve import top  # noqa: E402

from mmrhub.benchmarks import MIPR  # noqa: E402
from mmrhub.scoring.score import read_valid_run  # noqa: E402


def test_fused_image_text_model(tmp_path, mipr_dir, capsys):  # noqa: F811
    model = build_tiny_qwen3_vl_embedding(tmp_path / "qwen")
    path, run, stats = retrieve(
        tmp_path,
        "mipr",
        "--data-dir",
        mipr_dir["dir"],
        "--backend",
        "sentence-transformers",
        "--model",
        model,
        "--top-k",
        10,
        "--batch-size",
        8,
        "--cache-dir",
        tmp_path / "cache",
    )
    read_valid_run(MIPR.read_truth(mipr_dir["dir"]), path)
    manifest = json.loads(next((tmp_path / "cache").glob("*/manifest.json")).read_text())
    assert manifest["encoder"]["fused"] is True and manifest["num_items"] == mipr_dir["num_corpus"]
    assert top(run, SELF_QUERY)[0]["did"] == mipr_dir["self_item"]
    assert len(top(run, IMAGE_ONLY_QUERY)) == 10
    assert stats["phases"]["embed queries"]["items"] == mipr_dir["num_queries"]
