"""Generated damage, held to the invariants every command promises (seeded and bounded, so CI is repeatable).

Each case ends in (a) the right result: exit 0, or (b) exit 1 with an error whose first line names the file at
fault; never a traceback or an unexpected exception type, never a changed input file, never longer than a bound.
"""

import gzip
import hashlib
import json
import re
import shutil
import time
from pathlib import Path

import pytest
from _paths import M2KR_RUN
from _paths import M2KR_SAMPLE
from _paths import MIPR_EMBEDDING
from _paths import MIPR_SAMPLE
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from mmrhub.cli import main

SECONDS = 30  # a bound on one command on the samples, far above what any takes
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
UNEXPECTED = re.compile(r"\((\w+Error|\w+Exception); run `mmrhub --debug")


def digest(folder_or_file: Path) -> dict:
    """Every file's bytes under a folder (or the one file), to prove nothing was changed."""
    paths = (
        [folder_or_file] if folder_or_file.is_file() else sorted(p for p in folder_or_file.rglob("*") if p.is_file())
    )
    return {str(path): hashlib.sha256(path.read_bytes()).hexdigest() for path in paths}


def holds_the_invariants(capsys, argv: list, blamed: list, inputs: list, success: str = "|") -> int:
    """Run ``mmrhub argv``; check the exit code, the error's first line (naming one of ``blamed``) or on success
    the output (holding ``success``: a table by default), the time and that no file of ``inputs`` changed.
    Returns the exit code."""
    before = [digest(path) for path in inputs]
    started = time.monotonic()
    code = main([str(arg) for arg in argv])
    took = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code in (0, 1), (code, err)
    assert "Traceback" not in err and not UNEXPECTED.search(err), err
    assert took < SECONDS, (took, argv)
    assert [digest(path) for path in inputs] == before
    if code == 1:
        first = next(line for line in err.splitlines() if "error:" in line)
        assert any(str(path) in first or path.name in first for path in blamed), first
    else:
        assert success in out, out
    return code


# --- damage ------------------------------------------------------------------------------------------------------


def flip(data: bytes, positions: list, value: int) -> bytes:
    out = bytearray(data)
    for position in positions:
        if out:
            out[position % len(out)] = value
    return bytes(out)


@st.composite
def damaged(draw, data: bytes) -> bytes:
    """One of the ways a file arrives broken: flipped or cut bytes, another encoding, compressed, other newlines,
    a huge number, deep nesting (of the file or of one field), a control character."""
    kind = draw(st.sampled_from(["flip", "cut", "insert", "utf16", "latin1", "gzip", "cr", "number", "nest", "bom"]))
    if kind == "flip":
        return flip(data, draw(st.lists(st.integers(0, 10**9), min_size=1, max_size=8)), draw(st.integers(0, 255)))
    if kind == "cut":
        return data[: draw(st.integers(0, len(data)))]
    if kind == "insert":
        at = draw(st.integers(0, len(data)))
        return data[:at] + draw(st.binary(min_size=1, max_size=16)) + data[at:]
    if kind == "utf16":
        return data.decode("utf-8").encode("utf-16")
    if kind == "latin1":
        return data.decode("utf-8").encode("latin-1", "replace").replace(b'"', b'"\xe9', 1)
    if kind == "gzip":
        return gzip.compress(data)
    if kind == "cr":
        return data.replace(b"\n", b"\r")
    if kind == "number":
        return re.sub(
            rb"\d+(\.\d+)?", draw(st.sampled_from([b"1e400", b"9223372036854775808", b"-0", b"NaN"])), data, 3
        )
    if kind == "nest":
        depth = draw(st.integers(1, 200_000))
        if draw(st.booleans()):
            return b"[" * depth + data + b"]" * depth
        return data.replace(b"{", b'{"extra": ' + b"[" * depth + b"]" * depth + b", ", 1)  # a field of its own
    return b"\xef\xbb\xbf" + data.replace(b"\n", b"\n\x1b]0;x\x07", 1)


def trec(entries: list) -> bytes:
    lines = [f"{e['qid']} Q0 {d['did']} {r} {d['score']} run" for e in entries for r, d in enumerate(e["ranked"], 1)]
    return ("\n".join(lines) + "\n").encode()


def as_dict(entries: list) -> bytes:
    return json.dumps({e["qid"]: {d["did"]: d["score"] for d in e["ranked"]} for e in entries}).encode()


MIPR_ENTRIES = json.loads(MIPR_EMBEDDING.read_text(encoding="utf-8"))
RUN_FORMATS = {
    "json": MIPR_EMBEDDING.read_bytes(),
    "trec": trec(MIPR_ENTRIES),
    "dict": as_dict(MIPR_ENTRIES),
}


# --- runs --------------------------------------------------------------------------------------------------------


