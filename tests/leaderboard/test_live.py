"""The board a Space holds, without its page: the entries' labels and letters are ``mmrhub compare``'s for the same
runs in the same order; an upload is scored as ``mmrhub evaluate`` scores the file and compared with every entry as
``mmrhub compare`` of the entries and the upload, last; a run's record is summarised; and what an upload cannot be
(too large before or after decompression, packed, not text, malformed, of the other benchmark, a name taken) is
said in a line per problem naming the file as uploaded, never the server's temporary path."""

import bz2
import gzip
import json
import shutil
import zipfile

import pytest
from _leaderboard_helpers import compare_summary
from _leaderboard_helpers import evaluate_cells
from _leaderboard_helpers import swapped_run
from _paths import M2KR_RUN
from _paths import MIPR_EMBEDDING
from _paths import MIPR_RERANKED

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.cli import main
from mmrhub.leaderboard.live import LiveBoard
from mmrhub.leaderboard.live import UploadError
from mmrhub.records.provenance import options_record
from mmrhub.retrieve.options import DataOptions
from mmrhub.retrieve.options import OutputOptions
from mmrhub.retrieve.options import RetrieveOptions
from mmrhub.retrieve.options import RunOptions

MIPR = BENCHMARKS["mipr"]


@pytest.fixture(scope="module")
def live(board):
    return LiveBoard(MIPR, board)


def shown_cells(standings, entry) -> list:
    """A row's cells as compare's summary prints them: the value, then ' >' and the labels it is above."""
    cells = []
    for measure in standings.measures:
        value = entry.result[measure]
        letters = standings.letters.get((entry.name, measure), [])
        cells.append(f"{100 * value:.2f}" + (f" >{','.join(letters)}" if letters else ""))
    return cells


def by_file(runs) -> dict:
    return {path.name: path for path in runs}


def test_the_board_s_letters_are_compare_s(capsys, live, runs):
    standings = live.standings
    ordered = [by_file(runs)[entry.run["file"]] for entry in standings.entries]
    summary = compare_summary(capsys, "mipr", ordered)
    assert [entry.name for entry in standings.entries] == list(summary)  # ranked by nDCG@10, best first
    for entry, label in zip(standings.entries, standings.labels):
        assert summary[entry.name] == (label, shown_cells(standings, entry))
    assert any(standings.letters.values())  # the sample's reranked run is above the embedding run on some measure


def test_an_upload_is_scored_as_evaluate_and_compared_as_compare(capsys, live, runs, tmp_path):
    upload = runs[3]
    uploaded = live.score(upload, "swapped_reranker.json")
    entry = uploaded.entry
    assert entry.name == "swapped_reranker" and uploaded.standings.label(entry.name) == "d"
    assert [e.name for e in uploaded.standings.entries[:3]] == [e.name for e in live.standings.entries]
    evaluated = evaluate_cells(capsys, "mipr", [upload])["swapped_reranker"]
    assert [f"{100 * entry.result[m]:.2f}" for m in uploaded.standings.measures] == evaluated
    ordered = [by_file(runs)[e.run["file"]] for e in live.standings.entries] + [upload]
    summary = compare_summary(capsys, "mipr", ordered)
    for row, label in zip(uploaded.standings.entries, uploaded.standings.labels):
        assert summary[row.name] == (label, shown_cells(uploaded.standings, row))
    assert uploaded.data["run"]["file"] == "swapped_reranker.json" and live.names == {
        e.name for e in live.standings.entries
    }  # the board itself is unchanged


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress])
def test_a_compressed_upload_scores_as_the_plain_file(live, tmp_path, compress):
    packed = tmp_path / "run.json.z"
    packed.write_bytes(compress(MIPR_RERANKED.read_bytes()))
    plain = live.score(MIPR_RERANKED, "plain.json").entry
    squeezed = live.score(packed, "mine.json.gz").entry
    assert squeezed.name == "mine" and squeezed.result == plain.result
    assert squeezed.run["file"] == "mine.json.gz" and squeezed.run["sha256"] != plain.run["sha256"]


def said(live, path, shown, name="") -> str:
    with pytest.raises(UploadError) as raised:
        live.score(path, shown, name)
    message = str(raised.value)
    assert "mmrhub-upload-" not in message  # the server's temporary folder is never named
    return message


