"""The run formats researchers' tools write: the official JSON, dict JSON (ranx, pytrec_eval), TREC in trec_eval's
order, the Kaggle CSV, and standard input; ties are broken as trec_eval (through pytrec_eval) breaks them."""

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _cli import run_cli

pytrec_eval = pytest.importorskip("pytrec_eval")

from _metrics_helpers import GAIN  # noqa: E402
from _paths import ROOT  # noqa: E402

from mmrhub.scoring.runs.reading import read_run  # noqa: E402
from mmrhub.scoring.runs.run import FORMATS  # noqa: E402
from mmrhub.scoring.runs.run import RunError  # noqa: E402

MIPR_DIR = ROOT / "data" / "mipr"
EMBEDDING = MIPR_DIR / "baseline" / "simulated_embedding_top50.json"
# ids whose byte order tells strcmp from other orders: case, digits, punctuation, multi-byte UTF-8
IDS = ["a", "B", "b", "doc1", "doc10", "doc2", "Doc2", "-x", "_y", "z9", "é", "ñ1", "中文", "中", "Z"]
SCORES = [1.0, 0.5, 0.5, 0.25, 2, 0.1, 0.1 + 1e-12, -1.0]  # ties, an int, and two equal in single precision


def scored(capsys, tmp_path, *argv) -> list:
    """``mmrhub evaluate mipr ARGV --json``: each row's (aggregate, per-query values)."""
    out = tmp_path / f"scores{random.random()}.json"
    code, _, err = run_cli(capsys, "evaluate", "mipr", *argv, "--json", out)
    assert code == 0, err
    return [(run["aggregate"], run["per_query"]) for run in json.loads(out.read_text())["runs"]]


def embedding_in_trec_eval_order() -> list:
    """The bundled embedding run, each query in trec_eval's order (float32 score, then docid, descending)."""
    entries = json.loads(EMBEDDING.read_text())
    for entry in entries:
        entry["ranked"].sort(key=lambda item: (np.float32(item["score"]), item["did"]), reverse=True)
    return entries


def as_dict(entries) -> dict:
    return {entry["qid"]: {item["did"]: item["score"] for item in entry["ranked"]} for entry in entries}


def trec_lines(run: dict, rank=None) -> list:
    """TREC lines of a dict run; ``rank(position)`` writes the rank column (default: the position, from 1)."""
    return [
        f"{qid} Q0 {did} {rank(r) if rank else r} {score!r} tag"
        for qid, docs in run.items()
        for r, (did, score) in enumerate(docs.items(), 1)
    ]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def trec_eval_order(run: dict) -> dict:
    """Each query's documents in the order trec_eval ranks them, read back from pytrec_eval: one query per
    document with only that document relevant, whose reciprocal rank is 1 / its position."""
    keys = {(qid, did): f"{qid}|{did}" for qid, docs in run.items() for did in docs}
    qrels = {key: {did: 1} for (_, did), key in keys.items()}
    runs = {key: run[qid] for (qid, _), key in keys.items()}
    found = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(runs)
    position = {pair: round(1 / found[key]["recip_rank"]) for pair, key in keys.items()}
    return {qid: sorted(docs, key=lambda did: position[qid, did]) for qid, docs in run.items()}