@SETTINGS
@given(data=st.data(), kind=st.sampled_from(sorted(RUN_FORMATS)))
def test_damaged_runs(capsys, tmp_path_factory, data, kind):
    run = tmp_path_factory.mktemp("run") / f"run.{kind}"
    run.write_bytes(data.draw(damaged(RUN_FORMATS[kind])))
    holds_the_invariants(capsys, ["evaluate", "mipr", run], [run], [run, MIPR_SAMPLE])


@SETTINGS
@given(data=st.data())
def test_damaged_kaggle_csvs(capsys, tmp_path_factory, data):
    rows = json.loads(M2KR_RUN.read_text(encoding="utf-8"))
    text = "question_id,passage_id\n" + "".join(
        f'{e["qid"]},"{json.dumps([d["did"] for d in e["ranked"]])}"\n'.replace('"[', "[").replace(']"', "]")
        for e in rows
    )
    run = tmp_path_factory.mktemp("run") / "submission.csv"
    run.write_bytes(data.draw(damaged(text.encode())))
    holds_the_invariants(capsys, ["evaluate", "m2kr", run], [run], [run, M2KR_SAMPLE])


@settings(SETTINGS, max_examples=10)
@given(data=st.data())
def test_damaged_runs_through_oracle_compare_and_report(capsys, tmp_path_factory, data):
    run = tmp_path_factory.mktemp("run") / "run.json"
    run.write_bytes(data.draw(damaged(RUN_FORMATS["json"])))
    inputs = [run, MIPR_SAMPLE]
    holds_the_invariants(capsys, ["oracle", "mipr", run], [run], inputs)
    holds_the_invariants(capsys, ["compare", "mipr", MIPR_EMBEDDING, run, "--permutations", "50"], [run], inputs)
    page = run.with_suffix(".html")
    report = ["report", "mipr", run, "-o", page, "--queries", "2"]
    holds_the_invariants(capsys, report, [run], inputs, success="wrote")


# --- judgment tables ---------------------------------------------------------------------------------------------


@settings(SETTINGS, max_examples=30)
@given(data=st.data(), name=st.sampled_from(["mipr_annotation.jsonl", "mipr_query.jsonl", "mipr_corpus.jsonl"]))
def test_damaged_mipr_tables(capsys, tmp_path_factory, data, name):
    folder = tmp_path_factory.mktemp("mipr") / "data"
    shutil.copytree(MIPR_SAMPLE, folder, ignore=shutil.ignore_patterns("images"))
    table = folder / name
    table.write_bytes(data.draw(damaged(table.read_bytes())))
    run = folder / "baseline" / MIPR_EMBEDDING.name
    holds_the_invariants(capsys, ["evaluate", "mipr", run, "--data-dir", folder], [table, run], [folder])


@settings(SETTINGS, max_examples=20)
@given(data=st.data(), config=st.sampled_from(["challenge_answers", "challenge_data", "challenge_passage"]))
def test_damaged_m2kr_parquet(capsys, tmp_path_factory, data, config):
    folder = tmp_path_factory.mktemp("m2kr") / "data"
    shutil.copytree(M2KR_SAMPLE, folder, ignore=shutil.ignore_patterns("*.zip*"))
    table = next((folder / config).glob("train-*.parquet"))
    content = table.read_bytes()
    positions = data.draw(st.lists(st.integers(0, len(content) - 1), min_size=1, max_size=6))
    table.write_bytes(flip(content, positions, data.draw(st.integers(0, 255))))
    run = folder / "baseline" / M2KR_RUN.name
    holds_the_invariants(capsys, ["evaluate", "m2kr", run, "--data-dir", folder], [table, run], [folder])


# --- archives and images -----------------------------------------------------------------------------------------


@pytest.mark.slow
@settings(SETTINGS, max_examples=12)
@given(data=st.data(), part=st.sampled_from(["Web_Image.zip.001", "Web_Image.zip.002", "Web_Image.zip.003"]))
def test_damaged_archives(capsys, tmp_path_factory, data, part):
    folder = tmp_path_factory.mktemp("m2kr") / "data"
    shutil.copytree(M2KR_SAMPLE, folder)
    archive = folder / part
    content = archive.read_bytes()
    positions = data.draw(st.lists(st.integers(0, len(content) - 1), min_size=1, max_size=6))
    archive.write_bytes(flip(content, positions, data.draw(st.integers(0, 255))))
    parts = [folder / f"Web_Image.zip.00{i}" for i in (1, 2, 3)]
    code = holds_the_invariants(capsys, ["info", "m2kr", "--data-dir", folder], parts, [folder], success="rows")
    if code == 0:  # the damage missed every byte the checks read: the images must still decode or be refused
        out = tmp_path_factory.mktemp("out") / "x"
        holds_the_invariants(capsys, ["export", "m2kr", out, "--data-dir", folder], parts, [folder], success="wrote")