def test_what_an_upload_cannot_be_is_said_naming_it(live, tmp_path):
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('[{"qid": "1", "ranked": [}]')
    assert said(live, bad_json, "bad.json") == (
        "bad.json: line 1, column 26, byte offset 25: not valid JSON (Expecting value). (read as the official JSON "
        '([{"qid": ..., "ranked": [{"did": ..., "score": ...}]}]))'
    )
    archive = tmp_path / "run.zip"
    with zipfile.ZipFile(archive, "w") as packed:
        packed.write(MIPR_EMBEDDING, "run.json")
    assert said(live, archive, "run.zip") == "run.zip: a zip archive: unzip it first."
    binary = tmp_path / "bin"
    binary.write_bytes(b"\x00\x01pickle")
    assert said(live, binary, "model.pkl").startswith("model.pkl: line 1, byte offset 0: a NUL byte")
    other = said(live, M2KR_RUN, "simulated_top5.json")
    assert other.startswith("simulated_top5.json: none of its 30 queries (e.g. '4100') is a query of MIPR")
    assert "\n" not in other
    assert "is on the board already" in said(live, MIPR_EMBEDDING, "x.json", "simulated_embedding_top50")
    assert said(live, MIPR_EMBEDDING, "x.json", "a\tb").startswith("the entry's name 'a\\tb' is not a name")


def test_an_upload_is_capped_as_sent_and_once_decompressed(board, tmp_path):
    capped = shutil.copytree(board, tmp_path / "board")
    settings = json.loads((capped / "board.json").read_text())
    settings.update(max_upload_bytes=50_000, max_decoded_bytes=200_000)
    (capped / "board.json").write_text(json.dumps(settings))
    live = LiveBoard(MIPR, capped)
    size = MIPR_EMBEDDING.stat().st_size
    assert said(live, MIPR_EMBEDDING, "big.json") == (
        f"big.json: {size:,} bytes; this board takes runs of at most 50,000 bytes (compress the run with gzip, bz2 "
        "or xz)."
    )
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b"[" + b" " * 10_000_000 + b"]"))
    assert bomb.stat().st_size < 50_000
    assert (
        said(live, bomb, "bomb.json.gz")
        == "bomb.json.gz: decompresses to more than 200,000 bytes; expected at most that."
    )
    fits = tmp_path / "fits.json.gz"
    fits.write_bytes(gzip.compress(MIPR_EMBEDDING.read_bytes()))
    assert fits.stat().st_size < 50_000 and size < 200_000
    assert live.score(fits, "fits.json.gz").entry.name == "fits"


def test_validation_lists_each_problem_on_its_own_line(live, tmp_path):
    entries = json.loads(MIPR_EMBEDDING.read_text())
    entries[0]["ranked"][0]["did"] = "<script>alert(1)</script>"
    entries[1]["ranked"][1]["did"] = entries[1]["ranked"][0]["did"]
    del entries[2]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(entries))
    lines = said(live, path, "broken.json").splitlines()
    assert lines[0] == "broken.json does not fit the benchmark: 3 problem(s):"
    assert lines[1] == "  query '1' position 1 (entry 1): '<script>alert(1)</script>' is not in the corpus"
    assert lines[2].startswith("  query '2' position 2 (entry 2): ") and lines[2].endswith("already at position 1")
    assert lines[3] == "  query '3': missing from the run"


def record_of(run_name: str, **fields) -> dict:
    data = DataOptions(MIPR, data_dir="/data/mipr")
    options = RetrieveOptions(data, "org/tiny", runtime=RunOptions(num_workers=0), output=OutputOptions(path=run_name))
    return {
        "command": "retrieve",
        "run": run_name,
        "model_id": "org/tiny",
        "model": {"backend": "transformers", "model": {"id": "org/tiny", "revision": "main", "commit": "c" * 40}},
        "random_weights": False,
        "preset": "qwen3-vl-embedding",
        "settings": {},
        "versions": {"torch": "2.13.0", "numpy": "2.4.6", "mmrhub": "0.1.0"},
        "options": options_record(options),
        "device": "cuda:0",
        "device_name": "NVIDIA H200",
        "dtype": "torch.bfloat16",
        "command_line": ["mmrhub", "retrieve", "mipr", "--model", "org/tiny", "--name", "<b>x</b>"],
        **fields,
    }


