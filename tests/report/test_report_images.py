"""mmrhub report when images are missing or bad, its thumbnail cache, and text drawn as given in the plots."""

import io
import json
import re
import shutil

import pytest
from _mipr_helpers import read_jsonl
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

pytest.importorskip("matplotlib")


def tables_only(source, target, keep=lambda path: path.suffix in (".jsonl", ".parquet")):
    """A copy of a data folder's tables, without images or archives."""
    for path in source.rglob("*"):
        if path.is_file() and keep(path):
            (target / path.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target / path.relative_to(source))
    return target


def report(tmp_path, capsys, *argv) -> tuple:
    """(the page, stdout, stderr) of a report written to tmp_path/report.html."""
    out = tmp_path / "report.html"
    assert run_report(*argv, "-o", out) == 0
    captured = capsys.readouterr()
    return Page(out.read_text(encoding="utf-8")), captured.out, captured.err


def test_mipr_tables_without_images_give_a_page(tmp_path, capsys):
    data = tables_only(MIPR_DIR, tmp_path / "mipr")
    page, out, err = report(
        tmp_path, capsys, "mipr", EMBEDDING, RERANKER, "--data-dir", data, "--no-check-images", "--queries", "3"
    )
    table = evaluate_table(capsys, "mipr", EMBEDDING, RERANKER, "--data-dir", data)
    assert page.tables["scores"] == table == markdown_rows(out)
    assert (tmp_path / "report.html").read_text(encoding="utf-8").count("<svg") == 3  # the plots
    assert "significance" in page.tables
    assert page.images == [] and len(page.placeholders) == 3 + len(page.figures)
    shown = {p["title"].split(":")[0] for p in page.placeholders}
    assert page.notice.startswith(f"{len(shown)} image(s) could not be shown: {len(shown)} missing (e.g. ")
    assert "DATA_DIR/images/" in page.notice and err.count("note: ") == 1 and f"note: {page.notice}" in err
    titles = {row["item_id"]: row["title"] for row in read_jsonl(MIPR_DIR / "mipr_corpus.jsonl")}
    questions = {row["idx"]: row["query"] for row in read_jsonl(MIPR_DIR / "mipr_query.jsonl")}
    shown_items = shown - {f"query {qid}" for qid in page.queries}
    assert all(titles[item] in page.text and item in page.text for item in shown_items)
    assert all(questions[qid] in page.text for qid in page.queries)


def test_m2kr_tables_without_archives_give_a_page(tmp_path, capsys):
    data = tables_only(M2KR_DIR, tmp_path / "m2kr")
    page, out, err = report(
        tmp_path, capsys, "m2kr", M2KR_RUN, "--data-dir", data, "--no-check-images", "--queries", "4"
    )
    assert page.tables["scores"] == markdown_rows(out) == evaluate_table(capsys, "m2kr", M2KR_RUN, "--data-dir", data)
    assert len(page.queries) == 4 and page.images == []
    assert len(page.placeholders) == 4 + len(page.figures)
    assert "could not be shown" in page.notice and "--images-dir" in page.notice and "not read" in page.notice
    assert err.count("note: ") == 1
    import pyarrow.parquet as pq

    passages = pq.read_table(M2KR_DIR / "challenge_passage").to_pylist()
    content = {row["passage_id"]: row["passage_content"] for row in passages}
    shown = [p["title"].split(":")[0] for p in page.placeholders if not p["title"].startswith("query ")]
    assert shown
    for passage_id in shown:
        text = content[passage_id]
        visible = text if len(text) <= 90 else text[:89].rstrip() + "\u2026"  # cut with an ellipsis
        assert visible in page.text


def test_bad_images_become_placeholders_naming_their_item(tmp_path, capsys, monkeypatch):
    data = tables_only(MIPR_DIR, tmp_path / "mipr", keep=lambda path: True)
    ranked = [entry for entry in json.loads(EMBEDDING.read_text()) if entry["qid"] == "2"][0]["ranked"]
    svg, text, big = [entry["did"] for entry in ranked[:3]]
    corpus = read_jsonl(data / "mipr_corpus.jsonl")
    for row in corpus:
        if row["item_id"] == svg:
            row["pict_url"] = f"{svg}.svg"
    (data / "mipr_corpus.jsonl").write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in corpus))
    images = data / "images" / "product_images"
    (images / f"{svg}.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"/>')
    (images / f"{text}.jpg").write_text("not a picture")
    png = io.BytesIO()
    Image.new("RGB", (200, 200)).save(png, "PNG")
    (images / f"{big}.jpg").write_bytes(png.getvalue())
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 10_000)  # the sample's images are 48x48 at most
    page, _, err = report(tmp_path, capsys, "mipr", EMBEDDING, "--data-dir", data, "--query-ids", "2")
    reasons = {p["title"].split(": ", 1)[0]: p["title"] for p in page.placeholders}
    assert set(reasons) == {svg, text, big}
    assert "is not an image Pillow can read" in reasons[svg] and f"{svg}.svg" in reasons[svg]
    assert "is not an image Pillow can read" in reasons[text] and f"{text}.jpg" in reasons[text]
    assert "over Pillow's limit of 10,000 px" in reasons[big]
    assert page.notice.startswith("3 image(s) could not be shown: 2 not an image Pillow can read (e.g. ")
    assert "1 over Pillow's MAX_IMAGE_PIXELS" in page.notice and f"note: {page.notice}" in err
    assert len(page.images) == 1 + 10 - 3 + sum("missed" in c for c in page.figures)


