"""``mmrhub baseline``: retrieve the top-k, rerank it and one table (embedding, reranked, oracle), on CPU with tiny
random models loaded through --embedding-model / --reranker-model PATH."""

import argparse
import json
import shutil

import pytest

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")

from tiny_models import build_tiny_chinese_clip  # noqa: E402
from tiny_models import build_tiny_llava_reranker  # noqa: E402

from mmrhub.scoring.runs.reading import read_run  # noqa: E402
from mmrhub.scoring.runs.validation import check_pool  # noqa: E402


@pytest.mark.slow  # a retrieve and a rerank of the sample
def test_baseline_writes_both_runs_and_one_table(tmp_path, capsys, monkeypatch):
    from mmrhub.cli import main
    from mmrhub.commands import baseline
    from mmrhub.scoring import score

    samples, rule = [], score.refuse_run_of_other_data
    monkeypatch.setattr(score, "refuse_run_of_other_data", lambda *args: samples.append(args[3]) or rule(*args))

    embedding = build_tiny_chinese_clip(tmp_path / "tiny-clip-embedding", ["除垢剂"])
    reranker = shutil.copytree(build_tiny_llava_reranker(tmp_path / "build"), tmp_path / "tiny-llava-reranker")
    parser = argparse.ArgumentParser()
    baseline.register(parser.add_subparsers())
    args = parser.parse_args(
        [
            "baseline",
            "mipr",
            "--embedding-backend",
            "transformers",
            "--embedding-model",
            str(embedding),
            "--embedding-preset",
            "chinese-clip",
            "--reranker-model",
            str(reranker),
            "--top-k",
            "5",
            "--top-n",
            "3",
            "--num-workers",
            "0",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--output-dir",
            str(tmp_path / "runs"),
        ]
    )
    assert args.func(args) == 0
    assert samples == [True, True]  # both runs were read by the one rule on runs of other data, told of the sample

    embedding_run = read_run(tmp_path / "runs" / "mipr_tiny-clip-embedding_top5.json")
    reranked_run = read_run(tmp_path / "runs" / "mipr_tiny-llava-reranker_top5.json")
    check_pool(reranked_run, embedding_run)
    assert {len(ranked) for ranked in embedding_run.rankings.to_pylist()} == {5}
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["embeddings", "rerank"]
    # each run says how it was made; the reranker's candidates are the embedding run
    runs = tmp_path / "runs"
    embedding_meta = json.loads((runs / "mipr_tiny-clip-embedding_top5.json.meta.json").read_text())
    reranked_meta = json.loads((runs / "mipr_tiny-llava-reranker_top5.json.meta.json").read_text())
    assert (embedding_meta["command"], embedding_meta["preset"]) == ("retrieve", "chinese-clip")
    assert embedding_meta["settings"]["max_length"] == 52 and embedding_meta["model"]["model"]["name"] == embedding.name
    assert (reranked_meta["command"], reranked_meta["preset"]) == ("rerank", "none")
    assert reranked_meta["candidates"] == str(runs / "mipr_tiny-clip-embedding_top5.json")
    lines = capsys.readouterr().out.splitlines()
    header = lines.index("| System | nDCG@10 | R-L1@10 | Hit-L1@1 | Hit-L1@10 | SC-R-L1@10 | SC-R-L1@10* |")
    names = [line.split(" | ")[0].lstrip("| ") for line in lines[header + 2 : header + 5]]
    assert names == ["tiny-clip-embedding", "tiny-llava-reranker", "Candidate-pool Oracle"]
    # the oracle row is the oracle of the embedding run's pools, as `mmrhub oracle` computes it
    assert main(["oracle", "mipr", str(tmp_path / "runs" / "mipr_tiny-clip-embedding_top5.json")]) == 0
    oracle_row = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| Candidate-pool Oracle |")]
    assert oracle_row == [lines[header + 4]]
    assert (
        lines[header + 5 :].count(
            "_tiny-clip-embedding, tiny-llava-reranker are runs of a checkpoint with random weights (its folder "
            "holds random-weights.json, as the tiny models of scripts/make_tiny_models.py do): the numbers test the "
            "pipeline, never a model._"
        )
        == 1
    )
