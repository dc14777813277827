"""Generated damage, held to the invariants every command promises (seeded and bounded, so CI is repeatable).

Each case ends in (a) the right result: exit 0, or (b) exit 1 with an error whose first line names the file at
fault; never a traceback or an unexpected exception type, never a changed input file, never longer than a bound.
"""

import gzip
import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from _interrupt_helpers import interrupted
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
M2KR_CONFIGS = ["challenge_answers", "challenge_data", "challenge_passage"]
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


@pytest.mark.slow
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


@pytest.mark.slow
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


# --- outputs onto what may not be replaced -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def data_copies(tmp_path_factory):
    """Copies of both samples (images and archives included), shared by the examples: nothing may change them."""
    root = tmp_path_factory.mktemp("targets")
    return shutil.copytree(MIPR_SAMPLE, root / "mipr"), shutil.copytree(M2KR_SAMPLE, root / "m2kr")


def special_target(kind: str, folder: Path, mipr: Path, m2kr: Path) -> Path:
    """A target of ``kind`` that no output may replace."""
    if kind == "fifo":
        os.mkfifo(folder / "out.json")
    elif kind == "device":
        try:
            os.mknod(folder / "out.json", 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a /dev/null of the test's own
        except PermissionError:
            os.mkfifo(folder / "out.json")
    elif kind == "folder":
        (folder / "out.json").mkdir()
    elif kind == "link to a fifo":
        os.mkfifo(folder / "fifo")
        (folder / "out.json").symlink_to(folder / "fifo")
    elif kind == "link loop":
        (folder / "out.json").symlink_to(folder / "loop")
        (folder / "loop").symlink_to(folder / "out.json")
    elif kind == "link to an image":
        (folder / "out.json").symlink_to(mipr / "images" / "query_images" / "3.jpg")
    else:
        return {
            "query image": mipr / "images" / "query_images" / "1.jpg",
            "product image": next((mipr / "images" / "product_images").glob("*.jpg")),
            "new file among the images": mipr / "images" / "query_images" / "scores.json",
            "the judgments": mipr / "mipr_annotation.jsonl",
            "the run": mipr / "baseline" / MIPR_EMBEDDING.name,
            "an archive part": m2kr / "Web_Image.zip.002",
        }[kind]
    return folder / "out.json"


def kind_and_bytes(path: Path):
    """What a path is (without following a link) and, for a file, its bytes."""
    mode = os.lstat(path).st_mode if os.path.lexists(path) else None
    return mode and stat.S_IFMT(mode), path.read_bytes() if mode and stat.S_ISREG(mode) else None


TARGET_KINDS = [
    "fifo",
    "device",
    "folder",
    "link to a fifo",
    "link loop",
    "link to an image",
    "query image",
    "product image",
    "new file among the images",
    "the judgments",
    "the run",
    "an archive part",
]


@pytest.mark.slow
@settings(SETTINGS, max_examples=24)
@given(kind=st.sampled_from(TARGET_KINDS), command=st.sampled_from(["evaluate", "oracle", "compare", "report"]))
def test_outputs_onto_special_files_and_inputs_are_refused(capsys, tmp_path_factory, data_copies, kind, command):
    if command == "report":
        pytest.importorskip("matplotlib")
    mipr, m2kr = data_copies
    folder = tmp_path_factory.mktemp("out")
    target = special_target(kind, folder, mipr, m2kr)
    run = mipr / "baseline" / MIPR_EMBEDDING.name
    benchmark, data = ("m2kr", m2kr) if kind == "an archive part" else ("mipr", mipr)
    if benchmark == "m2kr":
        run = M2KR_RUN
    argv = {
        "evaluate": [command, benchmark, run, "--json", target],
        "oracle": [command, benchmark, run, "--json", target],
        "compare": [command, benchmark, run, run, "--permutations", "20", "--json", target],
        "report": [command, benchmark, run, "-o", target, "--queries", "1"],
    }[command]
    before = kind_and_bytes(target), digest(mipr), digest(m2kr)
    code = main([*map(str, argv), "--data-dir", str(data)])
    err = capsys.readouterr().err
    assert code == 1, (kind, command, err)
    assert f" {target}: " in err.splitlines()[-1] and "Traceback" not in err, err
    assert (kind_and_bytes(target), digest(mipr), digest(m2kr)) == before


# --- outputs onto inputs reached by another path ----------------------------------------------------------------

REACHED = [
    "its path",
    "a hard link",
    "a link to it",
    "a linked folder",
    "two links",
    "a path through ..",
    "a bind mount",
]
INPUTS = ["query image", "product image", "new file among the images", "the judgments", "the run", "an archive part"]


@contextmanager
def bind_mount(folder: Path, at: Path):
    """``folder`` mounted again at ``at`` (same device and inodes); None where mounting is not permitted."""
    at.mkdir()
    made = (
        subprocess.run(["mount", "--bind", str(folder), str(at)], capture_output=True)
        if shutil.which("mount")
        else None
    )
    if made is None or made.returncode != 0:
        yield None
        return
    try:
        yield at
    finally:
        subprocess.run(["umount", str(at)], check=True)


@contextmanager
def reached(how: str, source: Path, folder: Path):
    """A path to ``source`` (an input, or a new name in an input folder) that is not its own: a hard link, links to
    it or to its folder, a path through .., or a bind mount of its folder (None where a bind mount is not
    permitted)."""
    if how == "its path":
        yield source
    elif how == "a hard link":
        if not source.exists():  # a new name: a hard link to the input folder cannot be made; its folder's link
            (folder / "in").symlink_to(source.parent)
            yield folder / "in" / source.name
        else:
            os.link(source, folder / "out.json")
            yield folder / "out.json"
    elif how == "a link to it":
        (folder / "out.json").symlink_to(source)
        yield folder / "out.json"
    elif how == "a linked folder":
        (folder / "in").symlink_to(source.parent)
        yield folder / "in" / source.name
    elif how == "two links":
        (folder / "first").symlink_to(source.parent)
        (folder / "second").symlink_to(folder / "first")
        yield folder / "second" / source.name
    elif how == "a path through ..":
        yield source.parent / ".." / source.parent.name / source.name
    else:
        with bind_mount(source.parent, folder / "mounted") as mounted:
            yield None if mounted is None else mounted / source.name


@pytest.mark.slow
@settings(SETTINGS, max_examples=30)
@given(
    how=st.sampled_from(REACHED),
    kind=st.sampled_from(INPUTS),
    command=st.sampled_from(["evaluate", "oracle", "report"]),
)
def test_outputs_onto_inputs_reached_by_links_bind_mounts_and_hard_links_are_refused(
    capsys, tmp_path_factory, data_copies, how, kind, command
):
    if command == "report":
        pytest.importorskip("matplotlib")
    mipr, m2kr = data_copies
    folder = tmp_path_factory.mktemp("out")
    source = special_target(kind, folder, mipr, m2kr)
    benchmark, data, run = ("m2kr", m2kr, M2KR_RUN) if kind == "an archive part" else ("mipr", mipr, None)
    run = run or mipr / "baseline" / MIPR_EMBEDDING.name
    with reached(how, source, folder) as target:
        if target is None:
            return  # a bind mount is not permitted here
        flag = "-o" if command == "report" else "--json"
        argv = [command, benchmark, run, flag, target, "--data-dir", data] + ["--queries", "1"] * (command == "report")
        before = digest(mipr), digest(m2kr)
        code = main(list(map(str, argv)))
        err = capsys.readouterr().err
        assert code == 1 and "Traceback" not in err, (how, kind, command, err)
        assert f"{flag} {target}: is " in err and "one of this command's inputs; write elsewhere." in err, err
        assert (digest(mipr), digest(m2kr)) == before and not (source.parent / "out.json").exists()


# --- damaged run records ------------------------------------------------------------------------------------------

JUNK = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=8),
        st.just("x" * 100_000),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


