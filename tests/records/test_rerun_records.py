"""A run's record is read as its command line is: ``mmrhub rerun`` puts each recorded option through the converter and
bounds of its flag, reads the record through the one reader (a FIFO is refused, not waited on), refuses an output
onto the record or onto a file a foreign record names as its run, and says every problem in one line naming the
record and the key. The pipelines are never reached here: each case is refused before any work."""

import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest
from _paths import MIPR_SAMPLE

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.cli import main
from mmrhub.records.provenance import options_record
from mmrhub.retrieve.options import DataOptions
from mmrhub.retrieve.options import OutputOptions
from mmrhub.retrieve.options import RerankOptions
from mmrhub.retrieve.options import RetrieveOptions
from mmrhub.retrieve.options import RunOptions


def record_of(options, command: str = "retrieve") -> dict:
    """A record as ``provenance.write_meta`` writes it, with the fields ``rerun`` reads."""
    return {
        "command": command,
        "run": "tiny.json",
        "model_id": options.model,
        "options": options_record(options),
        "cwd": "/",
        "versions": {"numpy": "2.0"},
    }


def retrieve_record(data) -> dict:
    data_options = DataOptions(BENCHMARKS["mipr"], data_dir=str(data))
    runtime = RunOptions(num_workers=0, device="cpu")
    return record_of(RetrieveOptions(data_options, "org/tiny", runtime=runtime, output=OutputOptions(path="tiny.json")))


@pytest.fixture
def pipeline(monkeypatch):
    """The options each pipeline was called with (it then fails, so rerun stops there)."""
    pytest.importorskip("torch")
    import mmrhub.retrieve.pipeline as retrieve_pipeline
    import mmrhub.retrieve.rerank.pipeline as rerank_pipeline

    calls = []
    for module in (retrieve_pipeline, rerank_pipeline):
        monkeypatch.setattr(module, "run", lambda options: calls.append(options) or 1)
    return calls


def written(folder, record: dict, name: str = "tiny.json.meta.json"):
    path = folder / name
    path.write_text(json.dumps(record))
    return path


def refused(capsys, argv: list) -> str:
    assert main(list(map(str, argv))) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "(KeyError" not in err and "(TypeError" not in err, err
    return err.rstrip("\n")


def test_a_whole_record_reaches_the_pipeline_with_its_options(tmp_path, capsys, pipeline):
    record = written(tmp_path, retrieve_record(MIPR_SAMPLE))
    assert main(["rerun", str(record)]) == 1 and len(pipeline) == 1  # the stand-in pipeline's exit
    options = pipeline[0]
    assert (options.model, options.runtime.num_workers, options.text_weight) == ("org/tiny", 0, 0.5)
    assert options.output.path == str(tmp_path / "tiny.rerun.json")


@pytest.mark.parametrize(
    "key, value, expected",
    [
        ("runtime.num_workers", 100_000, "expected a whole number from 0 to 1,024, got 100,000 (as --num-workers"),
        ("text_weight", float("nan"), "expected a number from 0.0 to 1.0, got nan (as --text-weight takes it)."),
        ("text_weight", float("inf"), "expected a number from 0.0 to 1.0, got inf (as --text-weight takes it)."),
        ("batch_size", "many", "expected a whole number from 1 to 1,000,000, got 'many' (as --batch-size takes it)"),
        ("batch_size", True, "expected a whole number from 1 to 1,000,000, got True (as --batch-size takes it)."),
        ("top_k", None, "expected a value (as --top-k takes it), got null."),
        ("search", "annoy", 'expected one of torch, faiss (as --search takes it), got "annoy".'),
        ("backend", 3, "expected one of sentence-transformers, transformers (as --backend takes it), got 3."),
        ("settings", [1, 2], "expected an object of ModelSettings's fields, got [1, 2]."),
        ("settings.min_pixels", 1e300, "expected a whole number from 1 to 1,000,000,000, got 1e+300"),
        ("runtime.device", {"cuda": 0}, 'expected one value (as --device takes it), got {"cuda": 0}.'),
        ("runtime.use_cache", "no", 'expected true or false (as --no-cache takes it), got "no".'),
        (
            "model",
            "x" * 100_000,
            "expected a non-empty text of at most 4,096 characters, without NUL (as --model takes it), got",
        ),
        ("model", None, "expected a value (as --model takes it), got null."),
        ("data.benchmark", "nope", "invalid choice: 'nope' (choose from mipr, m2kr)"),
        ("data.split", ["test"], 'expected one value (as --split takes it), got ["test"].'),
        ("data", "mipr", 'expected an object naming the benchmark and its data, got "mipr".'),
        ("runtime.junk", {"deep": [[[]]]}, "not one of the options RunOptions records"),
    ],
)
def test_each_damaged_option_is_one_line_naming_the_record_and_the_key(tmp_path, capsys, key, value, expected):
    record = retrieve_record(MIPR_SAMPLE)
    *parents, leaf = key.split(".")
    holder = record["options"]
    for name in parents:
        holder = holder[name]
    holder[leaf] = value
    path = written(tmp_path, record)
    err = refused(capsys, ["rerun", path])
    assert err.startswith(f"mmrhub rerun: error: {path}: options.{key}: {expected}"), err


