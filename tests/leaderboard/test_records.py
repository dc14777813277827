"""A run made by ``mmrhub retrieve`` (a tiny random Chinese-CLIP, CPU, a copy of the MIPR sample) put on a board: its
row says what its record says (model, files, preset, dtype, device, versions, the command, random weights) and
that ``mmrhub rerun`` remakes it; the page shows it."""

import hashlib
import json
import shlex
import shutil

import pytest
from _mipr_helpers import read_jsonl
from _paths import MIPR_SAMPLE

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.cli import main
from mmrhub.leaderboard import html
from mmrhub.leaderboard.live import LiveBoard

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytestmark = pytest.mark.slow


def test_a_retrieve_run_s_record_is_on_its_row(tmp_path):
    from tiny_models import build_tiny_chinese_clip

    data = shutil.copytree(MIPR_SAMPLE, tmp_path / "data")
    model = build_tiny_chinese_clip(
        tmp_path / "chinese-clip-tiny", [row["title"] for row in read_jsonl(data / "mipr_corpus.jsonl")]
    )
    run = tmp_path / "runs" / "tiny.json"
    argv = ["retrieve", "mipr", "--data-dir", str(data), "--backend", "transformers", "--model", str(model)]
    assert main([*argv, "--num-workers", "0", "--cache-dir", str(tmp_path / "cache"), "-o", str(run), "--no-eval"]) == 0
    board = tmp_path / "board"
    assert main(["leaderboard", "mipr", str(run), "-o", str(board), "--data-dir", str(data)]) == 0
    entry = LiveBoard(BENCHMARKS["mipr"], board).standings.entries[0]
    meta_path = run.with_name("tiny.json.meta.json")
    meta = json.loads(meta_path.read_text())
    record = entry.record
    assert {key: record[key] for key in ("command", "model", "files_sha256", "preset", "dtype", "device")} == {
        "command": "retrieve",
        "model": "chinese-clip-tiny",  # the folder's name, never the absolute path of the user's disk
        "files_sha256": meta["model"]["model"]["files"],
        "preset": "chinese-clip",
        "dtype": "torch.float32",
        "device": "cpu",
    }
    assert record["versions"] == {name: version for name, version in meta["versions"].items()}
    assert record["command_line"] == shlex.join(meta["command_line"])
    assert record["random_weights"] is True and record["rerun"] is True
    assert record["record_sha256"] == hashlib.sha256(meta_path.read_bytes()).hexdigest()
    shown = html.run_summary(entry)
    assert "remade by <code>mmrhub rerun</code>" in shown and "random: the model's scores mean nothing" in shown
    assert str(tmp_path) not in json.dumps({key: value for key, value in record.items() if key != "command_line"})