def tied_run(seed: int) -> dict:
    rng = random.Random(seed)
    return {
        f"q{q}": {did: rng.choice(SCORES) for did in rng.sample(IDS, rng.randrange(2, len(IDS)))} for q in range(30)
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ties_are_broken_as_trec_eval_breaks_them(tmp_path, seed):
    run = tied_run(seed)
    expected = trec_eval_order(run)
    assert any(list(run[q]) != expected[q] for q in run)  # the data do need the sort
    rng = random.Random(seed)
    lines = trec_lines(run, rank=lambda r: rng.randrange(100))
    rng.shuffle(lines)
    for path in (write(tmp_path / "run.json", json.dumps(run)), write(tmp_path / "run.trec", "\n".join(lines))):
        read = read_run(path)
        order = dict(zip(read.query_ids.to_pylist(), read.rankings.to_pylist()))
        assert order == expected, path


def test_a_file_already_in_trec_eval_order_is_used_as_it_is(monkeypatch, tmp_path):
    from mmrhub.scoring.runs import trec

    monkeypatch.setattr(trec, "trec_eval_sort", None)  # the usual file: grouped, scores strictly descending
    run = read_run(write(tmp_path / "run.trec", "q1 Q0 b 1 2.5 t\nq1 Q0 a 2 1 t\nq2 Q0 c 1 3 t\n"))
    assert run.rankings.to_pylist() == [["b", "a"], ["c"]] and run.lines.to_pylist() == [[1, 2], [3]]


def test_ndcg_of_a_tied_run_is_pytrec_evals(capsys, tmp_path):
    rng = random.Random(0)
    entries = json.loads(EMBEDDING.read_text())
    for entry in entries:  # scores to one decimal: ties at every cutoff, in a shuffled order
        rng.shuffle(entry["ranked"])
        for item in entry["ranked"]:
            item["score"] = round(item["score"], 1)
    judgments = [json.loads(line) for line in (MIPR_DIR / "mipr_annotation.jsonl").read_text().splitlines()]
    qrels = {
        row["idx"]: {item["item_id"]: GAIN.get(item["final_grade"], 0) for item in row["items"]} for row in judgments
    }
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10"}).evaluate(as_dict(entries))
    lines = trec_lines(as_dict(entries), rank=lambda r: 0)
    rng.shuffle(lines)
    files = (
        write(tmp_path / "tied.json", json.dumps(entries)),
        write(tmp_path / "tied_dict.json", json.dumps(as_dict(entries))),
        write(tmp_path / "tied.trec", "\n".join(lines)),
    )
    (_, as_listed), (_, by_dict), (_, by_trec) = scored(capsys, tmp_path, *files, "--k", "10")
    for qid, values in trec.items():
        assert by_dict[qid]["nDCG@10"] == pytest.approx(values["ndcg_cut_10"], abs=1e-12)
        assert by_trec[qid]["nDCG@10"] == pytest.approx(values["ndcg_cut_10"], abs=1e-12)
    # the official JSON's list is its ranking: read as listed, not re-sorted
    assert any(as_listed[qid]["nDCG@10"] != pytest.approx(values["ndcg_cut_10"]) for qid, values in trec.items())


def test_the_four_formats_score_identically(capsys, tmp_path):
    entries = embedding_in_trec_eval_order()
    lines = trec_lines(as_dict(entries))
    kaggle = "".join(
        f'{e["qid"]},"{json.dumps([i["did"] for i in e["ranked"]]).replace(chr(34), 2 * chr(34))}"\n' for e in entries
    )
    files = [
        write(tmp_path / "official.json", json.dumps(entries)),
        write(tmp_path / "ranx.json", json.dumps(as_dict(entries), indent=4)),  # ranx's Run.save("x.json")
        write(tmp_path / "run.trec", "\n".join(reversed(lines)) + "\n"),
        write(tmp_path / "submission.csv", "question_id,passage_id\n" + kaggle),
    ]
    rows = scored(capsys, tmp_path, *files, "--k", "1,5,10,50")
    assert [read_run(path).format for path in files] == ["json", "dict", "trec", "kaggle"]
    assert all(row == rows[0] for row in rows[1:])
    assert rows[0] == scored(capsys, tmp_path, EMBEDDING, "--k", "1,5,10,50")[0]  # its one tie is below 10


def test_a_constant_rank_column_is_ignored(capsys, tmp_path):
    lines = trec_lines(as_dict(embedding_in_trec_eval_order()), rank=lambda r: 0)
    random.Random(1).shuffle(lines)
    run = write(tmp_path / "constant.trec", "\n".join(lines))
    code, _, err = run_cli(capsys, "evaluate", "mipr", run)
    assert code == 0 and "rank column" not in err  # a constant column agrees with any order
    assert scored(capsys, tmp_path, run) == scored(capsys, tmp_path, EMBEDDING)
    code, _, err = run_cli(capsys, "evaluate", "mipr", run, "--trec-order", "rank")
    assert code == 1 and re.search(rf"{run}: line \d+: query '\d+' has rank 0 twice \(--trec-order rank\)", err), err


def test_trec_order_rank_follows_the_rank_column(capsys, tmp_path):
    entries = json.loads(EMBEDDING.read_text())
    for entry in entries:  # scores that say the opposite of the listed order
        for rank, item in enumerate(entry["ranked"], 1):
            item["score"] = rank
    lines = [f"{e['qid']} Q0 {i['did']} {r} {i['score']} t" for e in entries for r, i in enumerate(e["ranked"], 1)]
    random.Random(2).shuffle(lines)
    run = write(tmp_path / "reversed_scores.trec", "\n".join(lines))
    assert scored(capsys, tmp_path, run, "--trec-order", "rank") == scored(capsys, tmp_path, EMBEDDING)
    for entry in entries:
        entry["ranked"].reverse()
    listed_by_score = write(tmp_path / "by_score.json", json.dumps(entries))
    assert scored(capsys, tmp_path, run) == scored(capsys, tmp_path, listed_by_score)


def test_integer_ids_are_read_as_strings(capsys, tmp_path):
    path = write(tmp_path / "ints.json", json.dumps([{"qid": 7, "ranked": [{"did": 12, "score": 1}, {"did": "a"}]}]))
    run = read_run(path)
    assert run.query_ids.to_pylist() == ["7"] and run.rankings.to_pylist() == [["12", "a"]]
    entries = json.loads(EMBEDDING.read_text())
    numbered = write(tmp_path / "numbered.json", json.dumps([dict(e, qid=int(e["qid"])) for e in entries]))
    assert scored(capsys, tmp_path, numbered) == scored(capsys, tmp_path, EMBEDDING)


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"qid": 7.0, "ranked": []}, 'entry 1: "qid" must be a string or an integer, got 7.0'),
        ({"qid": True, "ranked": []}, 'entry 1: "qid" must be a string or an integer, got True'),
        (
            {"qid": 7, "ranked": [{"did": "a"}, {"did": 1.5}]},
            'entry 1 (query \'7\') position 2: expected {"did": "<id>", "score": <number>}, got {\'did\': 1.5}',
        ),
    ],
)
def test_an_id_that_is_not_a_string_or_an_integer_is_named(tmp_path, entry, message):
    path = write(tmp_path / "run.json", json.dumps([entry]))
    with pytest.raises(RunError) as raised:
        read_run(path)
    assert f"{path}: {message} (read as the official JSON" in str(raised.value)


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '{"1": {"a": 1.0}, "2": {"b": "high"}}',
            "entry 2 (query '2') document 'b': expected a number as its score, got 'high'",
        ),
        ('{"1": {"a": true}}', "entry 1 (query '1') document 'a': expected a number as its score, got True"),
        ('{"1": ["a", "b"]}', "entry 1 (query '1'): expected an object {did: score}, got list"),
        ('{"1": {"a": 1.0},\n "2": {"b": 1.0,}}', "line 2, column 17, byte offset 34: not valid JSON"),
        ('{"qid": "1", "ranked": []}', 'one {"qid", "ranked"} object; the official format is a JSON array of them'),
    ],
)
def test_dict_run_errors_name_the_entry(tmp_path, text, message):
    path = write(tmp_path / "run.json", text)
    with pytest.raises(RunError) as raised:
        read_run(path)
    assert f"{path}: {message}" in str(raised.value)
    assert "(read as a dict run as ranx and pytrec_eval write it" in str(raised.value)