def test_a_record_uploaded_with_the_run_is_summarised(live, tmp_path):
    record = tmp_path / "rec.json"
    record.write_text(json.dumps(record_of("mine.json")))
    entry = live.score(MIPR_RERANKED, "mine.json", "", str(record)).entry
    summary = entry.record
    assert {key: summary[key] for key in ("command", "model", "revision", "commit", "preset", "dtype", "device")} == {
        "command": "retrieve",
        "model": "org/tiny",
        "revision": "main",
        "commit": "c" * 40,
        "preset": "qwen3-vl-embedding",
        "dtype": "torch.bfloat16",
        "device": "NVIDIA H200",
    }
    assert summary["rerun"] is True and summary["random_weights"] is False
    assert summary["versions"] == {"torch": "2.13.0", "numpy": "2.4.6", "mmrhub": "0.1.0"}
    assert summary["command_line"] == "mmrhub retrieve mipr --model org/tiny --name '<b>x</b>'"
    assert len(summary["record_sha256"]) == 64
    # an mteb record is summarised too, but rerun does not make mteb runs
    record.write_text(json.dumps({"command": "mteb", "run": "m.json", "model_name": "org/clip", "mteb_version": "2.1"}))
    summary = live.score(MIPR_RERANKED, "m.json", "", str(record)).entry.record
    assert summary["model"] == "org/clip" and summary["mteb"] == "2.1" and summary["rerun"] is False
    # a record of another file says nothing of this one
    record.write_text(json.dumps(record_of("other.json")))
    uploaded = live.score(MIPR_RERANKED, "third.json", "", str(record))
    assert uploaded.entry.record is None
    assert any("rec.json" not in note and "is the record of 'other.json', not of third.json" in note
               for note in uploaded.data["notes"])  # fmt: skip
    record.write_text("{not json")
    assert "third.json.meta.json: line 1, column 2" in said_with_record(live, record)
    record.write_bytes(b"{" + b" " * (2 << 20) + b"}")
    assert (
        said_with_record(live, record)
        == "rec.json: 2,097,154 bytes; a run's record is a few kB (at most 1,048,576 here)."
    )


def said_with_record(live, record) -> str:
    with pytest.raises(UploadError) as raised:
        live.score(MIPR_RERANKED, "third.json", "", str(record))
    return str(raised.value)


def test_a_run_on_the_board_with_its_record(capsys, tmp_path):
    run = swapped_run(MIPR_EMBEDDING, tmp_path / "made.json")
    (tmp_path / "made.json.meta.json").write_text(json.dumps(record_of("made.json", random_weights=True)))
    board = tmp_path / "board"
    assert main(["leaderboard", "mipr", str(run), "-o", str(board)]) == 0
    entry = LiveBoard(MIPR, board).standings.entries[0]
    assert entry.record["random_weights"] is True and entry.record["rerun"] is True
    assert entry.record["model"] == "org/tiny"


def test_m2kr_takes_a_kaggle_csv_as_evaluate_does(capsys, tmp_path):
    board = tmp_path / "board"
    assert main(["leaderboard", "m2kr", str(M2KR_RUN), "-o", str(board)]) == 0
    kaggle = tmp_path / "submission.csv"
    rows = [
        (entry["qid"], json.dumps([item["did"] for item in entry["ranked"]]))
        for entry in json.loads(M2KR_RUN.read_text())
    ]
    kaggle.write_text(
        "question_id,passage_id\n" + "".join(f'{qid},"{ids.replace(chr(34), chr(34) * 2)}"\n' for qid, ids in rows)
    )
    live = LiveBoard(BENCHMARKS["m2kr"], board)
    uploaded = live.score(kaggle, "submission.csv")
    evaluated = evaluate_cells(capsys, "m2kr", [kaggle])["submission"]
    assert [f"{100 * uploaded.entry.result[m]:.2f}" for m in uploaded.standings.measures] == evaluated
    assert (
        uploaded.entry.run["format"] == "kaggle"
        and uploaded.entry.result["by_task"] == live.standings.entries[0].result["by_task"]
    )
