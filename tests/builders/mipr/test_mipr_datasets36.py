"""The builder as a loading script on datasets 3.6, run with the interpreter named by MMRHUB_DATASETS36_PYTHON."""

import json
import os

import datasets
from _datasets36 import needs_datasets36
from _datasets36 import run_datasets36
from _mipr_helpers import copy_sample
from _mipr_helpers import edit_jsonl

import mipr

pytestmark = needs_datasets36

LOAD_ALL = """
import json, sys, datasets
from datasets import load_dataset
script, data_dir = sys.argv[1], sys.argv[2]
out = {"version": datasets.__version__}
for config in ("queries", "corpus", "qrels"):
    ds = load_dataset(script, config, data_dir=data_dir, split="test", trust_remote_code=True)
    raw = ds.cast_column("image", datasets.Image(decode=False)) if "image" in ds.features else ds
    out[config] = {"rows": raw.to_list(), "features": ds.features.to_dict()}
queries = load_dataset(script, "queries", data_dir=data_dir, split="test", trust_remote_code=True)
out["decoded_size"] = list(queries[0]["image"].size)
streamed = load_dataset(script, "qrels", data_dir=data_dir, split="test", streaming=True, trust_remote_code=True)
out["streamed_qrels"] = list(streamed)
print(json.dumps(out))
"""

BAD_INPUT = """
import sys
from datasets import load_dataset
try:
    load_dataset(sys.argv[1], "qrels", data_dir=sys.argv[2], split="test", trust_remote_code=True)
except Exception as err:
    print(type(err).__name__, err)
"""


def run36(code, *args, tmp_path):
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf")}
    result = run_datasets36(code, *args, env=env)
    if result.returncode:
        raise AssertionError(result.stderr[-3000:])
    return result.stdout


def test_script_loads_every_config_like_the_imported_builder(tmp_path):
    out = json.loads(run36(LOAD_ALL, mipr.__file__, str(mipr.SAMPLE_DIR), tmp_path=tmp_path).splitlines()[-1])
    assert out["version"].startswith("3.6")
    for config in mipr.CONFIG_NAMES:
        expected = mipr.load(config)
        if "image" in expected.features:
            expected = expected.cast_column("image", datasets.Image(decode=False))
        assert out[config]["rows"] == expected.to_list()
    assert out["decoded_size"] == [48, 48]
    assert out["streamed_qrels"] == mipr.load("qrels").to_list()
    assert set(out["corpus"]["features"]) == {"item_id", "title", "pict_url", "treecate_full_path", "image"}


def test_script_errors_reach_the_user_first(tmp_path):
    data_dir = copy_sample(tmp_path / "mipr")
    edit_jsonl(data_dir / "mipr_annotation.jsonl", lambda rows: rows[7]["items"][4].update(final_grade="L3"))
    out = run36(BAD_INPUT, mipr.__file__, str(data_dir), tmp_path=tmp_path)
    assert out.startswith("MiprDataError ")
    assert 'idx "8" items[5]: unknown final_grade "L3"; expected one of L1, L2, N1, N2, N3.' in out


COUNT_QUERIES = """
import sys
from datasets import load_dataset
print(load_dataset(sys.argv[1], "queries", data_dir=sys.argv[2], split="test", trust_remote_code=True).num_rows)
"""


def test_script_beside_dataset_infos_loads_data_of_another_size(tmp_path):
    # dataset_infos.json sits beside mipr.py; datasets 3.6 must not hold other data to the sample's sizes.
    data_dir = copy_sample(tmp_path / "mipr")
    edit_jsonl(
        data_dir / "mipr_query.jsonl", lambda rows: rows.append({"idx": "28", "query": "新", "image_url": "1.jpg"})
    )
    assert run36(COUNT_QUERIES, mipr.__file__, str(data_dir), tmp_path=tmp_path).split() == ["28"]
