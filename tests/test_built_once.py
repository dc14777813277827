"""Tiny models built once per test run (tests/helpers/_built_once.py): one build per key, whichever process asks
first, the folder's name kept, and a build cut short made again."""

import json
import subprocess
import sys
import textwrap

from _built_once import build_key
from _built_once import built_once
from _paths import ROOT


def make(folder, words, seed=0):
    """A stand-in builder: writes its arguments, logs each build beside the cache."""
    folder.mkdir(parents=True)
    (folder / "words.json").write_text(json.dumps([words, seed]))
    with open(folder.parents[1] / "builds.log", "a") as log:
        log.write(f"{folder.name}\n")
    return folder


def builds(root) -> list:
    return (root / "builds.log").read_text().split()


def test_the_same_build_is_made_once_and_keeps_its_name(tmp_path):
    first = built_once(tmp_path, make, "tiny-clip", ["a"], seed=1)
    again = built_once(tmp_path, make, "tiny-clip", ["a"], seed=1)
    other = built_once(tmp_path, make, "tiny-clip", ["a"], seed=2)
    assert first == again != other
    assert first.name == other.name == "tiny-clip"
    assert json.loads((first / "words.json").read_text()) == [["a"], 1]
    assert builds(tmp_path) == ["tiny-clip", "tiny-clip"]


def test_the_key_holds_the_builder_s_source_name_arguments_and_versions():
    key = build_key(make, "m", (["a"],), {"seed": 1})
    assert key == build_key(make, "m", (["a"],), {"seed": 1})
    assert len({key, build_key(make, "n", (["a"],), {"seed": 1}), build_key(make, "m", (["b"],), {"seed": 1})}) == 3
    assert key != build_key(builds, "m", (["a"],), {"seed": 1})


def test_a_build_cut_short_is_made_again(tmp_path):
    key = build_key(make, "tiny", (["a"],), {})
    partial = tmp_path / f"{key}.partial"
    (partial / "tiny").mkdir(parents=True)
    (partial / "tiny" / "half").write_text("")
    built = built_once(tmp_path, make, "tiny", ["a"])
    assert sorted(p.name for p in built.iterdir()) == ["words.json"] and not partial.exists()


BUILDER = """
import json, sys, time
sys.path.insert(0, {helpers!r})
from _built_once import built_once

def make(folder):
    with open({log!r}, "a") as log:
        log.write("start\\n")
    time.sleep(0.5)  # long enough that the other process asks while this one builds
    folder.mkdir(parents=True)
    with open({log!r}, "a") as log:
        log.write("end\\n")
    return folder

print(built_once({root!r}, make, "tiny"))
"""


def test_two_processes_asking_at_once_share_one_build(tmp_path):
    log = tmp_path / "log"
    script = tmp_path / "build.py"
    helpers = str(ROOT / "tests" / "helpers")
    script.write_text(textwrap.dedent(BUILDER.format(helpers=helpers, log=str(log), root=str(tmp_path / "cache"))))
    processes = [subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    printed = [process.communicate(timeout=60)[0] for process in processes]
    assert [process.returncode for process in processes] == [0, 0]
    assert printed[0] == printed[1] and printed[0].strip().endswith("/tiny")
    assert log.read_text().split() == ["start", "end"]
