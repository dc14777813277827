"""Markdown tables of scores (values x100, two decimals, like the seed's table) and the --json output."""

import json
from pathlib import Path

UNDEFINED = "-"  # a mean over no query (e.g. SC-R-L1@10* without multi-category queries): not 0


def measure_names(result: dict) -> list:
    """The measures of a result: float values, or None where undefined (counts are ints, groups are dicts)."""
    return [name for name, value in result.items() if value is None or isinstance(value, float)]


def cell(value) -> str:
    return UNDEFINED if value is None else f"{100 * value:.2f}"


def table(rows: list, label: str = "System", extra: tuple = ()) -> str:
    """rows: (name, result dict) pairs -> a Markdown table of their measures; ``extra`` adds count columns."""
    names = measure_names(rows[0][1])
    lines = [
        "| " + " | ".join([label, *names, *extra]) + " |",
        "|" + "---|" + "---:|" * (len(names) + len(extra)),
    ]
    for name, result in rows:
        cells = [cell(result[measure]) for measure in names] + [str(result[key]) for key in extra]
        lines.append("| " + " | ".join([name, *cells]) + " |")
    return "\n".join(lines)


def per_query_table(per_query: dict) -> str:
    names = [name for name in per_query if name != "query_id"]
    rows = [(qid, {name: per_query[name][i] for name in names}) for i, qid in enumerate(per_query["query_id"])]
    return table(rows, label="Query")


def check_json_target(path) -> None:
    """Called before any work: a missing folder or a folder in the way is a one-line error naming the path."""
    if path is None:
        return
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"--json {path}: is a folder; give a file name, e.g. {path / 'scores.json'}.")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"--json {path}: folder {path.parent} does not exist; create it first.")


def write_json(path, payload: dict) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(payload, handle, ensure_ascii=False, indent=1)
        handle.write("\n")