def evaluate_stdin(data: bytes, *argv):
    command = [sys.executable, "-m", "mmrhub.cli", "evaluate", "mipr", *map(str, argv)]
    return subprocess.run(command, input=data, capture_output=True)


def test_a_run_from_standard_input(tmp_path):
    lines = trec_lines(as_dict(embedding_in_trec_eval_order()))
    result = evaluate_stdin("\n".join(lines).encode(), "-", EMBEDDING, "--json", tmp_path / "s.json")
    assert result.returncode == 0, result.stderr.decode()
    piped, listed = json.loads((tmp_path / "s.json").read_text())["runs"]
    assert piped["name"] == "stdin" and piped["run"] == "<stdin>" and "| stdin |" in result.stdout.decode()
    assert piped["aggregate"] == listed["aggregate"] and piped["per_query"] == listed["per_query"]


def test_standard_input_errors_name_it(tmp_path):
    result = evaluate_stdin(b"1 Q0 abc 1 0.5 t\n1 Q0 def 2 0.4\n", "-")
    assert result.returncode == 1
    assert "<stdin>: line 2: expected 6 fields 'qid Q0 docid rank score tag', got 5" in result.stderr.decode()
    result = evaluate_stdin(EMBEDDING.read_bytes(), "-", "-")
    assert result.returncode == 1 and "standard input ('-') can be read once" in result.stderr.decode()