@pytest.mark.parametrize(
    "key, value, expected",
    [
        ("run", None, "run: expected the run's file name, beside the record, got null."),
        ("run", "../data/mipr_annotation.jsonl", "run: expected the run's file name, beside the record, got"),
        ("run", 7, "run: expected the run's file name, beside the record, got 7."),
        ("run", "tiny\x00.json", 'run: expected the run\'s file name, beside the record, got "tiny\\u0000.json".'),
        ("cwd", "/tmp\x00", "cwd: expected a non-empty text of at most 4,096 characters, without NUL, got"),
        ("model_id", ["a"], 'model_id: expected a non-empty text of at most 4,096 characters, without NUL, got ["a"].'),
        ("cwd", 7, "cwd: expected a non-empty text of at most 4,096 characters, without NUL, got 7."),
        ("options", None, "options: expected an object of the run's options, got null."),
    ],
)
def test_each_damaged_field_of_the_record_is_one_line_naming_it(tmp_path, capsys, key, value, expected):
    record = retrieve_record(MIPR_SAMPLE)
    if value is None:
        del record[key]
    else:
        record[key] = value
    path = written(tmp_path, record)
    err = refused(capsys, ["rerun", path])
    if key == "options":  # provenance.read_meta's own words
        expected = "written before runs recorded their options"
    assert err.startswith(f"mmrhub rerun: error: {path}: {expected}"), err


def test_a_rerank_record_without_its_candidates_is_refused_naming_them(tmp_path, capsys):
    options = RerankOptions(DataOptions(BENCHMARKS["mipr"]), candidates="pool.json", runtime=RunOptions(num_workers=0))
    record = record_of(options, "rerank")
    del record["options"]["candidates"]
    path = written(tmp_path, record)
    assert refused(capsys, ["rerun", path]) == (
        f"mmrhub rerun: error: {path}: options.candidates: missing; every run records it."
    )


def test_a_rerank_record_repeats_the_path_it_took(tmp_path, capsys, pipeline):
    """A rerank recorded with --no-shared-prefix runs whole again; one recorded before the option existed takes the
    default (the shared prefix: the same scores); a value that is no switch is refused naming the flag."""
    from_mipr = DataOptions(BENCHMARKS["mipr"], data_dir=str(MIPR_SAMPLE))
    (tmp_path / "pool.json").write_text("[]")
    options = RerankOptions(from_mipr, candidates=str(tmp_path / "pool.json"), runtime=RunOptions(num_workers=0))
    record = record_of(replace(options, shared_prefix=False), "rerank")
    assert record["options"]["shared_prefix"] is False
    assert main(["rerun", str(written(tmp_path, record))]) == 1 and pipeline[-1].shared_prefix is False
    del record["options"]["shared_prefix"]
    assert main(["rerun", str(written(tmp_path, record))]) == 1 and pipeline[-1].shared_prefix is True
    record["options"]["shared_prefix"] = "no"
    path = written(tmp_path, record)
    assert refused(capsys, ["rerun", path]) == (
        f"mmrhub rerun: error: {path}: options.shared_prefix: expected true or false (as --no-shared-prefix takes "
        'it), got "no".'
    )


def test_a_fifo_as_the_record_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "tiny.json.meta.json"
    os.mkfifo(fifo)
    result = subprocess.run(
        [sys.executable, "-c", "from mmrhub.cli import console; console()", "rerun", str(fifo)],
        capture_output=True,
        text=True,
        timeout=60,  # reading it would wait for a writer for ever
    )
    assert (result.returncode, result.stderr) == (
        1,
        f"mmrhub rerun: error: {fifo}: not a regular file (a FIFO); expected a file to read.\n",
    )


def test_output_onto_the_record_itself_is_refused(tmp_path, capsys, pipeline):
    record = written(tmp_path, retrieve_record(MIPR_SAMPLE))
    before = record.read_bytes()
    err = refused(capsys, ["rerun", record, "-o", record])
    assert err == f"mmrhub rerun: error: --output {record}: is {record}, one of this command's inputs; write elsewhere."
    os.link(record, tmp_path / "again.json")
    err = refused(capsys, ["rerun", record, "-o", tmp_path / "again.json"])
    assert f"is {record}, one of this command's inputs" in err
    assert record.read_bytes() == before and pipeline == []


