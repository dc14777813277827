"""Markdown tables of scores (values x100, two decimals, like the seed's table) and the --json output."""

import json

COUNT_KEYS = ("num_queries", "num_multi_category_queries")


def measure_names(result: dict) -> list:
    return [name for name, value in result.items() if isinstance(value, float)]


def table(rows: list, label: str = "System", extra: tuple = ()) -> str:
    """rows: (name, result dict) pairs -> a Markdown table of their float measures; ``extra`` adds count columns."""
    names = measure_names(rows[0][1])
    lines = [
        "| " + " | ".join([label, *names, *extra]) + " |",
        "|" + "---|" + "---:|" * (len(names) + len(extra)),
    ]
    for name, result in rows:
        cells = [f"{100 * result[measure]:.2f}" for measure in names] + [str(result[key]) for key in extra]
        lines.append("| " + " | ".join([name, *cells]) + " |")
    return "\n".join(lines)


def per_query_table(per_query: dict, query_ids: list) -> str:
    names = [name for name in per_query if name != "query_id"]
    rows = [(qid, {name: per_query[name][i] for name in names}) for i, qid in enumerate(query_ids)]
    return table(rows, label="Query")


def write_json(path: str, payload: dict) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(payload, handle, ensure_ascii=False, indent=1)
        handle.write("\n")