def test_names_and_categories_are_drawn_as_given(tmp_path, capsys, monkeypatch):
    from matplotlib.text import Text

    from mmrhub.report import plots

    data = tables_only(MIPR_DIR, tmp_path / "mipr")
    category = r"$\notacommand{x}$"
    corpus = read_jsonl(data / "mipr_corpus.jsonl")
    for row in corpus:
        row["treecate_full_path"] = f"{category}-{row['treecate_full_path']}"
    (data / "mipr_corpus.jsonl").write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in corpus))
    texts, real = [], plots._svg
    monkeypatch.setattr(
        plots, "_svg", lambda figure: texts.extend(t.get_text() for t in figure.findobj(Text)) or real(figure)
    )
    names = ("cost $5 and $6", r"$\alpha$")
    out = tmp_path / "report.html"
    assert (
        run_report(
            "mipr",
            EMBEDDING,
            RERANKER,
            "--name",
            names[0],
            "--name",
            names[1],
            "--data-dir",
            data,
            "--no-check-images",
            "--queries",
            "1",
            "-o",
            out,
        )
        == 0
    )
    html = out.read_text(encoding="utf-8")
    for text in (*names, f"{category} (", f"{names[0]} better", f"{names[1]}: nDCG@10 (x100)"):
        assert any(text in drawn for drawn in texts), text
        assert f">{text}" in html, text  # one SVG text element, not mathtext's glyph by glyph


