"""The report's Markdown-to-HTML step on what the output modules write: a table's cells come back as printed
(``<``, ``&``, ``|`` and Chinese text in a cell), numbers right-aligned, captions as emphasised paragraphs, nothing
taken for HTML. Needs no matplotlib."""

from _report_helpers import Page
from _report_helpers import markdown_rows

from mmrhub.report.markdown import cells
from mmrhub.report.markdown import to_html
from mmrhub.scoring.output.tables import markdown
from mmrhub.scoring.output.tables import table

NAME = "<b>除垢剂</b> & a|b"
ROWS = [(NAME, {"nDCG@10": 0.5, "R-L1@10": None}), ("基线 run", {"nDCG@10": 0.25, "R-L1@10": 0.125})]


def page_tables(html: str) -> dict:
    """The tables of an HTML fragment, by id: rows of cell texts, the heading first."""
    return Page(html + '<script type="application/json" id="thumbnails">{}</script>').tables


def test_a_table_with_markup_a_pipe_and_chinese_text_comes_back_cell_for_cell():
    text = table(ROWS)
    assert f"| {NAME.replace('|', chr(92) + '|')} | 50.00 | - |" in text  # the pipe written \|: one cell
    html = to_html(text, table_ids=["scores"])
    assert page_tables(html)["scores"] == [
        ["System", "nDCG@10", "R-L1@10"],
        [NAME, "50.00", "-"],
        ["基线 run", "25.00", "12.50"],
    ]
    assert "<b>" not in html and "&lt;b&gt;除垢剂&lt;/b&gt; &amp; a|b" in html


def test_heading_row_headings_and_numbers_are_marked():
    html = to_html(markdown([["Measure", "A", "B"], ["nDCG@10", "1.00", "2.00"]]))
    assert html == (
        "<table><thead><tr><th>Measure</th><th>A</th><th>B</th></tr></thead>"
        '<tbody><tr><th>nDCG@10</th><td class="num">1.00</td><td class="num">2.00</td></tr></tbody></table>'
    )


def test_captions_become_emphasised_paragraphs_escaped():
    text = table(ROWS[:1]) + "\n\n_Readings other than the defaults: --no-l1 skip._\n\n_Means over <5> & more_"
    html = to_html(text, table_ids=["t"])
    assert html.endswith(
        "<p><em>Readings other than the defaults: --no-l1 skip.</em></p>\n"
        "<p><em>Means over &lt;5&gt; &amp; more</em></p>"
    )
    assert to_html("plain & simple\nsecond line") == "<p>plain &amp; simple second line</p>"
    assert to_html("") == ""


def test_tables_take_their_ids_in_order_and_match_the_printed_rows():
    first, second = markdown([["M", "a"], ["x", "1"]]), markdown([["M", "b"], ["y", "2"]])
    tables = page_tables(to_html(f"{first}\n\n{second}", table_ids=["one", "two"]))
    assert tables == {"one": markdown_rows(first), "two": markdown_rows(second)}


def test_pipes_and_backslashes_in_names_are_read_back_as_written():
    names = ["a|b", "c\\|d", "e\\", "|", "\\"]  # c\|d: a backslash before a pipe; e\: one at the end
    lines = markdown([["System", *names], ["x", "1", "2", "3", "4", "5"]]).splitlines()
    assert cells(lines[0]) == ["System", *names]
