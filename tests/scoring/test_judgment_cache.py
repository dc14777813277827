"""The judgment cache is keyed on the files' bytes: a same-size edit with its times restored is seen, a copied or
damaged entry is rebuilt, a pipe is refused by name."""

import json
import os
import shutil
from pathlib import Path

import pytest
from _paths import ROOT

import mmr_cache
from mmrhub.benchmarks import MIPR
from mmrhub.cli import main
from mmrhub.scoring import judgment_cache

SAMPLE = ROOT / "data" / "mipr"


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    folder = tmp_path / "mipr"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("images"))
    return folder


def l1_count(folder: Path) -> int:
    return int((MIPR.read_truth(folder).judgments.gain[:-1] == 2).sum())


def entries() -> list:
    return sorted(judgment_cache.cache_root().iterdir())


def test_a_same_size_edit_with_its_times_restored_is_seen(data):
    annotation = data / "mipr_annotation.jsonl"
    before = MIPR.read_truth(data).judgments.gain[:-1].tolist()
    info = annotation.stat()
    text = annotation.read_text(encoding="utf-8")
    edited = text.replace('"final_grade": "L2"', '"final_grade": "L1"', 1)
    assert len(edited) == len(text) and edited != text
    annotation.write_text(edited, encoding="utf-8")
    os.utime(annotation, ns=(info.st_atime_ns, info.st_mtime_ns))
    after = MIPR.read_truth(data).judgments.gain[:-1].tolist()
    assert sum(g == 2 for g in after) == sum(g == 2 for g in before) + 1
    assert len(entries()) == 2


def test_the_same_bytes_elsewhere_share_one_entry(data, tmp_path):
    other = tmp_path / "copy"
    shutil.copytree(data, other)
    MIPR.read_truth(data), MIPR.read_truth(other)
    assert len(entries()) == 1


def test_an_entry_copied_over_another_is_rebuilt(data, tmp_path):
    MIPR.read_truth(data)
    (first,) = entries()
    annotation = data / "mipr_annotation.jsonl"
    annotation.write_text(annotation.read_text(encoding="utf-8").replace("L2", "L1", 1), encoding="utf-8")
    expected = MIPR.read_truth(data).judgments.gain.tolist()
    second = next(entry for entry in entries() if entry != first)
    shutil.rmtree(second)
    shutil.copytree(first, second)  # the first folder's entry under the second folder's key
    assert MIPR.read_truth(data).judgments.gain.tolist() == expected
    assert json.loads((second / mmr_cache.ENTRY).read_text())["key"] == second.name


def test_an_entry_holding_another_entrys_tables_is_rebuilt(data):
    # The reported case: another entry's .arrow files under this entry's own entry.json were served (25.12, not 59.89).
    assert l1_count(data) == 74
    (first,) = entries()
    annotation = data / "mipr_annotation.jsonl"
    annotation.write_text(annotation.read_text(encoding="utf-8").replace('"L1"', '"N1"'), encoding="utf-8")
    expected = MIPR.read_truth(data).judgments.gain.tolist()
    second = next(entry for entry in entries() if entry != first)
    for table in first.glob("*.arrow"):
        shutil.copy(table, second / table.name)
    assert MIPR.read_truth(data).judgments.gain.tolist() == expected
    assert l1_count(data) == 0


def test_evaluate_scores_from_the_right_tables_after_a_swap(data, tmp_path, capsys):
    run = ROOT / "data" / "mipr" / "baseline" / "simulated_embedding_top50.json"
    other = tmp_path / "other"
    shutil.copytree(data, other)
    annotation = other / "mipr_annotation.jsonl"
    annotation.write_text(annotation.read_text(encoding="utf-8").replace('"L1"', '"L2"', 150), encoding="utf-8")
    for folder in (data, other):
        assert main(["evaluate", "mipr", str(run), "--data-dir", str(folder)]) == 0
    scored = capsys.readouterr().out
    assert "| simulated_embedding_top50 | 59.89 |" in scored and scored.count("| 59.89 |") == 1
    first, second = entries()
    swapped = tmp_path / "swapped"
    shutil.copytree(first, swapped)
    for table in second.glob("*.arrow"):  # each entry now holds the other's tables under its own entry.json
        shutil.copy(table, first / table.name)
        shutil.copy(swapped / table.name, second / table.name)
    assert main(["evaluate", "mipr", str(run), "--data-dir", str(data)]) == 0
    assert "| simulated_embedding_top50 | 59.89 |" in capsys.readouterr().out


def test_an_entry_missing_a_table_is_rebuilt(data):
    expected = MIPR.read_truth(data).judgments.gain.tolist()
    (entry,) = entries()
    (entry / "judgments.arrow").unlink()
    assert MIPR.read_truth(data).judgments.gain.tolist() == expected
    assert (entry / "judgments.arrow").is_file()


def test_a_damaged_table_is_rebuilt(data):
    expected = MIPR.read_truth(data).judgments.gain.tolist()
    (entry,) = entries()
    (entry / "judgments.arrow").write_bytes(b"not arrow")
    assert MIPR.read_truth(data).judgments.gain.tolist() == expected


def test_a_pipe_among_the_tables_is_refused_by_name(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    folder = tmp_path / "m2kr"
    shutil.copytree(ROOT / "data" / "m2kr", folder)
    passages = folder / "challenge_passage" / "train-00000-of-00001.parquet"
    passages.unlink()
    os.mkfifo(passages)  # reading it would wait forever
    run = ROOT / "data" / "m2kr" / "baseline" / "simulated_top5.json"
    assert main(["evaluate", "m2kr", str(run), "--data-dir", str(folder)]) == 1
    err = capsys.readouterr().err
    assert err == (f"mmrhub evaluate: error: {passages}: not a regular file (a FIFO); expected a file to read.\n")


def test_a_first_call_reads_each_mipr_file_once(data, monkeypatch):
    """The judgments are checked against the query and product ids of the tables read just before them, not of a
    second read of those files (46 ms of a full-scale first call)."""
    import mipr_format

    read, real = [], mipr_format.read_table

    def counted(path, name, *args, **kwargs):
        read.append(name)
        return real(path, name, *args, **kwargs)

    monkeypatch.setattr(mipr_format, "read_table", counted)
    MIPR.read_truth(data)
    assert sorted(read) == ["corpus", "qrels", "queries"]
    read.clear()
    MIPR.read_truth(data)  # cached
    assert read == []
