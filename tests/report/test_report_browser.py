"""The report in a real browser (headless Chromium through selenium): it renders, every image decodes, the console
stays clean, and the page shows evaluate's table and the expected gallery.

Skipped without selenium, chromium and chromedriver, unless MMRHUB_REQUIRE_BROWSER=1 (CI), which makes that a
failure (``_browser``).
"""

import pytest
from _browser import chromium
from _report_helpers import EMBEDDING
from _report_helpers import RERANKER
from _report_helpers import evaluate_table
from _report_helpers import run_report

pytest.importorskip("matplotlib")  # the report's plots


@pytest.fixture
def browser():
    driver = chromium()
    yield driver
    driver.quit()


def test_report_renders_in_chromium(browser, tmp_path, capsys):
    out = tmp_path / "report.html"
    assert run_report("mipr", EMBEDDING, RERANKER, "-o", out, "--queries", "12") == 0
    browser.get(out.as_uri())
    images = browser.execute_script(
        "return Array.from(document.images, i => [i.complete, i.naturalWidth, i.naturalHeight, i.className]);"
    )
    assert len(images) > 12 and all(complete and width > 0 and height > 0 for complete, width, height, _ in images)
    assert browser.execute_script("return document.querySelectorAll('#gallery .query').length;") == 12
    assert browser.execute_script("return document.querySelectorAll('#gallery img.query-image').length;") == 12
    item_images = browser.execute_script("return document.querySelectorAll('#gallery figure.item img').length;")
    assert item_images == len(images) - 12 >= 12 * 2 * 10
    cells = browser.execute_script(
        "return Array.from(document.querySelectorAll('#scores tr'), r => Array.from(r.cells, c => c.innerText.trim()));"
    )
    assert cells == evaluate_table(capsys, "mipr", EMBEDDING, RERANKER)
    assert browser.execute_script("return document.querySelectorAll('.figures svg').length;") == 3
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []
    shot = tmp_path / "report.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000


LAYOUT = """
const runs = Array.from(document.querySelectorAll('#gallery .run'));
const rows = runs.map(run => new Set(Array.from(run.querySelectorAll('.ranked figure.item'),
  item => Math.round(item.getBoundingClientRect().top))).size);
const lines = Array.from(document.querySelectorAll('#gallery .item .id'), id => {
  const range = document.createRange(); range.selectNodeContents(id); return range.getClientRects().length; });
return [runs.map(run => run.querySelectorAll('.ranked figure.item').length), rows, lines];
"""


@pytest.mark.parametrize("width", [1400, 1024])
def test_the_gallery_keeps_each_top_k_on_one_row_and_every_id_whole(browser, tmp_path, width):
    """The top 10 of a run never wraps (a narrow window scrolls it) and a 16-character product id never breaks."""
    out = tmp_path / "report.html"
    assert run_report("mipr", EMBEDDING, RERANKER, "-o", out, "--queries", "12") == 0
    browser.set_window_size(width, 2000)
    browser.get(out.as_uri())
    counts, rows, lines = browser.execute_script(LAYOUT)
    assert counts == [10] * 24 and rows == [1] * 24
    assert len(lines) > 24 * 10 and set(lines) == {1}
