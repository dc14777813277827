"""The retrieve wing takes typed options: ``baseline`` builds them instead of re-parsing argv, the wing neither
imports the benchmarks nor the commands, and no library function takes an argparse Namespace. Torch-free but for
``baseline``'s run, which needs the retrieve extra."""

import argparse
import ast
import importlib
import sys
import types
from pathlib import Path

import pytest

import mmrhub.retrieve
from mmrhub.benchmarks import MIPR
from mmrhub.commands import baseline
from mmrhub.retrieve.options import DataOptions
from mmrhub.retrieve.options import ModelSettings
from mmrhub.retrieve.options import OutputOptions
from mmrhub.retrieve.options import RerankOptions
from mmrhub.retrieve.options import RetrieveOptions
from mmrhub.retrieve.options import RunOptions

WING = Path(mmrhub.retrieve.__file__).parent


def wing_modules():
    return sorted(WING.rglob("*.py"))


def imported_modules(path):
    """Every absolute module name the file imports, ``from a import b`` counted as ``a`` and ``a.b``."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            package = "mmrhub.retrieve".rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(part for part in (package, node.module) if part)
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("path", wing_modules(), ids=lambda path: path.relative_to(WING).as_posix())
def test_the_wing_imports_neither_benchmarks_nor_commands(path):
    for name in imported_modules(path):
        for forbidden in ("mmrhub.benchmarks", "mmrhub.commands"):
            assert name != forbidden and not name.startswith(forbidden + "."), f"{path.name} imports {name}"


@pytest.mark.parametrize("path", wing_modules(), ids=lambda path: path.relative_to(WING).as_posix())
def test_no_wing_function_takes_parsed_arguments(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            assert "args" not in {arg.arg for arg in node.args.args}, f"{path.name}: {node.name}(args, ...)"


def test_rerank_options_refuse_sizes_below_one():
    with pytest.raises(ValueError, match=r"--chunk-queries 0: must be at least 1\."):
        RerankOptions(DataOptions(MIPR), candidates="run.json", chunk_queries=0)


def fake_pipelines(monkeypatch) -> list:
    """Both pipelines replaced by recorders of the options they are handed; the list they fill. ``baseline`` still
    reads the judgments through ``data_loading``, which imports torch: without it the test is skipped."""
    pytest.importorskip("torch")
    received = []
    for package, name in (("mmrhub.retrieve", "pipeline"), ("mmrhub.retrieve.rerank", "pipeline")):
        fake = types.SimpleNamespace(run=lambda options: received.append(options) or 0)
        monkeypatch.setitem(sys.modules, f"{package}.{name}", fake)
        monkeypatch.setattr(importlib.import_module(package), name, fake, raising=False)
    return received


def test_baseline_paper_runs_the_8b_models_with_their_presets(tmp_path, monkeypatch):
    received = fake_pipelines(monkeypatch)
    parser = argparse.ArgumentParser()
    baseline.register(parser.add_subparsers())
    args = parser.parse_args(["baseline", "mipr", "--paper", "--output-dir", str(tmp_path)])
    monkeypatch.setenv("RANK", "1")
    assert args.func(args) == 0
    retrieve, rerank = received
    assert (retrieve.model, rerank.model) == ("Qwen/Qwen3-VL-Embedding-8B", "Qwen/Qwen3-VL-Reranker-8B")
    assert (retrieve.settings.preset, rerank.settings.preset) == ("qwen3-vl-embedding", "qwen3-vl-reranker")
    assert retrieve.top_k == 50 and rerank.candidates == retrieve.output.path


def test_baseline_default_pair_is_the_2b_models(tmp_path, monkeypatch):
    received = fake_pipelines(monkeypatch)
    parser = argparse.ArgumentParser()
    baseline.register(parser.add_subparsers())
    args = parser.parse_args(["baseline", "mipr", "--output-dir", str(tmp_path)])
    monkeypatch.setenv("RANK", "1")
    assert args.func(args) == 0
    retrieve, rerank = received
    assert (retrieve.model, rerank.model) == ("Qwen/Qwen3-VL-Embedding-2B", "Qwen/Qwen3-VL-Reranker-2B")
    assert retrieve.settings.resolve(retrieve.model, "embedding").name == "qwen3-vl-embedding"


def test_baseline_runs_of_two_folders_with_one_name_differ(tmp_path, monkeypatch):
    received = fake_pipelines(monkeypatch)
    parser = argparse.ArgumentParser()
    baseline.register(parser.add_subparsers())
    embedding, reranker = tmp_path / "a" / "hub", tmp_path / "b" / "hub"
    args = parser.parse_args(
        ["baseline", "mipr", "--embedding-model", str(embedding), "--reranker-model", str(reranker)]
        + ["--output-dir", str(tmp_path)]
    )
    monkeypatch.setenv("RANK", "1")
    assert args.func(args) == 0
    retrieve, rerank = received
    assert retrieve.output.path != rerank.output.path and rerank.candidates == retrieve.output.path
    # the table's rows too: scoring refuses two runs of one name
    assert baseline.row_names(retrieve.model, rerank.model) == ("hub (embedding)", "hub (reranked)")


def test_baseline_hands_option_objects_to_both_pipelines(tmp_path, monkeypatch):
    received = fake_pipelines(monkeypatch)

    def refuse(self, args=None, namespace=None):
        raise AssertionError(f"{self.prog} re-parsed {args}")

    parser = argparse.ArgumentParser()
    baseline.register(parser.add_subparsers())
    args = parser.parse_args(
        [
            "baseline",
            "mipr",
            "--embedding-model",
            "org/Embed-1",
            "--reranker-model",
            "org/Rerank-1",
            "--top-k",
            "7",
            "--top-n",
            "3",
            "--dtype",
            "float32",
            "--num-workers",
            "0",
            "--device",
            "cpu",
            "--reranker-instruction",
            "judge",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--output-dir",
            str(tmp_path / "runs"),
        ]
    )
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", refuse)
    monkeypatch.setenv("RANK", "1")  # a non-main process: both pipelines run, nothing is scored
    assert args.func(args) == 0

    retrieve, rerank = received
    data = DataOptions(MIPR)
    embedding_run = str(tmp_path / "runs" / "mipr_Embed-1_top7.json")
    runtime = RunOptions(device="cpu", dtype="float32", num_workers=0)
    assert retrieve == RetrieveOptions(
        data=data,
        model="org/Embed-1",
        top_k=7,
        runtime=RunOptions(**{**vars(runtime), "cache_dir": str(tmp_path / "cache" / "embeddings")}),
        output=OutputOptions(path=embedding_run, score=False, named_after_model=True),
    )
    assert rerank == RerankOptions(
        data=data,
        candidates=embedding_run,
        model="org/Rerank-1",
        settings=ModelSettings(query_instruction="judge"),
        top_n=3,
        runtime=RunOptions(**{**vars(runtime), "cache_dir": str(tmp_path / "cache" / "rerank")}),
        output=OutputOptions(
            path=str(tmp_path / "runs" / "mipr_Rerank-1_top7.json"), score=False, named_after_model=True
        ),
    )


def test_baseline_names_each_models_options_after_it():
    """Issue 31: the embedding model's options were prefixed and the reranker's were not (--preset, --prompt)."""
    parser = argparse.ArgumentParser()
    baseline.register(parser.add_subparsers())
    (command,) = parser._subparsers._group_actions[0].choices.values()
    groups = {
        group.title: [action.option_strings[0] for action in group._group_actions if action.option_strings]
        for group in command._action_groups
    }
    assert all(flag.startswith("--embedding-") for flag in groups["embedding model"])
    assert set(groups["reranker"]) - {"--top-n", "--chunk-queries", "--no-shared-prefix"} == {
        flag for flag in groups["reranker"] if flag.startswith("--reranker-")
    }
    for side, title in (("embedding", "embedding model"), ("reranker", "reranker")):
        assert {f"--{side}-preset", f"--{side}-max-pixels", f"--{side}-exif-orientation"} <= set(groups[title])
    assert set(groups["both models"]) == {"--dtype", "--num-workers", "--device", "--cache-dir", "--no-cache"}

    args = parser.parse_args(
        [
            "baseline",
            "mipr",
            "--reranker-preset",
            "none",
            "--reranker-instruction",
            "judge",
            "--embedding-preset",
            "none",
            "--reranker-batch-size",
            "4",
            "--embedding-revision",
            "abc",
            "--no-shared-prefix",
        ]
    )
    _, embedding, _, reranker = baseline.chosen_models(args)
    assert (embedding.preset, reranker.preset, reranker.query_instruction) == ("none", "none", "judge")
    assert (args.reranker_batch_size, args.embedding_revision) == (4, "abc")
    assert baseline.pipeline_options(args)[1].shared_prefix is False
    for old in (["--preset", "none"], ["--prompt", "judge"], ["--batch-size", "4"], ["--revision", "abc"]):
        with pytest.raises(SystemExit):
            parser.parse_args(["baseline", "mipr", *old])


def test_the_backend_choices_are_the_single_vector_encoders():
    pytest.importorskip("torch")
    from mmrhub.retrieve.encoders import ENCODERS
    from mmrhub.retrieve.late_interaction.search import TOKEN_BACKENDS
    from mmrhub.retrieve.options import BACKEND_CHOICES

    assert sorted(BACKEND_CHOICES) == sorted(ENCODERS) == ["sentence-transformers", "transformers"]
    assert set(TOKEN_BACKENDS).isdisjoint(BACKEND_CHOICES)
