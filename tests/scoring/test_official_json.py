"""An official JSON run parsed in pieces, one per core: the same run as when parsed whole, and every file that the
whole parse refuses refused alike (the pieces then fall back to it)."""

import json

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from mmrhub.scoring.runs import official_json
from mmrhub.scoring.runs.reading import read_run
from mmrhub.scoring.runs.run import RunError

READ_IN_PIECES = official_json._read_in_pieces


def entries(count: int = 40, depth: int = 5) -> list:
    return [
        {"qid": str(q), "ranked": [{"did": f"d{q}-{r}", "score": round(1 - r / depth, 3)} for r in range(depth)]}
        for q in range(count)
    ]


def read(path, monkeypatch, pieces: bool):
    """``read_run(path)`` with small pieces (a few entries each, two workers), or parsed whole; and whether the
    pieces were what was read."""
    monkeypatch.setattr(official_json, "_PIECE_BYTES", 300 if pieces else 1 << 40)
    monkeypatch.setattr(official_json, "_WORKERS", 2)
    used = []  # stays empty where the file is refused before it is parsed (not text, not JSON)
    monkeypatch.setattr(official_json, "_read_in_pieces", lambda s, b: used.append(READ_IN_PIECES(s, b)) or used[-1])
    try:
        return read_run(path), bool(used) and used[0] is not None
    except RunError as err:
        return str(err), bool(used) and used[0] is not None


def same_run(a, b) -> bool:
    return a.query_ids.equals(b.query_ids) and a.rankings.equals(b.rankings) and a.scores.equals(b.scores)


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(entries()),
        json.dumps(entries(), indent=2),  # "},\n  {" between entries
        json.dumps(entries(), separators=(",", ":")),
        "\n [ " + json.dumps(entries())[1:-1] + " ] \n\n",
        json.dumps([{"ranked": e["ranked"], "qid": e["qid"]} for e in entries()]),  # "ranked" first
    ],
    ids=["json.dumps", "indented", "compact", "spaces around", "ranked first"],
)
def test_pieces_give_the_run_the_whole_parse_gives(tmp_path, monkeypatch, text):
    path = tmp_path / "run.json"
    path.write_text(text)
    whole, used = read(path, monkeypatch, pieces=False)
    assert not used
    pieces, used = read(path, monkeypatch, pieces=True)
    assert used and same_run(pieces, whole)
    assert pieces.query_ids.to_pylist() == [str(q) for q in range(40)]
    assert pieces.rankings[39].as_py() == [f"d39-{r}" for r in range(5)]


def test_a_cut_inside_an_entry_falls_back_to_the_whole_parse(tmp_path, monkeypatch):
    run = entries()
    for entry in run:  # a field outside the format whose objects look like entries: cuts land inside it
        entry["notes"] = [{"qid": "x", "ranked": []}, {"qid": "y"}] * 3
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run))
    whole, _ = read(path, monkeypatch, pieces=False)
    pieces, used = read(path, monkeypatch, pieces=True)
    assert same_run(pieces, whole) and whole.rankings[0].as_py()[0] == "d0-0"


def hostile(text: str) -> str:
    """Damage in the middle of a run long enough for several pieces."""
    middle = len(text) // 2
    cut = text.index('}, {"qid"', middle) + 1
    return text[:cut] + text[cut:].replace('"qid"', '"qid": "z", "qid"', 1)


@pytest.mark.parametrize(
    "make",
    [
        lambda t: t + ", 5",  # a second value after the run
        lambda t: t[:-1] + ', "x": 1]',
        lambda t: t[: len(t) // 2] + "}, {" + t[len(t) // 2 :],  # broken JSON in a middle piece
        lambda t: t.replace('"score": 0.8}, {"did"', '"score": 0.8},, {"did"', 1),
        lambda t: t.replace('"qid": "21"', '"qid": 21', 1),  # a number for an id: read again by Python
        lambda t: t.replace('"did": "d30-2"', '"did": null', 1),
        lambda t: t.replace('}, {"qid": "25"', '}\f, {"qid": "25"', 1),  # \f is not JSON whitespace
        lambda t: t.replace('}, {"qid": "25"', "}, " + " " * 40 + '{"qid": "25"', 1),  # too long a separator
        lambda t: t.replace('"d12-1"', '"d12-1\\u00e9\\""', 1),
        hostile,  # a key twice in one object
        lambda t: t.replace('"score": 0.6', '"score": "0.6"', 1),
    ],
    ids=[
        "second value",
        "member after",
        "broken middle",
        "double comma",
        "number id",
        "null id",
        "form feed",
        "long separator",
        "escapes",
        "repeated key",
        "string score",
    ],
)
def test_every_file_is_read_or_refused_as_the_whole_parse_does(tmp_path, monkeypatch, make):
    path = tmp_path / "run.json"
    path.write_text(make(json.dumps(entries())))
    whole, _ = read(path, monkeypatch, pieces=False)
    pieces, _ = read(path, monkeypatch, pieces=True)
    if isinstance(whole, str):
        assert pieces == whole and whole.startswith(f"{path}: ")
    else:
        assert same_run(pieces, whole) and pieces.problems == whole.problems


@pytest.mark.parametrize(
    "make",
    [
        lambda t: t[:-1] + ']], "x": [[5]',
        lambda t: t.replace('}, {"qid": "20"', '}]], "x": [[{"qid": "20"', 1),  # would hide queries 20 to 39
    ],
    ids=["a key after the run", "a key inside the run"],
)
def test_text_that_closes_the_run_early_is_refused_whole_or_in_pieces(tmp_path, monkeypatch, make):
    path = tmp_path / "run.json"
    path.write_text(make(json.dumps(entries())))
    for pieces in (False, True):
        refusal, _ = read(path, monkeypatch, pieces)
        assert isinstance(refusal, str) and "not valid JSON" in refusal, refusal


# Bytes that move a comma, a bracket or a string's edge: what decides where an entry begins and ends.
TOKENS = [
    b",",
    b"}",
    b"{",
    b"[",
    b"]",
    b'"',
    b"\\",
    b"\n",
    b"\r",
    b"\t",
    b" ",
    b'"qid"',
    b'}, {"qid": "x", "ranked": [',
    b"\x00",
    b"\f",
]


@st.composite
def damaged_runs(draw) -> bytes:
    """The 40-entry run with a few edits: a token put in, a range taken out or repeated, a byte changed."""
    layout = draw(st.sampled_from([{}, {"separators": (",", ":")}, {"indent": 1}]))
    text = bytearray(json.dumps(entries(), **layout).encode())
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["insert", "delete", "repeat", "change"]))
        if kind == "insert":
            text[at:at] = draw(st.sampled_from(TOKENS))
        elif kind == "delete":
            del text[at : at + draw(st.integers(1, 40))]
        elif kind == "repeat":
            text[at:at] = text[at : at + draw(st.integers(1, 200))]
        elif at < len(text):
            text[at] = draw(st.sampled_from(TOKENS))[0]
    return bytes(text)


@settings(
    max_examples=600, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@pytest.mark.slow
@given(text=damaged_runs())
def test_damaged_runs_are_read_in_pieces_exactly_as_whole(tmp_path, monkeypatch, text):
    path = tmp_path / "run.json"
    path.write_bytes(text)
    whole, _ = read(path, monkeypatch, pieces=False)
    pieces, _ = read(path, monkeypatch, pieces=True)
    if isinstance(whole, str) or isinstance(pieces, str):
        assert pieces == whole
    else:
        assert same_run(pieces, whole) and pieces.problems == whole.problems
