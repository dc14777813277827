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