def sample_record() -> dict:
    from mmrhub.benchmarks import BENCHMARKS
    from mmrhub.records.provenance import options_record
    from mmrhub.retrieve.options import DataOptions
    from mmrhub.retrieve.options import RetrieveOptions
    from mmrhub.retrieve.options import RunOptions

    options = RetrieveOptions(
        DataOptions(BENCHMARKS["mipr"], str(MIPR_SAMPLE)), "org/tiny", runtime=RunOptions(num_workers=0)
    )
    return {"command": "retrieve", "run": "tiny.json", "model_id": "org/tiny", "options": options_record(options)}


def keys_of(record, prefix=()) -> list:
    """Every key path of a record: (key, ...) down to its leaves."""
    paths = []
    for key, value in record.items():
        paths.append((*prefix, key))
        if isinstance(value, dict):
            paths += keys_of(value, (*prefix, key))
    return paths


@st.composite
def damaged_record(draw) -> dict:
    """A record with a few of its keys removed, given values of other types or out of bounds (NaN, huge numbers and
    strings, nested junk), or joined by a key of junk."""
    record = sample_record()
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(keys_of(record)))
        holder = record
        for key in where[:-1]:
            holder = holder[key]
        action = draw(st.sampled_from(["remove", "replace", "replace", "add"]))
        if action == "remove":
            del holder[where[-1]]
        elif action == "replace":
            holder[where[-1]] = draw(JUNK)
        else:
            holder[draw(st.text(min_size=1, max_size=5))] = draw(JUNK)
    return record


