"""M2KR data whose archives a loopback server serves (``tests/helpers/_range_server.py``), and how to tell from the
server's log which archive members a command read: the tables stay in a local folder, the archives (zip64 end records,
the screenshots split in three parts as on the Hub) lie only under the server's root.
"""

import io
import json
import shutil
import sys
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
from _paths import ROOT
from _range_server import split_zip
from _range_server import zip64_bytes

sys.path.insert(0, str(ROOT / "bench"))
import make_m2kr_synthetic  # noqa: E402

import m2kr  # noqa: E402

TABLE = "train-00000-of-00001.parquet"
IMAGES = "images"  # the served folder holding the archives


HUB_REPO = "Jingbiao/M2KR-Challenge"


def remote_m2kr(
    tmp_path: Path, server, queries=40, passages=240, screenshot_kb=40, query_image_kb=12, hub=False
) -> dict:
    """Synthetic M2KR (``bench/make_m2kr_synthetic.py``) with its tables in ``tmp_path/data`` and its archives,
    rewritten with zip64 end records, only under ``server.root/images/``; ``hub``: served as the Hub repo
    ``HUB_REPO`` too, ``url`` then its ``hf://`` address."""
    made = make_m2kr_synthetic.make(
        tmp_path / "made",
        queries=queries,
        passages=passages,
        screenshot_kb=screenshot_kb,
        query_image_kb=query_image_kb,
    )
    data = tmp_path / "data"
    data.mkdir()
    for config in m2kr.CONFIG_NAMES:
        shutil.copytree(made / config, data / config)
    served = Path(server.root) / IMAGES
    served.mkdir()
    split_zip(served, members(b"".join((made / part).read_bytes() for part in m2kr.ARCHIVES["challenge_passage"])))
    (served / "query_images.zip").write_bytes(zip64_bytes(members((made / "query_images.zip").read_bytes())))
    shutil.rmtree(made)
    url = server.file_url(IMAGES)
    if hub:
        server.add_repo(HUB_REPO, served)
        url = f"hf://datasets/{HUB_REPO}"
    return {"data": data, "served": served, "url": url}


def members(zip_data: bytes) -> list:
    """(name, bytes) of every member of a zip, in order."""
    with zipfile.ZipFile(io.BytesIO(zip_data)) as archive:
        return [(info.filename, archive.read(info)) for info in archive.infolist()]


def local_copy(remote: dict, folder: Path) -> Path:
    """The same data with the archives beside the tables, as a local data folder holds them."""
    shutil.copytree(remote["data"], folder)
    for part in remote["served"].iterdir():
        shutil.copy(part, folder / part.name)
    return folder


class Archive:
    """One served archive (its parts joined): each member's span and where its directory starts."""

    def __init__(self, served: Path, parts):
        self.parts = list(parts)
        self.sizes = [(served / part).stat().st_size for part in self.parts]
        joined = b"".join((served / part).read_bytes() for part in self.parts)
        with zipfile.ZipFile(io.BytesIO(joined)) as archive:
            infos = sorted(archive.infolist(), key=lambda info: info.header_offset)
            self.directory_start = archive.start_dir
        ends = [info.header_offset for info in infos[1:]] + [self.directory_start]
        self.spans = {info.filename: (info.header_offset, end) for info, end in zip(infos, ends)}
        self.directory_bytes = len(joined) - self.directory_start  # central directory and end records

    def read(self, requests) -> tuple:
        """(the members whose bytes the logged requests sent, the directory reads: (start, bytes sent) each) of the
        GETs of this archive's parts; a request that reaches into the directory counts as a directory read."""
        touched, directory = set(), []
        for request in requests:
            part = next((p for p in self.parts if request.path.endswith("/" + p)), None)
            if part is None or request.method != "GET" or not request.sent:
                continue
            index = self.parts.index(part)
            first, _, last = (request.range or "bytes=0-").split("=")[1].partition("-")
            within = int(first) if first else self.sizes[index] - int(last)  # "bytes=-N": the last N bytes
            start = sum(self.sizes[:index]) + within
            end = start + request.sent
            if end > self.directory_start:
                directory.append((start, request.sent))
                continue
            touched |= {name for name, (first, last) in self.spans.items() if first < end and start < last}
        return touched, directory

    def member_bytes(self, names) -> int:
        """The bytes of these members' spans (local header and data)."""
        return sum(self.spans[name][1] - self.spans[name][0] for name in names)


def archives(served: Path) -> dict:
    """The served archives by config."""
    return {config: Archive(served, parts) for config, parts in m2kr.ARCHIVES.items()}


def whole_part_gets(server) -> list:
    """GETs of an archive part (served as a file or from a Hub repo) without a Range header: a part downloaded
    whole."""
    parts = [part for names in m2kr.ARCHIVES.values() for part in names]
    return [r for r in server.gets() if r.range is None and r.path.rsplit("/", 1)[-1] in parts]


def archive_gets(server) -> list:
    """The GETs of archive parts, with a Range header or without."""
    parts = [part for names in m2kr.ARCHIVES.values() for part in names]
    return [r for r in server.gets() if r.path.rsplit("/", 1)[-1] in parts]


def tables(data: Path) -> dict:
    """The three source tables as lists of rows."""
    return {config: pq.read_table(data / config / TABLE).to_pylist() for config in m2kr.CONFIG_NAMES}


def write_run(data: Path, path: Path, failing: int, k: int = 5) -> dict:
    """A run in the official JSON form: the first ``failing`` queries rank ``k`` passages none of which is positive,
    the others their positives first; returns {qid: ranked ids}."""
    rows = tables(data)
    passages = [row["passage_id"] for row in rows["challenge_passage"]]
    ranked = {}
    for index, row in enumerate(rows["challenge_answers"]):
        positives = row["pos_item_ids"]
        others = [pid for pid in passages[index:] + passages[:index] if pid not in positives]
        ranked[row["question_id"]] = others[:k] if index < failing else (positives + others)[:k]
    entries = [
        {"qid": qid, "ranked": [{"did": did, "score": float(k - rank)} for rank, did in enumerate(ids)]}
        for qid, ids in ranked.items()
    ]
    path.write_text(json.dumps(entries))
    return ranked


def images_of(data: Path) -> tuple:
    """({question_id: query image member}, {passage_id: screenshot member}) as the archives name them."""
    rows = tables(data)
    queries = {row["question_id"]: f"query_images/{row['img_path']}" for row in rows["challenge_data"]}
    passages = {row["passage_id"]: f"Web_Image/{row['page_screenshot']}" for row in rows["challenge_passage"]}
    return queries, passages


def archive_files_under(folder: Path, served: Path) -> list:
    """Files under ``folder`` holding a part's first or middle 4 KB (a copy, whole or cut, of an archive part; the
    zip directory at the end of the last part may be cached)."""
    marks = []
    for part in served.iterdir():
        data = part.read_bytes()
        middle = len(data) // 2
        marks += [data[:4096], data[middle : middle + 4096]]
    found = []
    for path in Path(folder).rglob("*"):
        if path.is_file() and not path.is_symlink() and path.stat().st_size >= 4096:
            content = path.read_bytes()
            if any(mark in content for mark in marks):
                found.append(path)
    return found
