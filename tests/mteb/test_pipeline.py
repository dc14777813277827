"""``mmrhub mteb`` with mteb's random baseline encoder (offline) on the bundled samples: the run it writes has the
depth asked for and its metadata, the table it prints is the one ``mmrhub evaluate`` prints for that run, with
MTEB's main score beside it equal to the benchmark's by definition, and the caption says where they differ."""

import json

import pytest
from _cli import run_cli

import m2kr
import mipr

MODEL = "mteb/baseline-random-encoder"
TOP_K = 20
TASKS = {"mipr": mipr.MTEB_TASK, "m2kr": m2kr.MTEB_TASK}  # the names MTEB files results under
SAMPLE_QUERIES = {"mipr": 27, "m2kr": 30}
MAIN = {"mipr": ("ndcg_at_10", "nDCG@10"), "m2kr": ("recall_at_5", "Recall@5")}
DIFFERENCES = {
    "mipr": ("count L2 products as relevant", "MTEB leaves out the queries without an L1 judgment, which MIPR keeps"),
    "m2kr": ("hit_rate_at_k is the Hit@k variant",),
}


def task_classes():
    from mmrhub.mteb import TASKS  # imports mteb

    return TASKS


def table(text: str) -> dict:
    """The first Markdown table's one row: {column: cell}."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    header, row = ([cell.strip() for cell in line.strip("|").split("|")] for line in (lines[0], lines[2]))
    return dict(zip(header, row))


@pytest.mark.slow
@pytest.mark.parametrize("benchmark", ["mipr", "m2kr"])
def test_mteb_run_scores_as_evaluate_scores_it(benchmark, tmp_path, capsys, exported, monkeypatch):
    mteb = pytest.importorskip("mteb")
    from mmrhub.scoring import score

    samples, rule = [], score.refuse_run_of_other_data
    monkeypatch.setattr(score, "refuse_run_of_other_data", lambda *args: samples.append(args[3]) or rule(*args))
    run, results = tmp_path / "run.json", tmp_path / "results"
    # MIPR is exported by the command itself; M2KR's export is given, as a user reuses one
    given = ["--export", str(exported(benchmark, "mteb"))] if benchmark == "m2kr" else []
    argv = ["mteb", benchmark, "--model", MODEL, "--output", str(run), "--results", str(results), "--top-k", str(TOP_K)]
    code, out, err = run_cli(capsys, *argv, *given)
    assert code == 0, err
    assert samples == [True]  # the run was read by the one rule on runs of other data, told of the sample
    printed = table(out)
    mteb_column = f"MTEB {MAIN[benchmark][0]}"
    code, evaluated, _ = run_cli(capsys, "evaluate", benchmark, str(run), "--json", str(tmp_path / "scores.json"))
    assert code == 0
    expected = table(evaluated)
    assert {name: cell for name, cell in printed.items() if name not in ("System", mteb_column)} == {
        name: cell for name, cell in expected.items() if name != "System"
    }
    assert list(printed)[-1] == mteb_column and printed[mteb_column] == printed[MAIN[benchmark][1]]

    entries = json.loads(run.read_text())
    assert {len(entry["ranked"]) for entry in entries} == {TOP_K}  # the run's depth is --top-k
    meta = json.loads((tmp_path / "run.json.meta.json").read_text())
    assert (meta["model_name"], meta["model_revision"], meta["mteb_version"]) == (MODEL, "2", mteb.__version__)
    assert (meta["task"], meta["top_k"], meta["depth"], meta["benchmark"]) == (
        TASKS[benchmark],
        TOP_K,
        TOP_K,
        benchmark,
    )
    ours = json.loads((tmp_path / "scores.json").read_text())["runs"][0]["aggregate"]
    same_as = task_classes()[benchmark].same_as
    assert set(meta["mteb_scores"]) == set(same_as)
    for mteb_name, measure in same_as.items():  # MTEB's and ours, equal by definition (MTEB keeps 5 decimals)
        assert meta["mteb_scores"][mteb_name] == pytest.approx(ours[measure], abs=1e-5)
    assert meta["mteb_main_score"] == {MAIN[benchmark][0]: meta["mteb_scores"][MAIN[benchmark][0]]}
    assert list(results.rglob(f"{TASKS[benchmark]}.json"))  # MTEB's own results went to --results

    caption = " ".join(out.split())
    assert f"through mteb {mteb.__version__}: task {TASKS[benchmark]}, top {TOP_K}" in caption
    for difference in DIFFERENCES[benchmark]:
        assert difference in caption
    assert "Bundled" in caption and "note: MTEB's" not in err
    # after MTEB's progress, on stderr too: the table's caption may have gone to a file
    assert err.splitlines()[-1] == (
        f"note: Bundled {benchmark.upper()} sample ({SAMPLE_QUERIES[benchmark]} queries), not the benchmark: its "
        "numbers mean nothing. Pass --data-dir for the real data."
    )
    assert err.splitlines()[-2].startswith(f"Run written to {run} (")


def test_top_k_below_the_table_is_refused_before_any_work(capsys, tmp_path):
    code, _, err = run_cli(capsys, "mteb", "mipr", "--model", MODEL, "--top-k", "5", "-o", str(tmp_path / "r.json"))
    assert code == 1 and "--top-k 5: MIPR's table reads the top 10; give at least that." in err
    assert not (tmp_path / "r.json").exists()


def test_an_export_of_other_data_is_refused_before_any_work(capsys, tmp_path, exported):
    sample = str(exported("mipr", "mteb"))
    argv = ["mteb", "mipr", "--model", MODEL, "-o", str(tmp_path / "r.json"), "--export", sample]
    code, _, err = run_cli(capsys, *argv, "--data-dir", str(tmp_path))
    assert code == 1 and f"--export {sample} is an export of the bundled sample, but --data-dir" in err
    code, _, err = run_cli(capsys, *argv[:-1], str(tmp_path / "missing"))
    assert code == 1 and "no such folder (nor a Hub repo id, org/name)" in err


@pytest.mark.parametrize(
    ("card", "said"),
    [
        (b"---\ntags: [sample\n---\n", "its YAML header (between the `---` lines) does not parse (line 2)"),
        (
            b"---\ntags: [sample]\n---\n\xff\n",
            "line 4, byte offset 23: b'\\xff' is not UTF-8; a card must be UTF-8 text. Save it as UTF-8 and run again.",
        ),
    ],
)
def test_an_export_whose_card_is_broken_is_named_before_any_work(capsys, tmp_path, exported, card, said):
    import shutil

    export = shutil.copytree(exported("mipr", "mteb"), tmp_path / "export")
    (export / "README.md").write_bytes(card)
    code, _, err = run_cli(
        capsys, "mteb", "mipr", "--model", MODEL, "-o", str(tmp_path / "r.json"), "--export", str(export)
    )
    assert code == 1 and err.startswith(f"mmrhub mteb: error: {export}/README.md: {said}") and err.count("\n") == 1


@pytest.mark.parametrize("target", ["README.md", "shard", "linked README.md"])
def test_output_onto_the_export_being_scored_is_refused_before_any_work(capsys, tmp_path, exported, target):
    sample = exported("mipr", "mteb")
    if target == "shard":
        path = sorted(sample.rglob("*.parquet"))[0]
    elif target == "README.md":
        path = sample / "README.md"
    else:  # the export reached through a link to its folder
        (tmp_path / "linked").symlink_to(sample)
        path = tmp_path / "linked" / "README.md"
    before = path.read_bytes()
    capsys.readouterr()  # the export's own progress
    code, _, err = run_cli(capsys, "mteb", "mipr", "--model", MODEL, "-o", str(path), "--export", str(sample))
    assert code == 1 and err == (
        f"mmrhub mteb: error: --output {path}: is {sample}, one of this command's inputs; write elsewhere.\n"
    )
    assert path.read_bytes() == before