def test_output_whose_metadata_is_the_record_is_refused(tmp_path, capsys, pipeline):
    record = written(tmp_path, retrieve_record(MIPR_SAMPLE), "other.json.meta.json")
    err = refused(capsys, ["rerun", record, "-o", tmp_path / "other.json"])
    assert err.endswith(f"--output's metadata {record}: is {record}, one of this command's inputs; write elsewhere.")
    assert pipeline == []


def test_replace_onto_a_file_a_foreign_record_names_as_its_run_is_refused(tmp_path, capsys, pipeline):
    # a record dropped into a data folder, naming one of its tables as the run to replace
    record = retrieve_record(MIPR_SAMPLE)
    record["run"] = "mipr_annotation.jsonl"
    path = written(tmp_path, record, "tiny.json.meta.json")
    (tmp_path / "mipr_annotation.jsonl").write_text("judgments\n")
    err = refused(capsys, ["rerun", path, "--replace"])
    assert err == (
        f"mmrhub rerun: error: --replace: {path} names {tmp_path / 'mipr_annotation.jsonl'} as its run, whose record "
        f"would be {tmp_path / 'mipr_annotation.jsonl.meta.json'}, not this file; give --output for the repeated run."
    )
    assert (tmp_path / "mipr_annotation.jsonl").read_text() == "judgments\n" and pipeline == []


def test_output_onto_the_recorded_run_through_a_hard_link_names_replace(tmp_path, capsys, pipeline):
    record = written(tmp_path, retrieve_record(MIPR_SAMPLE))
    (tmp_path / "tiny.json").write_text("[]")
    os.link(tmp_path / "tiny.json", tmp_path / "copy.json")
    err = refused(capsys, ["rerun", record, "-o", tmp_path / "copy.json"])
    assert err.endswith(f"--output {tmp_path / 'copy.json'} is the recorded run; give --replace to write over it.")
    assert pipeline == []


def test_a_record_whose_options_name_another_model_is_refused(tmp_path, capsys, pipeline):
    record = retrieve_record(MIPR_SAMPLE)
    record["model_id"] = "org/other"
    path = written(tmp_path, record)
    assert refused(capsys, ["rerun", path]) == (
        f"mmrhub rerun: error: {path}: options.model is 'org/tiny' but model_id is 'org/other'; a record names one "
        "model. Was it edited? Repeat the run of the model you mean with retrieve or rerank."
    )
    assert pipeline == []


def test_a_relative_model_folder_agrees_with_its_absolute_model_id(tmp_path, capsys, pipeline):
    record = retrieve_record(MIPR_SAMPLE)
    record["options"]["model"], record["model_id"], record["cwd"] = "models/tiny", "/work/models/tiny", "/work"
    assert main(["rerun", str(written(tmp_path, record))]) == 1 and len(pipeline) == 1


def test_a_record_whose_options_name_another_benchmark_is_refused_before_any_work(tmp_path, capsys, pipeline):
    record = retrieve_record(MIPR_SAMPLE)
    record["options"]["data"]["benchmark"], record["options"]["data"]["data_dir"] = "m2kr", None
    record["data"] = {"benchmark": "mipr"}
    path = written(tmp_path, record)
    assert refused(capsys, ["rerun", path]) == (
        f"mmrhub rerun: error: {path}: options.data.benchmark is 'm2kr' but the run read 'mipr' (data.benchmark); a "
        "record names one benchmark. Was it edited?"
    )
    assert pipeline == []


def test_a_rerank_record_whose_candidates_are_gone_is_one_line(tmp_path, capsys, pipeline):
    options = RerankOptions(DataOptions(BENCHMARKS["mipr"]), candidates="pool.json", runtime=RunOptions(num_workers=0))
    record = record_of(options, "rerank")
    record["cwd"] = str(tmp_path / "gone")
    path = written(tmp_path, record)
    assert refused(capsys, ["rerun", path]) == (
        f"mmrhub rerun: error: {path}: options.candidates names {tmp_path / 'gone' / 'pool.json'}, which is not "
        "there: the run this one reranked. Put it back at that path to repeat the run."
    )


def test_a_record_made_on_cuda_is_repeated_on_the_cpu_with_a_note(tmp_path, capsys, pipeline, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    record = retrieve_record(MIPR_SAMPLE)
    record["options"]["runtime"]["device"] = "cuda:0"
    record.update(device="cuda:0", device_name="NVIDIA H100 80GB HBM3")
    path = written(tmp_path, record)
    assert main(["rerun", str(path)]) == 1 and pipeline[0].runtime.device == "cpu"
    assert (
        f"note: {path} was made on cuda:0 (NVIDIA H100 80GB HBM3); CUDA is not available here, so the run is "
        "repeated on the CPU (--device chooses).\n"
    ) in capsys.readouterr().out
    pipeline.clear()
    assert main(["rerun", str(path), "--device", "cuda:1"]) == 1 and pipeline[0].runtime.device == "cuda:1"  # asked
