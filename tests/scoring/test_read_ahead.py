"""Run files read ahead on a thread per core (mmrhub.scoring.score.ReadAhead): each file once, large files and
standard input alone when asked, problems raised in the order asked whichever read finished first."""

import threading
import time

import pytest

from mmrhub.scoring import score
from mmrhub.scoring.score import ReadAhead


def files(tmp_path, sizes):
    paths = []
    for number, size in enumerate(sizes):
        paths.append(tmp_path / f"run{number}.json")
        paths[-1].write_bytes(b"x" * size)
    return paths


def recorder(delays=None, fail=()):
    calls = []

    def read(path):
        time.sleep((delays or {}).get(path.name, 0))
        calls.append((path.name, threading.current_thread() is threading.main_thread()))
        if path.name in fail:
            raise ValueError(f"{path.name}: refused")
        return path.name

    return read, calls


def test_small_files_are_read_off_the_main_thread_and_each_once(tmp_path, monkeypatch):
    monkeypatch.setattr(score, "usable_cores", lambda: 2)
    a, b, c = files(tmp_path, [10, 10, 10])
    read, calls = recorder()
    with ReadAhead(read, [a, b, tmp_path / "." / "run0.json", c, None]) as get:
        assert [get(a), get(b), get(c), get(tmp_path / "x" / ".." / "run0.json")] == [
            "run0.json",
            "run1.json",
            "run2.json",
            "run0.json",
        ]
    assert sorted(calls) == [("run0.json", False), ("run1.json", False), ("run2.json", False)]


def test_a_large_file_is_read_alone_on_the_main_thread_when_asked(tmp_path, monkeypatch):
    monkeypatch.setattr(ReadAhead, "CONCURRENT_BYTES", 100)
    small, large, other = files(tmp_path, [100, 101, 50])
    read, calls = recorder()
    with ReadAhead(read, [small, large, other]) as get:
        time.sleep(0.2)  # the small ones are read by now; the large one is not started
        assert ("run1.json", True) not in calls and len(calls) == 2
        assert get(large) == "run1.json"
    assert calls[-1] == ("run1.json", True)


def test_one_small_file_is_read_on_the_main_thread(tmp_path):
    (only,) = files(tmp_path, [10])
    read, calls = recorder()
    with ReadAhead(read, [only, None, None]) as get:
        assert get(only) == "run0.json"
    assert calls == [("run0.json", True)]


def test_standard_input_is_read_when_asked(tmp_path):
    a, b = files(tmp_path, [10, 10])
    asked = []
    with ReadAhead(lambda path: asked.append(str(path)) or str(path), [a, "-", b]) as get:
        assert get("-") == "-"
    assert asked.count("-") == 1


def test_the_first_problem_in_the_order_asked_is_raised(tmp_path):
    """run0 is refused after run1 was: run0's problem is the one raised, as a read one after another raises it."""
    a, b = files(tmp_path, [10, 10])
    read, calls = recorder(delays={"run0.json": 0.3}, fail={"run0.json", "run1.json"})
    with pytest.raises(ValueError, match=r"^run0.json: refused$"):
        with ReadAhead(read, [a, b]) as get:
            for path in (a, b):
                get(path)
    assert [name for name, _ in calls] == ["run1.json", "run0.json"]
