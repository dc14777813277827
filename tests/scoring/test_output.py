"""What a table says besides its numbers: non-default readings, means over fewer queries, distinct row names, and
one line for a run of the other benchmark."""

import json
import shutil

import pytest
from _cli import run_cli
from _paths import ROOT

EMBEDDING = ROOT / "data" / "mipr" / "baseline" / "simulated_embedding_top50.json"
M2KR_RUN = ROOT / "data" / "m2kr" / "baseline" / "simulated_top5.json"


def test_defaults_add_no_reading_line(capsys):
    code, out, _ = run_cli(capsys, "evaluate", "mipr", EMBEDDING)
    assert code == 0 and "Options other than the defaults" not in out
    assert "_Means over fewer than the 27 scored queries: SC-R-L1@10* over 19._" in out


def test_non_default_readings_and_smaller_means_are_said(capsys, tmp_path):
    out_json = tmp_path / "scores.json"
    code, out, _ = run_cli(
        capsys, "evaluate", "mipr", EMBEDDING, "--no-l1", "skip", "--category", "leaf", "--json", out_json
    )
    assert code == 0
    assert "_Options other than the defaults: --no-l1 skip, --category leaf._" in out
    assert (
        "_Means over fewer than the 27 scored queries: R-L1@10 over 26, SC-R-L1@10 over 26, SC-R-L1@10* over 19._"
        in out
    )
    payload = json.loads(out_json.read_text(encoding="utf-8"))
    assert payload["non_default_readings"] == {"no_l1": "skip", "category": "leaf"}
    assert payload["runs"][0]["queries_averaged"] == {"R-L1@10": 26, "SC-R-L1@10": 26, "SC-R-L1@10*": 19}


def test_a_non_default_m2kr_variant_list_is_said(capsys):
    code, out, _ = run_cli(capsys, "evaluate", "m2kr", M2KR_RUN, "--variants", "recall,hit")
    assert code == 0 and "_Options other than the defaults: --variants recall,hit._" in out


def test_runs_with_the_same_stem_get_distinct_rows_and_a_note(capsys, tmp_path):
    (tmp_path / "b").mkdir()
    first, second = tmp_path / "run.json", tmp_path / "b" / "run.json"
    shutil.copy(EMBEDDING, first), shutil.copy(EMBEDDING, second)
    code, out, err = run_cli(capsys, "evaluate", "mipr", first, second)
    assert code == 0 and "| run | 59.89 |" in out and "| run (2) | 59.89 |" in out
    assert f"note: two runs are named 'run': {second} is the row 'run (2)'; pass --name." in err


def test_a_name_given_twice_is_refused(capsys, tmp_path):
    code, _, err = run_cli(capsys, "evaluate", "mipr", EMBEDDING, EMBEDDING, "--name", "x", "--name", "x")
    assert code == 1 and err == "mmrhub evaluate: error: --name 'x' is given twice: give each run its own name.\n"


@pytest.mark.parametrize(
    "benchmark, run, title, example", [("mipr", M2KR_RUN, "MIPR", "4100"), ("m2kr", EMBEDDING, "M2KR", "0")]
)
def test_a_run_of_the_other_benchmark_gets_one_line(capsys, benchmark, run, title, example):
    data_dir = ROOT / "data" / benchmark  # named: without a --data-dir the line names the sample instead
    code, _, err = run_cli(capsys, "evaluate", benchmark, run, "--data-dir", data_dir)
    assert code == 1 and err.count("\n") == 1
    first = json.loads(run.read_text())[0]["qid"] if run.suffix == ".json" else example
    assert f"is a query of {title}: is it a run of another benchmark?" in err and repr(first) in err
    assert "--ignore-unknown-queries" in err


