"""Reading a remote copy through the download manager: a loopback HTTP server stands in for the host."""

import functools
import http.server
import threading

import datasets
import pytest

import mipr


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def base_url():
    handler = functools.partial(QuietHandler, directory=str(mipr.SAMPLE_DIR))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(autouse=True)
def online(monkeypatch):
    # The offline switch guards the Hub; this server is on the loopback address.
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", False)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)


def test_remote_copy_gives_the_local_rows(base_url, tmp_path):
    remote = mipr.load("qrels", data_dir=base_url, cache_dir=str(tmp_path))
    assert remote.to_list() == mipr.load("qrels").to_list()


def test_remote_images_are_referenced_by_url_and_decode(base_url, tmp_path):
    queries = mipr.load("queries", data_dir=base_url, cache_dir=str(tmp_path))
    assert queries.data.column("image")[0].as_py() == {"bytes": None, "path": f"{base_url}/images/query_images/1.jpg"}
    assert queries[0]["image"].size == (48, 48)


def test_remote_streaming(base_url):
    first = next(iter(mipr.load("corpus", data_dir=base_url, streaming=True)))
    assert first["item_id"] == "7ab0ab84666fa41b" and first["image"].size == (48, 48)


def test_missing_remote_image_is_reported(base_url, tmp_path, monkeypatch):
    import fsspec.implementations.http as http_fs

    listing = http_fs.HTTPFileSystem.ls

    def without_first(self, url, detail=True, **kwargs):
        entries = listing(self, url, detail=detail, **kwargs)
        return entries[1:] if "product_images" in url else entries

    monkeypatch.setattr(http_fs.HTTPFileSystem, "ls", without_first)
    with pytest.raises(
        mipr.MiprDataError, match=r"1 image file\(s\) missing from http://127.0.0.1:\d+/images/product_images/"
    ):
        mipr.load("corpus", data_dir=base_url, cache_dir=str(tmp_path))


def test_a_web_server_that_lists_no_folder_gets_one_image_checked(range_server, tmp_path, caplog):
    """The tests' range server, like S3, a CDN or nginx without autoindex, answers 404 for a folder."""
    import logging
    import shutil

    shutil.copytree(mipr.SAMPLE_DIR, range_server.root / "mipr")
    base = range_server.file_url("mipr")
    with caplog.at_level(logging.WARNING, logger="mipr"):
        corpus = mipr.load("corpus", data_dir=base, cache_dir=str(tmp_path / "c"))
    asked = [r.path for r in range_server.requests if "/product_images/" in r.path]
    first = sorted(corpus[mipr.IMAGE_NAME_FIELDS["corpus"]])[0]
    assert asked == [f"/files/mipr/images/product_images/{first}"]  # one image asked for, not a listing
    assert f"{base}/images/product_images/ cannot be listed (a web server without folder listings)" in caplog.text
    assert "check_images=False (--no-check-images) skips this check" in caplog.text
    assert corpus[0]["image"].size == (48, 48)

    names = sorted(p.name for p in (range_server.root / "mipr" / "images" / "product_images").iterdir())
    (range_server.root / "mipr" / "images" / "product_images" / names[0]).unlink()
    with pytest.raises(mipr.MiprDataError) as caught:
        mipr.load("corpus", data_dir=base, cache_dir=str(tmp_path / "c2"))
    assert str(caught.value) == (
        f"{base}/mipr_corpus.jsonl: {base}/images/product_images/ cannot be listed (a web server without folder "
        f"listings?) and its image {names[0]} is not there (404 Not Found): check data_dir, or pass "
        "check_images=False (--no-check-images) to skip the image checks."
    )