@pytest.mark.slow
@settings(SETTINGS, max_examples=60)
@given(record=damaged_record())
def test_damaged_records_are_one_line_naming_the_record_never_a_traceback(
    capsys, tmp_path_factory, monkeypatch, record
):
    pytest.importorskip("torch")
    import mmrhub.retrieve.pipeline as pipeline

    reached = []
    monkeypatch.setattr(pipeline, "run", lambda options: reached.append(options) or 1)
    path = tmp_path_factory.mktemp("record") / "tiny.json.meta.json"
    path.write_text(json.dumps(record))  # NaN and Infinity as Python's json writes them
    started = time.monotonic()
    code = main(["rerun", str(path), "--output", str(path.parent / "again.json")])
    took = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 1 and took < SECONDS and "Traceback" not in err and not UNEXPECTED.search(err), err
    if reached:  # what is left is a record rerun may repeat: its values are what the flags would have given
        options = reached[0]
        assert 0 <= options.runtime.num_workers <= 1024 and 0.0 <= options.text_weight <= 1.0, options
        assert isinstance(options.model, str) and isinstance(options.settings.max_length, (int, type(None)))
    else:
        assert len(err.splitlines()) == 1 and err.startswith(f"mmrhub rerun: error: {path}: "), err


# --- tables without rows -----------------------------------------------------------------------------------------


@settings(SETTINGS, max_examples=12)
@given(
    table=st.sampled_from(["mipr_annotation.jsonl", "mipr_query.jsonl", "mipr_corpus.jsonl", *M2KR_CONFIGS]),
    blank=st.sampled_from(["", "\n", "\n\n  \n", "\r\n"]),
    command=st.sampled_from(["evaluate", "info"]),
)
def test_tables_without_rows_are_refused_alike_by_scoring_and_the_builders(
    capsys, tmp_path_factory, table, blank, command
):
    folder = tmp_path_factory.mktemp("empty") / "data"
    if table in M2KR_CONFIGS:
        shutil.copytree(M2KR_SAMPLE, folder, ignore=shutil.ignore_patterns("*.zip*"))
        path = next((folder / table).glob("train-*.parquet"))
        schema = pq.read_schema(path)
        pq.write_table(schema.empty_table(), path)  # the blank text has no meaning for Parquet
        benchmark, run = "m2kr", folder / "baseline" / M2KR_RUN.name
    else:
        shutil.copytree(MIPR_SAMPLE, folder, ignore=shutil.ignore_patterns("images"))
        path = folder / table
        path.write_text(blank)
        benchmark, run = "mipr", folder / "baseline" / MIPR_EMBEDDING.name
    argv = ["evaluate", benchmark, run] if command == "evaluate" else ["info", benchmark, "--no-check-images"]
    before = digest(folder)
    assert main([*map(str, argv), "--data-dir", str(folder)]) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith(f"mmrhub {command}: error: {path}: no r"), last
    assert "has at least one; the file was written empty or cut short." in last
    assert digest(folder) == before


# --- Ctrl-C at random moments ------------------------------------------------------------------------------------


@pytest.mark.slow
@settings(SETTINGS, max_examples=4)
@given(delay=st.floats(0.0, 1.6), command=st.sampled_from(["evaluate", "oracle", "info"]))
def test_ctrl_c_at_a_random_moment_exits_130_with_one_line_or_finishes(delay, command):
    argv = {"evaluate": [command, "mipr", MIPR_EMBEDDING], "oracle": [command, "mipr", MIPR_EMBEDDING]}.get(
        command, [command, "mipr"]
    )
    code, out, err = interrupted(argv, delay)
    done = code == 0 and ("| System |" in out or "rows" in out)
    assert done or (code, err) == (130, "mmrhub: interrupted\n"), (delay, command, code, err)