@pytest.mark.parametrize(
    "cell",
    [
        '["a"], "x": 1',  # more than a list: a field beside the ids of the line's object pyarrow reads
        '["a"]}{"ids": ["b"]',  # two lists: two objects on the line pyarrow reads
    ],
)
def test_a_kaggle_cell_that_is_more_than_one_json_list_is_named_by_its_line(tmp_path, cell):
    quoted = cell.replace('"', '""')
    path = write(tmp_path / "submission.csv", f'question_id,passage_id\n1,"[""c""]"\n2,"{quoted}"\n3,"[""d""]"\n')
    with pytest.raises(RunError) as raised:
        read_run(path)
    assert str(raised.value) == (
        f"{path}: line 3: passage_id must be a JSON list of ids, got {cell!r} (read as {FORMATS['kaggle']})"
    )


@pytest.mark.parametrize(
    "tail",
    [
        ', "x": 1',  # members after the array: once passed over as members of the reader's own wrapping
        ', "x": []',
        ", []",  # a second array
        ' {"qid": "2", "ranked": []}',
    ],
)
def test_text_after_a_json_run_is_refused_with_its_place(tmp_path, tail):
    run = '[{"qid": "1", "ranked": [{"did": "a", "score": 1.0}]}]'
    path = write(tmp_path / "run.json", run + tail + "\n")
    with pytest.raises(RunError) as raised:
        read_run(path)
    at = len(run) + len(tail) - len(tail.lstrip())  # Python's json names the first byte after the run's array
    assert str(raised.value).startswith(
        f"{path}: line 1, column {at + 1}, byte offset {at}: not valid JSON (Extra data: a second value here; "
        "expected one in the file)."
    )
    assert read_run(write(tmp_path / "clean.json", run + "\n")).query_ids.to_pylist() == ["1"]


def test_kaggle_ids_stripped_of_their_a_get_it_back_where_the_corpus_has_it(tmp_path):
    """Kaggle's scoring strips the 'A' of numeric passage ids (A27558 -> 27558): only an id the corpus lacks, all
    digits, whose 'A' form the corpus has, is restored; a run that needs nothing keeps its arrays."""
    import pyarrow as pa

    from mmrhub.scoring.runs.kaggle import restore_stripped_ids

    corpus = pa.array(["A27558", "A1", "A12", "9", "WIT_1"])
    path = tmp_path / "run.csv"
    path.write_text(
        'question_id,passage_id\nq1,"[""27558"", ""A1"", ""9"", ""77""]"\nq2,"[""12"", ""WIT_1"", ""x1""]"\n'
    )
    run = restore_stripped_ids(read_run(str(path)), corpus)
    assert run.rankings.to_pylist() == [["A27558", "A1", "9", "77"], ["A12", "WIT_1", "x1"]]
    path.write_text('question_id,passage_id\nq1,"[""A1"", ""9""]"\nq2,"[""77""]"\n')
    run = read_run(str(path))
    kept = run.rankings
    assert restore_stripped_ids(run, corpus).rankings is kept
