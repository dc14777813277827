"""The cache key of a local model (embedding and rerank caches) depends on every byte of its weights."""

from mmrhub.records.provenance import model_identity


def checkpoint(folder, middle: bytes):
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "tiny"}')
    size = 5 << 20  # larger than the first + last MiB that the old key read
    weights = bytearray(size)
    weights[size // 2 : size // 2 + len(middle)] = middle
    (folder / "model.safetensors").write_bytes(bytes(weights))
    return folder


def test_checkpoints_differing_only_in_the_middle_get_different_keys(tmp_path):
    first = model_identity(str(checkpoint(tmp_path / "a", b"\x01")))
    second = model_identity(str(checkpoint(tmp_path / "b", b"\x02")))
    assert first["files"] != second["files"]
    same = model_identity(str(checkpoint(tmp_path / "c", b"\x01")))
    assert same["files"] == first["files"]


def test_hidden_files_do_not_change_the_key(tmp_path):
    folder = checkpoint(tmp_path / "a", b"\x01")
    before = model_identity(str(folder))
    (folder / ".cache").mkdir()
    (folder / ".cache" / "lock").write_text("x")
    assert model_identity(str(folder)) == before