def test_the_coverage_oracle_follows_the_category_readings():
    from mmrhub.benchmarks import MIPR
    from mmrhub.benchmarks import mipr as mipr_benchmark
    from mmrhub.scoring.request import ScoringRequest
    from mmrhub.scoring.score import load_truth
    from mmrhub.scoring.score import read_valid_run
    from mmrhub.scoring.score import score
    from mmrhub.scoring.score import score_runs

    readings = {"k": (10,), "category": "leaf", "covered_by": "judged"}
    request = ScoringRequest(
        MIPR, oracle=str(EMBEDDING), measure_options=readings, oracle_options={"order": "coverage"}
    )
    truth = load_truth(request)
    (row,) = score_runs(request, truth)
    rankings = read_valid_run(request, truth, EMBEDDING)[1]
    expected = mipr_benchmark.oracle(truth.judgments, rankings, "coverage", category="leaf", covered_by="judged")
    assert row.result == score(MIPR, truth, expected, readings)


MIPR_COLUMNS = [
    "SC-R-L1@k: fraction of the query's distinct L1 leaf categories covered by L1 items in the top k (--covered-by, "
    "--category, --no-l1).",
    "SC-R-L1@k*: SC-R-L1@k averaged only over queries with at least two L1 categories (2,664 in the real data).",
]
M2KR_COLUMNS = {
    "recall": "Recall-mean: mean of Recall@1, Recall@3, Recall@5: the M2KR track score (the Kaggle leaderboard "
    "averaged two tracks, MMDocIR and M2KR).",
    "hit": "Hit@k: 1 if any positive is in the top k (what FLMR calls Recall@K).",
    "strict": "StrictRecall@k: 1 only if all positives are in the top k.",
}


def test_unusual_columns_are_defined_under_the_first_table_that_shows_them(capsys):
    code, out, err = run_cli(capsys, "evaluate", "mipr", EMBEDDING, "--by-category", "--per-query")
    assert code == 0, err
    lines = out.splitlines()
    assert [line for line in lines if line.startswith("_SC-R-L1@k")] == [f"_{line}_" for line in MIPR_COLUMNS]
    first_table_end = lines.index("") - 1  # once, under the scores; the per-category and per-query tables follow
    assert lines[first_table_end + 1 : first_table_end + 5] == ["", f"_{MIPR_COLUMNS[0]}_", "", f"_{MIPR_COLUMNS[1]}_"]
    assert lines.index("simulated_embedding_top50:") > lines.index(f"_{MIPR_COLUMNS[1]}_")


@pytest.mark.parametrize("format", ["csv", "latex", "json"])
def test_the_text_formats_define_the_unusual_columns_in_their_notes(capsys, format):
    code, out, err = run_cli(capsys, "oracle", "mipr", EMBEDDING, "--format", format)
    assert code == 0 and "SC-R-L1@k" not in out  # stdout stays one table
    assert [line for line in err.splitlines() if line.startswith("note: SC-R-L1@k")] == [
        f"note: {line}" for line in MIPR_COLUMNS
    ]


@pytest.mark.parametrize("variants", ["recall", "hit", "strict", "recall,hit,strict", "hit,strict"])
def test_m2kr_defines_the_columns_of_the_variants_shown(capsys, variants):
    code, out, _ = run_cli(capsys, "evaluate", "m2kr", M2KR_RUN, "--variants", variants)
    assert code == 0
    expected = [f"_{M2KR_COLUMNS[variant]}_" for variant in M2KR_COLUMNS if variant in variants.split(",")]
    assert [
        line for line in out.splitlines() if line.split(":")[0].strip("_") in ("Recall-mean", "Hit@k", "StrictRecall@k")
    ] == expected


def test_compare_defines_the_unusual_measures_after_its_footnote(capsys):
    code, out, _ = run_cli(capsys, "compare", "mipr", EMBEDDING, EMBEDDING, "--permutations", "100")
    lines = out.splitlines()
    assert (
        code == 0
        and lines[-7].startswith("p: paired randomisation test")
        and lines[-6:-2]
        == [
            "",
            f"_{MIPR_COLUMNS[0]}_",
            "",
            f"_{MIPR_COLUMNS[1]}_",
        ]
    )


def test_every_footnoted_measure_is_one_the_metric_defines():
    from mmrhub.benchmarks import BENCHMARKS

    for benchmark in BENCHMARKS.values():
        assert benchmark.footnoted and set(benchmark.footnoted) <= set(benchmark.measures.DEFINITIONS)
