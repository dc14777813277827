"""Means per group (--by-category, --by-task): groups listed in natural order, numbers by value."""

import json

from _mipr_helpers import read_jsonl
from _paths import MIPR_EMBEDDING
from _paths import MIPR_SAMPLE

from mmrhub.cli import main
from mmrhub.scoring.groups import group_means
from mmrhub.scoring.groups import natural_key


def test_labels_sort_numbers_by_value():
    labels = ["类目10", "类目2", "b", "类目1", "a10", "a9", "类目02"]
    assert sorted(labels, key=natural_key) == ["a9", "a10", "b", "类目1", "类目02", "类目2", "类目10"]
    means = group_means({"query_id": list("abcd"), "m": [1.0, 0.0, 0.5, None]}, ["类目10", "类目2", "类目2", "类目9"])
    assert list(means) == ["类目2", "类目9", "类目10"]
    assert means["类目2"] == {"m": 0.25, "num_queries": 2} and means["类目9"] == {"m": None, "num_queries": 1}


def test_by_category_lists_categories_in_natural_order(tmp_path, capsys):
    data = tmp_path / "mipr"
    data.mkdir()
    for name in ("mipr_query.jsonl", "mipr_annotation.jsonl"):
        (data / name).write_bytes((MIPR_SAMPLE / name).read_bytes())
    corpus = read_jsonl(MIPR_SAMPLE / "mipr_corpus.jsonl")
    tops = sorted({row["treecate_full_path"].split("-")[0] for row in corpus})
    number = {top: index + 1 for index, top in enumerate(tops)}  # 类目1 ... 类目N, N over 9
    assert len(tops) > 9
    for row in corpus:
        top, _, rest = row["treecate_full_path"].partition("-")
        row["treecate_full_path"] = f"类目{number[top]}-{rest}"
    (data / "mipr_corpus.jsonl").write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in corpus))
    assert main(["evaluate", "mipr", str(MIPR_EMBEDDING), "--data-dir", str(data), "--by-category"]) == 0
    out = capsys.readouterr().out
    shown = [line.split(" | ")[0].strip("| ") for line in out.split("simulated_embedding_top50:")[1].splitlines()]
    shown = [label for label in shown if label.startswith("类目")]
    assert len(shown) > 9 and shown == sorted(shown, key=lambda label: int(label[2:]))
