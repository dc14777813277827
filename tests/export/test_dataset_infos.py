import json

import datasets
from _paths import ROOT

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.export.dataset_infos import dataset_infos


def test_dataset_infos_json_is_up_to_date():
    committed = json.loads((ROOT / "dataset_infos.json").read_text(encoding="utf-8"))
    assert committed == dataset_infos(BENCHMARKS.values()), (
        "stale: run `mmrhub info --dataset-infos dataset_infos.json`"
    )


def test_dataset_infos_records_the_sample_sizes():
    infos = json.loads((ROOT / "dataset_infos.json").read_text(encoding="utf-8"))
    assert infos["mipr/queries"]["splits"] == {"test": {"name": "test", "num_examples": 27}}
    assert infos["m2kr/challenge_passage"]["splits"] == {"train": {"name": "train", "num_examples": 300}}
    assert infos["mipr/qrels"]["builder_name"] == "mipr" and infos["mipr/qrels"]["download_size"] > 0
    assert infos["mipr/corpus"]["features"]["image"] == {"_type": "Image"}


def test_features_are_written_so_every_datasets_version_reads_them():
    infos = json.loads((ROOT / "dataset_infos.json").read_text(encoding="utf-8"))
    items = infos["mipr/qrels"]["features"]["items"]
    assert items == [
        {"item_id": {"dtype": "string", "_type": "Value"}, "final_grade": {"dtype": "string", "_type": "Value"}}
    ]
    for key, info in infos.items():
        benchmark, config = key.split("/")
        assert datasets.Features.from_dict(info["features"]) == BENCHMARKS[benchmark].builder().FEATURES[config]
