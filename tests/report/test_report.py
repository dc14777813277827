"""mmrhub report on the bundled samples, without a browser: the page parses, its table is evaluate's, its
gallery holds exactly the queries and thumbnails expected from the raw files."""

import base64
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from _mipr_helpers import read_jsonl
from _paths import ROOT
from _report_helpers import EMBEDDING
from _report_helpers import M2KR_DIR
from _report_helpers import M2KR_RUN
from _report_helpers import MIPR_DIR
from _report_helpers import RERANKER
from _report_helpers import Page
from _report_helpers import count_decodes
from _report_helpers import evaluate_table
from _report_helpers import markdown_rows
from _report_helpers import run_report
from PIL import Image

from mmrhub.cli import main
from mmrhub.scoring.runs.run import RunError

pytest.importorskip("matplotlib")


def top(run_path, k) -> dict:
    return {entry["qid"]: [d["did"] for d in entry["ranked"][:k]] for entry in json.loads(Path(run_path).read_text())}


def mipr_report(tmp_path, capsys, *extra) -> Page:
    out = tmp_path / "report.html"
    assert run_report("mipr", EMBEDDING, RERANKER, "-o", out, *extra) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    return Page(out.read_text(encoding="utf-8"))


def test_mipr_report_table_gallery_and_grades(tmp_path, capsys):
    page = mipr_report(tmp_path, capsys)
    assert page.tables["scores"] == evaluate_table(capsys, "mipr", EMBEDDING, RERANKER)

    grades = {
        row["idx"]: {i["item_id"]: i["final_grade"] for i in row["items"]}
        for row in read_jsonl(MIPR_DIR / "mipr_annotation.jsonl")
    }
    titles = {row["item_id"]: row["title"] for row in read_jsonl(MIPR_DIR / "mipr_corpus.jsonl")}
    runs = [top(EMBEDDING, 10), top(RERANKER, 10)]
    assert sorted(page.queries) == sorted(grades)  # 27 queries: all of them under the default of 50
    assert len(page.queries) == 27
    ranked_l1 = missed_shown = 0
    for qid, judged in grades.items():
        l1 = [item for item, grade in judged.items() if grade == "L1"]
        for run in runs:
            ranked_l1 += sum(judged.get(item) == "L1" for item in run[qid])
            missed_shown += min(10, len([item for item in l1 if item not in run[qid]]))
    assert len(page.images) == 27 + 27 * 2 * 10 + missed_shown
    assert sum("missed" in classes for classes in page.figures) == missed_shown
    # grade marks: L1 is the first grade (class g0), unjudged the last (g5)
    assert sum("g0" in c and "missed" not in c for c in page.figures) == ranked_l1
    unjudged = sum(item not in grades[qid] for run in runs for qid in grades for item in run[qid])
    assert sum("g5" in classes for classes in page.figures) == unjudged
    item = next(image for image in page.images if image["alt"] in titles)
    assert titles[item["alt"]] in item["title"]
    assert all(image["src"].startswith("data:image/jpeg;base64,") for image in page.images)


def test_two_runs_get_the_paired_test_of_mmrhub_compare(tmp_path, capsys):
    page = mipr_report(tmp_path, capsys, "--queries", "3")
    assert main(["compare", "mipr", str(EMBEDDING), str(RERANKER)]) == 0
    assert page.tables["significance"] == markdown_rows(capsys.readouterr().out)
    assert len(page.queries) == 3
    # the unusual columns are defined under the scores, as evaluate defines them
    assert "SC-R-L1@k*: SC-R-L1@k averaged only over queries with at least two L1 categories" in page.text


