"""m2kr.py as a loading script on datasets 3.6, run by the interpreter named in MMRHUB_DATASETS36_PYTHON."""

import json
import os
import shutil

from _datasets36 import needs_datasets36
from _datasets36 import run_datasets36
from _m2kr_helpers import SAMPLE
from _m2kr_helpers import source_rows

import m2kr
import m2kr_archive
import m2kr_format
import mmr_builder
import mmr_cache
import mmr_inputs
import mmr_remote

SNIPPET = """
import json, sys
import datasets, fsspec
from datasets import Image, load_dataset
script, data_dir = sys.argv[1:]
out = {"version": datasets.__version__}
for config in ("challenge_data", "challenge_passage", "challenge_answers"):
    ds = load_dataset(script, config, data_dir=data_dir, trust_remote_code=True, split="train")
    last = ds[len(ds) - 1]
    out[config] = {
        "rows": ds.num_rows,
        "features": {name: type(feature).__name__ for name, feature in ds.features.items()},
        "last": {key: value for key, value in last.items() if key != "image"},
    }
    if "image" in ds.features:
        out[config]["size"] = list(last["image"].size)
        out[config]["path"] = ds.cast_column("image", Image(decode=False))[0]["image"]["path"]
streamed = load_dataset(script, "challenge_passage", data_dir=data_dir, trust_remote_code=True, split="train",
                        streaming=True)
rows = list(streamed)
out["streamed"] = [len(rows), rows[0]["passage_id"], list(rows[0]["image"].size)]
out["archive_module"] = fsspec.get_filesystem_class("splitzip").__module__
print(json.dumps(out))
"""


@needs_datasets36
def test_m2kr_runs_as_a_script_on_datasets_36(tmp_path):
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    env.pop("PYTHONPATH", None)  # the script must stand alone: no mmrhub, no installed m2kr
    # What a user downloads: the script and its siblings, alone in a folder (datasets copies the sibling).
    script = tmp_path / "script"
    script.mkdir()
    for module in (m2kr, m2kr_archive, m2kr_format, mmr_inputs, mmr_cache, mmr_builder, mmr_remote):
        shutil.copy(module.__file__, script)
    result = run_datasets36(SNIPPET, script / "m2kr.py", os.path.relpath(SAMPLE, tmp_path), env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["version"] == "3.6.0"
    for config in m2kr.CONFIG_NAMES:
        rows = source_rows(config)
        got = out[config]
        assert got["rows"] == len(rows)
        # datasets 3.6 has Sequence where the latest has List
        kinds = {name: type(feature).__name__ for name, feature in m2kr.FEATURES[config].items()}
        assert got["features"] == {name: {"List": "Sequence"}.get(kind, kind) for name, kind in kinds.items()}
        expected_last = {**rows[-1], "question": rows[-1]["question"] or ""} if config == "challenge_data" else rows[-1]
        assert {key: got["last"][key] for key in rows[-1]} == expected_last
    assert out["challenge_data"]["last"]["task"] == "image-to-document"
    assert out["challenge_data"]["size"] == [40, 40] and out["challenge_passage"]["size"] == [48, 32]
    parts = "|".join(str(SAMPLE / part) for part in m2kr.ARCHIVES["challenge_passage"])
    assert out["challenge_passage"]["path"] == f"splitzip://Web_Image/Q5247669.png::{parts}"
    assert out["streamed"] == [len(source_rows("challenge_passage")), "Q5247669", [48, 32]]
    # The sibling as datasets copied it beside the script in its modules cache (HF_HOME), not found elsewhere.
    assert out["archive_module"].startswith("datasets_modules.") and out["archive_module"].endswith(".m2kr_archive")


REMOTE_SNIPPET = """
import json, sys
from datasets import load_dataset
script, data_dir, images_dir, wanted = sys.argv[1:]
ds = load_dataset(script, "challenge_passage", data_dir=data_dir, images_dir=images_dir, ids=wanted.split(","),
                  trust_remote_code=True, split="train")
print(json.dumps([[row["passage_id"], list(row["image"].size)] for row in ds]))
"""


@needs_datasets36
def test_m2kr_script_reads_url_archives_in_place_on_datasets_36(tmp_path, range_server):
    """The loading script with images_dir= a URL and ids=: the parts are read in place (mmr_remote copied too)."""
    from _m2kr_helpers import unsplit_zip
    from _range_server import split_zip

    archive = unsplit_zip()
    split_zip(range_server.root, [(info.filename, archive.read(info)) for info in archive.infolist()])
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    env.pop("PYTHONPATH", None)
    script = tmp_path / "script"
    script.mkdir()
    for module in (m2kr, m2kr_archive, m2kr_format, mmr_inputs, mmr_cache, mmr_builder, mmr_remote):
        shutil.copy(module.__file__, script)
    wanted = [row["passage_id"] for row in source_rows("challenge_passage")][::100]
    result = run_datasets36(
        REMOTE_SNIPPET, script / "m2kr.py", SAMPLE, range_server.url + "/files", ",".join(wanted), env=env
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == [[pid, [48, 32]] for pid in wanted]
    gets = range_server.gets("Web_Image")
    assert all(request.range for request in gets) and len(gets) <= 3 + len(wanted)
    assert range_server.sent() < sum(part.stat().st_size for part in range_server.root.iterdir()) / 2
