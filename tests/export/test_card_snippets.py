"""Every export kind's card "How to evaluate" snippet runs as written, against the exported folder (and the local
metric for the plain export), and prints what ``mmrhub evaluate`` scores."""

import json
import re
from pathlib import Path

import pytest
from _export_helpers import builder_module
from _paths import ROOT

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.declaration import CARD_SNIPPETS
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.score import read_valid_run
from mmrhub.scoring.score import score

RUNS = {"mipr": "data/mipr/baseline/simulated_embedding_top50.json", "m2kr": "data/m2kr/baseline/simulated_top5.json"}
# What each snippet prints, and the measure of ``mmrhub evaluate`` each printed number must equal.
PRINTED = {
    ("mipr", "hf"): {"nDCG@10": "nDCG@10", "R-L1@10": "R-L1@10", "Hit-L1@10": "Hit-L1@10"},
    ("m2kr", "hf"): {"Recall@1": "Recall@1", "Recall@5": "Recall@5"},
    ("mipr", "mteb"): {"nDCG@10": "nDCG@10", "R-L1@10": "R-L1@10", "Hit-L1@1": "Hit-L1@1", "Hit-L1@10": "Hit-L1@10"},
    ("m2kr", "mteb"): {"Recall@1": "Recall@1", "Recall@3": "Recall@3", "Recall@5": "Recall@5"},
}