def test_the_paired_figure_draws_its_markers_as_one_image(tmp_path, capsys):
    mipr_report(tmp_path, capsys, "--queries", "1", "--json", tmp_path / "scores.json")
    runs = json.loads((tmp_path / "scores.json").read_text())["runs"]
    pairs = [(a["nDCG@10"], b["nDCG@10"]) for a, b in zip(*(run["per_query"].values() for run in runs))]
    counts = {
        f"{runs[1]['name']} better": sum(b > a for a, b in pairs),
        f"{runs[0]['name']} better": sum(b < a for a, b in pairs),
        "tie": sum(b == a for a, b in pairs),
    }
    assert len(pairs) == 27 and all(counts.values())
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    figures = re.findall(r"<svg.*?</svg>", html, re.DOTALL)
    assert len(figures) == 3
    paired = figures[2]
    # the legend's three markers stay vectors, as do the ticks; the queries' markers are one PNG, not a <use> each
    ticks = len(re.findall(r'<g id="[xy]tick_', paired))
    assert paired.count('<g id="PathCollection_') == 3 and paired.count("<use ") == 3 + ticks == 15
    (image,) = re.findall(r'<image xlink:href="data:image/png;base64,([^"]+)"', paired)
    png = Image.open(io.BytesIO(base64.b64decode(image)))
    assert png.format == "PNG" and png.mode == "RGBA"
    colours = {(r, g, b) for _, (r, g, b, alpha) in png.getcolors(png.width * png.height) if alpha}
    assert {(0x1A, 0x98, 0x50), (0xD7, 0x30, 0x27), (0x96, 0x96, 0x96)} <= colours  # B better, A better, tie
    for what, count in counts.items():  # text the browser draws, exact counts
        assert f">{what}: {count}</text>" in paired
    assert f">{runs[0]['name']}: nDCG@10 (x100)</text>" in paired


def test_three_runs_get_every_pair_of_mmrhub_compare(tmp_path, capsys):
    entries = json.loads(EMBEDDING.read_text())
    for entry in entries[::2]:  # a third run: every other query's top two swapped
        entry["ranked"][0]["did"], entry["ranked"][1]["did"] = entry["ranked"][1]["did"], entry["ranked"][0]["did"]
    third = tmp_path / "swapped.json"
    third.write_text(json.dumps(entries))
    out = tmp_path / "report.html"
    assert run_report("mipr", EMBEDDING, RERANKER, third, "-o", out, "--queries", "2") == 0
    page = Page(out.read_text(encoding="utf-8"))
    capsys.readouterr()
    assert main(["compare", "mipr", str(EMBEDDING), str(RERANKER), str(third)]) == 0
    printed = capsys.readouterr().out.split("\n\n")
    shown = [page.tables[name] for name in ("summary", "significance", "significance-2", "significance-3")]
    assert shown == [markdown_rows(table) for table in [printed[0], *printed[2:5]]]  # the summary's caption between
    assert shown[0][1][0] == "simulated_embedding_top50 (a)" and shown[1][0][-1] == "p (holm)"


def test_gallery_shows_the_largest_disagreements_first(tmp_path, capsys):
    page = mipr_report(tmp_path, capsys, "--queries", "4", "--json", tmp_path / "scores.json")
    runs = json.loads((tmp_path / "scores.json").read_text())["runs"]
    spread = {
        qid: abs(runs[0]["per_query"][qid]["nDCG@10"] - runs[1]["per_query"][qid]["nDCG@10"])
        for qid in runs[0]["per_query"]
    }
    ids = list(runs[0]["per_query"])
    expected = sorted(ids, key=lambda qid: (-spread[qid], ids.index(qid)))[:4]
    assert page.queries == expected


def test_m2kr_single_run_shows_its_worst_queries(tmp_path, capsys):
    out = tmp_path / "m2kr.html"
    assert run_report("m2kr", M2KR_RUN, "-o", out, "--queries", "5", "--json", tmp_path / "scores.json") == 0
    capsys.readouterr()
    page = Page(out.read_text(encoding="utf-8"))
    assert page.tables["scores"] == evaluate_table(capsys, "m2kr", M2KR_RUN)
    assert "significance" not in page.tables  # one run: nothing to pair

    per_query = json.loads((tmp_path / "scores.json").read_text())["runs"][0]["per_query"]
    ids = list(per_query)
    worst = sorted(ids, key=lambda qid: (per_query[qid]["Recall@5"], ids.index(qid)))[:5]
    assert page.queries == worst
    answers = pq.read_table(M2KR_DIR / "challenge_answers").to_pylist()
    positives = {row["question_id"]: row["pos_item_ids"] for row in answers}
    ranking = top(M2KR_RUN, 5)
    found = sum(item in positives[qid] for qid in worst for item in ranking[qid])
    missed = sum(min(5, len([p for p in positives[qid] if p not in ranking[qid]])) for qid in worst)
    assert len(page.images) == 5 + 5 * 5 + missed
    assert sum("g0" in c and "missed" not in c for c in page.figures) == found
    assert sum("missed" in c for c in page.figures) == missed > 0