def test_thumbnail_cache_is_hit_and_a_broken_entry_rebuilt(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    decoded = count_decodes(monkeypatch)
    argv = ("mipr", EMBEDDING, RERANKER, "--queries", "2")
    first, _, err = report(tmp_path, capsys, *argv)
    assert len(decoded) == len(first.thumbnails) > 0 and ", 0 from the thumbnail cache" in err
    decoded.clear()
    second, _, err = report(tmp_path, capsys, *argv)
    assert decoded == [] and second.thumbnails == first.thumbnails
    assert f", {len(first.thumbnails)} from the thumbnail cache" in err
    entries = sorted((tmp_path / "hf" / "mmrhub" / "thumbnails").rglob("*.jpg"))
    assert len(entries) == len(first.thumbnails)
    entries[0].write_bytes(entries[0].read_bytes()[:100])  # cut short, as by a crash without the rename
    third, _, _ = report(tmp_path, capsys, *argv)
    assert len(decoded) == 1 and third.thumbnails == first.thumbnails
    assert not [path for path in entries[0].parent.iterdir() if path.suffix == ".tmp"]


def test_an_unwritable_cache_is_skipped(tmp_path, capsys, monkeypatch):
    (tmp_path / "hf").write_text("a file where the cache's folder would go")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    page, _, err = report(tmp_path, capsys, "mipr", EMBEDDING, "--queries", "1")
    assert len(page.images) > 10 and page.placeholders == [] and "note:" not in err


def test_mipr_tables_without_images_give_a_page_without_no_check_images(tmp_path, capsys):
    data = tables_only(MIPR_DIR, tmp_path / "mipr")
    page, out, err = report(tmp_path, capsys, "mipr", EMBEDDING, "--data-dir", data, "--queries", "2")
    assert page.tables["scores"] == markdown_rows(out)
    assert page.images == [] and len(page.placeholders) == 2 + len(page.figures)
    shown = {p["title"].split(": ", 1)[0] for p in page.placeholders}
    assert all(p["title"].startswith(f"{p['title'].split(': ', 1)[0]}: {data / 'images'}/") for p in page.placeholders)
    assert all(p["title"].endswith(" is missing") and p["role"] == "img" for p in page.placeholders)
    assert page.notice.startswith(f"{len(shown)} image(s) could not be shown: {len(shown)} missing (e.g. ")
    assert "DATA_DIR/images/" in page.notice
    assert [line for line in err.splitlines() if line.startswith("note: ")] == [f"note: {page.notice}"]


def test_m2kr_without_the_passage_archives_shows_the_query_images(tmp_path, capsys):
    data = tables_only(
        M2KR_DIR, tmp_path / "m2kr", keep=lambda path: path.suffix == ".parquet" or path.suffix == ".zip"
    )
    assert (data / "query_images.zip").is_file() and not list(data.glob("Web_Image*"))
    page, _, err = report(tmp_path, capsys, "m2kr", M2KR_RUN, "--data-dir", data, "--queries", "3")
    assert len(page.images) == 3 and all(image["class"] == "query-image" for image in page.images)
    assert len(page.placeholders) == len(page.figures) > 0  # every passage, none of the queries
    reasons = {p["title"].split(": ", 1)[1] for p in page.placeholders}
    assert len(reasons) == 1 and reasons.pop().startswith("challenge_passage: archive Web_Image.zip.001, ")
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert html.count(">no image: not found</span>") == len(page.placeholders)
    shown = len({p["title"].split(": ", 1)[0] for p in page.placeholders})
    assert page.notice.startswith(f"{shown} image(s) could not be shown: {shown} not found (e.g. ")
    assert "; challenge_passage: archive Web_Image.zip.001, " in page.notice and "(--images-dir)" in page.notice
    assert [line for line in err.splitlines() if line.startswith("note: ")] == [f"note: {page.notice}"]


def test_plot_text_stays_text_and_names_cjk_fonts(tmp_path, capsys):
    page, _, _ = report(tmp_path, capsys, "mipr", EMBEDDING, RERANKER, "--queries", "1")
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    stack = '"Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Micro Hei", "Microsoft YaHei", "PingFang SC"'
    assert f"body {{ font-family: system-ui, {stack}, sans-serif;" in html
    tops = {row["treecate_full_path"].split("-")[0] for row in read_jsonl(MIPR_DIR / "mipr_corpus.jsonl")}
    texts = re.findall(r"<text ([^>]*)>([^<]*)</text>", html)
    drawn = [text for _, text in texts]
    assert len(texts) > 30 and sum(any(text.startswith(f"{top} (") for text in drawn) for top in tops) >= 5
    assert all("'DejaVu Sans', 'Noto Sans CJK SC', 'Source Han Sans SC', 'WenQuanYi Micro Hei'" in a for a, _ in texts)
    assert 'id="DejaVuSans-' not in html  # no glyph outlines (svg.fonttype "path" defines one per character)


def count_reads(monkeypatch) -> list:
    """The path of every image whose bytes the thumbnails read."""
    from mmrhub.report import thumbnails

    read, real = [], thumbnails.read_bytes
    monkeypatch.setattr(thumbnails, "read_bytes", lambda reference: read.append(reference["path"]) or real(reference))
    return read


def test_a_cached_thumbnail_of_an_unchanged_image_is_served_without_reading_the_image(tmp_path, capsys, monkeypatch):
    """A local image's digest is remembered with its stat (mmrhub/image_digests.py), so a warm report finds its
    thumbnail without reading it."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    read = count_reads(monkeypatch)
    argv = ("mipr", EMBEDDING, RERANKER, "--queries", "2")
    first, _, _ = report(tmp_path, capsys, *argv)
    assert len(read) == len(set(read)) == len(first.thumbnails) > 0
    read.clear()
    second, _, err = report(tmp_path, capsys, *argv)
    assert read == [] and second.thumbnails == first.thumbnails
    assert f", {len(first.thumbnails)} from the thumbnail cache" in err


def test_an_image_changed_since_its_thumbnail_is_read_and_drawn_again(tmp_path, capsys, monkeypatch):
    from mmrhub import image_digests

    monkeypatch.setattr(image_digests, "SETTLE_NS", 0)  # the copies are remembered at once
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    data = tmp_path / "mipr"
    shutil.copytree(MIPR_DIR, data)
    argv = ("mipr", EMBEDDING, "--data-dir", data, "--queries", "1")
    read = count_reads(monkeypatch)
    first, _, _ = report(tmp_path, capsys, *argv)
    changed, read[:] = sorted(read)[0], []
    report(tmp_path, capsys, *argv)
    assert read == []
    Image.new("RGB", (40, 30), "magenta").save(changed)  # other bytes, another size
    third, _, _ = report(tmp_path, capsys, *argv)
    assert read == [changed]
    assert len(set(third.thumbnails.values()) - set(first.thumbnails.values())) == 1
