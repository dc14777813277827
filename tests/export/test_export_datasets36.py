"""The exported repos load on datasets 3.6 (run with the interpreter named by MMRHUB_DATASETS36_PYTHON) as
exactly what the builders give there: same Arrow schema, same rows, image bytes identical."""

import json
import os
import sys

import pytest
from _datasets36 import needs_datasets36
from _datasets36 import run_datasets36
from _export_helpers import SPLITS
from _paths import ROOT as REPO_ROOT

pytestmark = needs_datasets36

COMPARE = """
import json, os, sys
import datasets, pyarrow as pa
from datasets import get_dataset_config_names, get_dataset_split_names, load_dataset
from datasets.utils.file_utils import xopen
sys.path.insert(0, sys.argv[1])
benchmark, out, split = sys.argv[2], sys.argv[3], sys.argv[4]
module = __import__(benchmark)

def expected(table):
    for index, field in enumerate(table.schema):
        if field.name == "image":
            images = []
            for image in table[field.name].to_pylist():
                with xopen(image["path"], "rb") as f:
                    images.append({"bytes": f.read(), "path": os.path.basename(image["path"].split("::")[0])})
            table = table.set_column(index, field, pa.array(images, field.type))
    return table

report = {"version": datasets.__version__, "configs": get_dataset_config_names(out)}
for config in module.CONFIG_NAMES:
    want = expected(module.load(config).with_format("arrow")[:])
    got = load_dataset(out, config, split=split).with_format("arrow")[:]
    streamed = load_dataset(out, config, split=split, streaming=True)
    if "image" in module.FEATURES[config]:
        streamed = streamed.cast_column("image", datasets.Image(decode=False))
    streamed_rows = list(streamed)
    report[config] = {
        "splits": get_dataset_split_names(out, config),
        "rows": got.num_rows,
        "same_schema": got.schema.remove_metadata() == want.schema.remove_metadata(),
        "same_rows": got.to_pylist() == want.to_pylist(),
        "same_streamed": streamed_rows == want.to_pylist(),
    }
print(json.dumps(report))
"""


@pytest.mark.parametrize("benchmark", ["mipr", "m2kr"])
def test_export_round_trips_on_datasets_36(exported, benchmark, tmp_path):
    out = exported(benchmark)
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_DATASETS_CACHE": str(tmp_path / "hf" / "datasets")}
    result = run_datasets36(COMPARE, REPO_ROOT, benchmark, out, SPLITS[benchmark], env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["version"] == "3.6.0"
    module = __import__(benchmark)
    assert report["configs"] == sorted(module.CONFIG_NAMES)
    for config in module.CONFIG_NAMES:
        assert report[config] == {
            "splits": [SPLITS[benchmark]],
            "rows": len(module.load(config)),
            "same_schema": True,
            "same_rows": True,
            "same_streamed": True,
        }, (config, sys.version)