def test_query_ids_pick_the_gallery(tmp_path, capsys):
    page = mipr_report(tmp_path, capsys, "--query-ids", "7,2,7")
    assert page.queries == ["7", "2"]
    with pytest.raises(
        ValueError, match=r"^--query-ids: 1 id\(s\) are not judged queries of the benchmark, e\.g\. 'nope'$"
    ):
        run_report("mipr", EMBEDDING, "-o", tmp_path / "x.html", "--query-ids", "2,nope")


def test_each_image_is_decoded_once_and_written_once(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty thumbnail cache
    decoded = count_decodes(monkeypatch)
    page = mipr_report(tmp_path, capsys, "--queries", "2")
    distinct = {image["src"] for image in page.images}
    assert len(decoded) == len(distinct) < len(page.images)  # both runs rank some items: shown twice, decoded once
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert len(page.thumbnails) == len(distinct) and all(html.count(uri) == 1 for uri in distinct)


def test_bad_runs_are_refused_as_evaluate_refuses_them(tmp_path, capsys):
    entries = json.loads(EMBEDDING.read_text())
    entries[0]["ranked"][3]["did"] = "not-a-product"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(entries[1:] + entries[:1]))
    del entries[5]
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps(entries))
    for path in (bad, missing):
        assert main(["evaluate", "mipr", str(path)]) == 1
        refused = capsys.readouterr().err
        with pytest.raises(RunError) as error:
            run_report("mipr", path, "-o", tmp_path / "r.html")
        assert refused == f"mmrhub evaluate: error: {error.value}\n"
        assert not (tmp_path / "r.html").exists()
        assert capsys.readouterr().err == "mmrhub report: scoring 1 run(s)\n"  # its progress, nothing else


def test_output_folder_must_exist(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist; create it first"):
        run_report("mipr", EMBEDDING, "-o", tmp_path / "no" / "r.html", "--queries", "1")


def test_the_command_module_imports_no_heavy_module():
    code = (
        "import sys, mmrhub.commands.report; "
        "heavy = [m for m in ('matplotlib', 'datasets', 'torch', 'PIL') if m in sys.modules]; assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_oracle_row_joins_the_table_not_the_gallery(tmp_path, capsys):
    page = mipr_report(tmp_path, capsys, "--queries", "2", "--oracle", EMBEDDING)
    table = evaluate_table(capsys, "mipr", EMBEDDING, RERANKER, "--oracle", EMBEDDING)
    assert page.tables["scores"] == table and [row[0] for row in table[1:]][-1] == "Candidate-pool Oracle"
    assert sum("missed" not in c for c in page.figures) == 2 * 2 * 10  # two runs, no oracle line


def test_thumbnails_are_small_jpegs(tmp_path, capsys):
    import base64
    import io

    from PIL import Image

    from mmrhub.report.thumbnails import shrink

    def decode(uri):
        return Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))

    png = io.BytesIO()
    Image.new("RGBA", (400, 300), (200, 30, 30, 128)).save(png, "PNG")
    shrunk = Image.open(io.BytesIO(shrink(png.getvalue(), 96)))
    assert (shrunk.format, shrunk.mode, shrunk.size) == ("JPEG", "RGB", (96, 72))
    page = mipr_report(tmp_path, capsys, "--queries", "1")
    assert {decode(image["src"]).format for image in page.images} == {"JPEG"}


def test_the_page_says_what_was_computed(tmp_path, capsys):
    out = tmp_path / "report.html"
    assert run_report("mipr", EMBEDDING, "-o", out, "--no-l1", "skip") == 0
    stdout = capsys.readouterr().out
    html = out.read_text(encoding="utf-8")
    assert "Options other than the defaults: --no-l1 skip." in html
    assert "Means over fewer than the 27 scored queries: R-L1@10 over 26, SC-R-L1@10 over 26" in html
    assert "_Options other than the defaults: --no-l1 skip._" in stdout