def card_snippet(folder: Path) -> str:
    """The python block of the card's "How to evaluate" section, with the reader's ``run = {...}`` line as RUN."""
    card = (folder / "README.md").read_text(encoding="utf-8")
    section = card.split("### How to evaluate", 1)[1].split("\n### ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    placeholder = re.compile(r"^run = \{\.\.\.\}.*$", re.M)
    if not placeholder.search(code):
        raise AssertionError("the snippet no longer has a `run = {...}` line for the reader's ranking")
    return placeholder.sub("run = RUN", code)


def baseline_run(benchmark: str, format: str) -> dict:
    entries = json.loads((ROOT / RUNS[benchmark]).read_text())
    if format == "hf":
        return {entry["qid"]: [item["did"] for item in entry["ranked"]] for entry in entries}
    # MTEB's scorer takes similarities; rank r gets 1/r so the order is the run's own.
    return {
        entry["qid"]: {item["did"]: 1 / (rank + 1) for rank, item in enumerate(entry["ranked"])} for entry in entries
    }


def cli_scores(benchmark: str, format: str) -> dict:
    """``mmrhub evaluate``'s means; MTEB's L1 numbers are over the queries with an L1 judgment (MTEB leaves the
    others out, MIPR scores them 0), as the card says."""
    bench = BENCHMARKS[benchmark]
    truth = bench.read_truth(bench.sample_dir)
    _, rankings = read_valid_run(ScoringRequest(bench), truth, ROOT / RUNS[benchmark])
    k = (1, 10) if benchmark == "mipr" else (1, 3, 5)
    result = score(bench, truth, rankings, {"k": k})
    if (benchmark, format) == ("mipr", "mteb"):
        with_l1 = {
            row["idx"]
            for row in builder_module("mipr").load("qrels")
            if any(i["final_grade"] == "L1" for i in row["items"])
        }
        per_query = result["per_query"]
        rows = [i for i, qid in enumerate(per_query["query_id"]) if qid in with_l1]
        assert 0 < len(rows) < len(per_query["query_id"])  # the sample has queries without L1: the case matters
        for name in ("R-L1@10", "Hit-L1@1", "Hit-L1@10"):
            result[name] = sum(per_query[name][i] for i in rows) / len(rows)
    return result


# The MTEB snippets run mteb.evaluate (twice for MIPR): seconds each, most of them importing mteb.
CASES = [pytest.param(*case, marks=[pytest.mark.slow] if case[1] == "mteb" else []) for case in PRINTED]


@pytest.mark.parametrize("benchmark,format", CASES)
def test_evaluate_snippet_scores_like_the_cli(benchmark, format, exported, capsys):  # noqa: F811 (fixture)
    if format == "mteb":
        pytest.importorskip(
            "mteb", minversion="2", reason="the MTEB card's snippet scores with mteb 2 (the mteb extra)"
        )
    folder = exported(benchmark, format)
    code = card_snippet(folder).replace(
        f'evaluate.load("your-org/{benchmark}")', f'evaluate.load("{ROOT / "metrics" / benchmark}")'
    )
    code = re.sub(r'"your-org/[a-z0-9-]+"', f'"{folder}"', code)  # the default repo ids name the dataset repo
    exec(compile(code, f"<{benchmark} {format} card snippet>", "exec"), {"RUN": baseline_run(benchmark, format)})
    printed = capsys.readouterr().out
    expected = cli_scores(benchmark, format)
    for shown, measure in PRINTED[benchmark, format].items():
        value = float(re.search(rf"'{re.escape(shown)}': ([0-9.e-]+)", printed).group(1))
        assert value == pytest.approx(expected[measure], abs=1e-5), shown  # MTEB rounds to 5 decimals


@pytest.mark.parametrize("benchmark,format", list(PRINTED))
def test_load_snippet_loads_every_config(benchmark, format, exported):  # noqa: F811 (fixture)
    folder = exported(benchmark, format)
    card = (folder / "README.md").read_text(encoding="utf-8")
    section = card.split("### How to load", 1)[1].split("\n### ", 1)[0]
    code = re.sub(r'"your-org/[a-z0-9-]+"', f'"{folder}"', re.search(r"```python\n(.*?)```", section, re.S).group(1))
    loaded = {}
    exec(compile(code, f"<{benchmark} {format} load snippet>", "exec"), loaded)
    configs = sorted(path.name for path in folder.iterdir() if path.is_dir())
    assert sorted(name for name, value in loaded.items() if hasattr(value, "num_rows")) == [
        c.replace("-", "_") for c in configs
    ]


@pytest.mark.parametrize("benchmark", ["mipr", "m2kr"])
def test_mteb_snippet_uses_the_public_api_and_names_what_to_install(benchmark, exported):  # noqa: F811 (fixture)
    folder = exported(benchmark, "mteb")
    code = card_snippet(folder)
    modules = {line.split()[1] for line in code.splitlines() if line.startswith(("import ", "from "))}
    assert modules == {"mteb", "mteb.abstasks", "mteb.models"} | ({"datasets"} if benchmark == "mipr" else set())
    assert not any(part.startswith("_") for module in modules for part in module.split("."))
    section = (folder / "README.md").read_text(encoding="utf-8").split("### How to evaluate", 1)[1]
    assert 'pip install "mteb>=2" pillow' in section.split("```python", 1)[0]  # mteb decodes images, needs Pillow


def snippet_files(benchmark: str, format: str) -> list:
    text = BENCHMARKS[benchmark].card
    return [text["mteb_snippet"] if format == "mteb" else text["evaluate_snippet"]]


@pytest.mark.parametrize("benchmark,format", list(PRINTED))
def test_the_cards_code_is_the_snippet_file(benchmark, format, exported):  # noqa: F811 (fixture)
    """The card shows the linted file as it is, its placeholders filled in with the export's names."""
    (path,) = snippet_files(benchmark, format)
    assert path.parent == CARD_SNIPPETS and path.is_file()
    card = (exported(benchmark, format) / "README.md").read_text(encoding="utf-8")
    section = card.split("### How to evaluate", 1)[1].split("\n### ", 1)[0]
    shown = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    repo = f"your-org/{benchmark}" + ("-mteb" if format == "mteb" else "")
    fields = {
        "repo_id": repo,
        "metric_space": f"your-org/{benchmark}",
        "mteb_task": builder_module(benchmark).MTEB_TASK,
    }
    expected = path.read_text(encoding="utf-8")
    for name, value in fields.items():
        expected = expected.replace("{" + name + "}", value)
    assert shown == expected
    assert not re.search(r"\{(repo_id|metric_space|mteb_task)\}", card)  # every placeholder filled in


def test_every_snippet_file_is_shown_by_a_card():
    shown = {path for benchmark, format in PRINTED for path in snippet_files(benchmark, format)}
    assert shown == set(CARD_SNIPPETS.glob("*.py"))


@pytest.mark.parametrize("benchmark", ["mipr", "m2kr"])
def test_one_mteb_task_name_for_the_card_and_mmrhub_mteb(benchmark, exported):  # noqa: F811 (fixture)
    """Results of the card's task and of ``mmrhub.mteb``'s are filed under one name: the builder's MTEB_TASK,
    also the name of mmrhub's task class, as MTEB names its own."""
    pytest.importorskip("mteb", minversion="2", reason="mmrhub.mteb's tasks need mteb 2 (the mteb extra)")
    from mmrhub.mteb import TASKS

    name = builder_module(benchmark).MTEB_TASK
    code = card_snippet(exported(benchmark, "mteb"))
    assert re.findall(r'^        name="([^"]+)",$', code, re.M) == [name]
    task = TASKS[benchmark]
    assert task.metadata.name == task.__name__ == name
    assert re.fullmatch(r"[A-Z0-9]+IT2ITRetrieval", name) and task.metadata.category == "it2it"
