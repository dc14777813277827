"""The judgments as trec_eval qrels files (``qid 0 docid relevance``), one per qrels table, with a README saying
what each holds and how trec_eval scores a run against it."""

from pathlib import Path

import pyarrow.csv as pacsv

README = """\
# {title} judgments as trec_eval qrels

{files}

Each line is `query-id 0 corpus-id relevance`, the relevance being the gain the {title} metric gives the judgment.
Score a TREC run with, for example:

    trec_eval -m ndcg_cut.10 -m recall.10 -m success.1,10 {first} RUN.trec

{notes}
"""


def write_qrels(tables, folder: Path) -> list:
    """Write each (name, qrels Dataset) as ``<name>.txt`` in ``folder``; the files written."""
    written = []
    for name, dataset in tables:
        table = dataset.with_format("arrow")[:].select(["query-id", "Q0", "corpus-id", "score"])
        path = folder / f"{name}.txt"
        options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
        pacsv.write_csv(table, str(path), write_options=options)
        written.append((path, table.num_rows))
    return written


def readme(title: str, written: list, notes: str) -> str:
    """The README.md of a qrels export."""
    files = "\n".join(f"- `{path.name}`: {rows:,} judgments" for path, rows in written)
    return README.format(title=title, files=files, first=written[0][0].name, notes=notes)