@pytest.mark.slow
@settings(SETTINGS, max_examples=8)
@given(delay=st.floats(0.0, 0.15))
def test_ctrl_c_in_the_first_tenths_of_a_second_exits_130_with_one_line(delay):
    # from the interpreter's start, as the console script runs the command: the imports of the command included
    code, out, err = interrupted(["evaluate", "mipr", MIPR_EMBEDDING], delay, from_start=True)
    done = code == 0 and "| System |" in out
    # Python's own start-up (site, the console script's first imports) comes before any code of ours can run
    before_mmrhub = code in (1, -signal.SIGINT) and "/mmrhub/" not in err and "mmrhub: " not in err
    assert done or before_mmrhub or (code, err) == (130, "mmrhub: interrupted\n"), (delay, code, err)


@pytest.mark.slow
@settings(SETTINGS, max_examples=6)
@given(delay=st.floats(0.0, 8.0))
def test_ctrl_c_at_a_random_moment_of_report_exits_130_and_writes_no_page(tmp_path_factory, delay):
    pytest.importorskip("matplotlib")
    page = tmp_path_factory.mktemp("report") / "page.html"
    code, out, err = interrupted(["report", "mipr", MIPR_EMBEDDING, "-o", page, "--queries", "2"], delay)
    if code == 0:
        assert page.is_file() and "wrote" in out, (delay, err)
    else:
        assert code == 130 and err.endswith("mmrhub: interrupted\n"), (delay, code, err)
        assert not re.search("Traceback|Exception ignored|Error", err) and not page.exists(), (delay, err)
        assert not list(page.parent.iterdir()), (delay, list(page.parent.iterdir()))  # no temporary left


# --- metric-module arguments of wrong types and shapes -----------------------------------------------------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 2000),
    st.floats(allow_nan=True),
    st.text(max_size=4),
    st.binary(max_size=3),
)
SHAPES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.tuples(inner), max_leaves=8)


def valid_cutoffs(k) -> bool:
    def cutoff(value):
        return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 1000

    return cutoff(k) or (isinstance(k, (list, tuple)) and len(k) > 0 and all(map(cutoff, k)))


def valid_rankings(predictions) -> bool:
    return (
        isinstance(predictions, (list, tuple))
        and len(predictions) == 1
        and isinstance(predictions[0], (list, tuple))
        and all(isinstance(item, str) for item in predictions[0])
    )


@pytest.fixture(scope="module")
def metric_modules():
    import evaluate

    from mmrhub.metrics import METRICS

    return {name: evaluate.load(str(METRICS / name)) for name in ("mipr", "m2kr")}


@pytest.mark.slow
@settings(SETTINGS, max_examples=40)
@given(
    name=st.sampled_from(["mipr", "m2kr"]),
    k=st.one_of(SHAPES, st.lists(st.integers(-2, 1200), max_size=3)),
    per_query=SCALARS,
    variants=st.one_of(SHAPES, st.lists(st.sampled_from(["recall", "hit", "strict", "mrr"]), max_size=3)),
    predictions=st.one_of(SHAPES, st.lists(st.lists(st.text(max_size=2), max_size=3), min_size=1, max_size=1)),
)
def test_metric_arguments_of_wrong_types_and_shapes(metric_modules, name, k, per_query, variants, predictions):
    columns = {"references": [["a"]]} | ({"grades": [["L1"]], "categories": [["x"]]} if name == "mipr" else {})
    options = {"k": k, "per_query": per_query} | ({"variants": variants} if name == "m2kr" else {})
    known = {"recall", "hit", "strict"}
    valid = {
        "predictions": valid_rankings(predictions),
        "k": valid_cutoffs(k),
        "per_query": isinstance(per_query, bool),
        "variants": name == "mipr"
        or (isinstance(variants, (list, tuple)) and len(variants) > 0 and all(v in known for v in variants)),
    }
    try:
        result = metric_modules[name].compute(predictions=predictions, **columns, **options)
    except ValueError as err:
        assert not all(valid.values()), err
        named = [argument for argument, ok in valid.items() if not ok]
        assert any(str(err).startswith(f"{argument}: ") for argument in named) or "predictions" in named, str(err)
        return
    assert all(valid.values()), (valid, result)
    assert all(
        value is None or 0.0 <= value <= 1.0
        for key, value in result.items()
        if key != "per_query" and isinstance(value, float)
    )
