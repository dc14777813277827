import json
from pathlib import Path

from mmrhub.dataset_infos import dataset_infos

ROOT = Path(__file__).resolve().parent.parent


def test_dataset_infos_json_is_up_to_date():
    committed = json.loads((ROOT / "dataset_infos.json").read_text(encoding="utf-8"))
    assert committed == dataset_infos(), "stale: run `mmrhub info --dataset-infos dataset_infos.json`"


def test_dataset_infos_records_the_sample_sizes():
    infos = json.loads((ROOT / "dataset_infos.json").read_text(encoding="utf-8"))
    assert infos["queries"]["splits"] == {"test": {"name": "test", "num_examples": 27}}
    assert infos["qrels"]["builder_name"] == "mipr" and infos["qrels"]["download_size"] > 0
    assert infos["corpus"]["features"]["image"] == {"_type": "Image"}
