"""M2KR-WWW2025-Challenge: image(+text) to document retrieval, as a Hugging Face `datasets` builder.

Reads the layout of the Hub repos (a local folder, a base URL, or the Hub itself: ``data_dir=m2kr.HUB_TABLES``)::

    challenge_data/train-*.parquet  challenge_passage/train-*.parquet  challenge_answers/train-*.parquet
    [images/]query_images.zip  [images/]Web_Image.zip.001  .002  .003

The archives are looked for in ``images/`` (where the dataset card's ``hf_hub_download`` recipe puts them), then
beside the tables, or in ``images_dir=``.

Configs ``challenge_data``, ``challenge_passage`` and ``challenge_answers``, split ``train``. Images are read in
place: nothing is extracted. The split screenshot zip is read as one virtual file through the ``splitzip`` fsspec
protocol of ``m2kr_archive.py``, registered on import; each row stores a reference
``splitzip://<member>::<part>|<part>|...`` and the image is decoded only on access (also when streaming and inside
DataLoader workers). Every table and archive is validated before anything is written: bad input raises
:class:`M2krDataError` naming the file, row or id.

Use it imported (any ``datasets`` version)::

    import m2kr
    passages = m2kr.load("challenge_passage", data_dir="path/to/m2kr")

or as a loading script on ``datasets`` < 4.0, with ``m2kr_archive.py`` in the same folder::

    load_dataset("path/to/m2kr.py", "challenge_answers", data_dir="path/to/m2kr", trust_remote_code=True)
"""

import glob
import itertools
import logging
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Optional

import datasets
import fsspec
import pyarrow as pa
from datasets.utils.file_utils import xopen

# The format's rules (m2kr_format: also this builder's names, m2kr.M2krDataError, ...) and the split-zip file system
# (m2kr_archive, which registers the protocol) live beside this file. As a datasets < 4 loading script this file is
# a module of a package, and datasets copies a sibling beside it only for a relative import that starts a line
# (hence the backslash, which a formatter would undo) and has no comment after it (read as a URL to download).
# Imported as a top-level module (installed, or from the checkout) it has no package.
# fmt: off
if __package__: \
from .m2kr_format import (CONFIG_NAMES, ID_FIELDS, NULLABLE, SOURCE_SCHEMAS, SPLIT, TASKS, M2krDataError,
                          check_answers, read_config, read_table, table_display)
else:
    from m2kr_format import (CONFIG_NAMES, ID_FIELDS, NULLABLE, SOURCE_SCHEMAS, SPLIT, TASKS, M2krDataError,
                             check_answers, read_config, read_table, table_display)
if __package__: \
from .m2kr_archive import archive_url, check_local_headers, download_parts, open_archive, open_parts, open_zip
else:
    from m2kr_archive import archive_url, check_local_headers, download_parts, open_archive, open_parts, open_zip
if __package__: \
from .mmr_remote import configure, pinned, read_many, state_of
else:
    from mmr_remote import configure, pinned, read_many, state_of
if __package__: \
from .mmr_inputs import load_json_file
else:
    from mmr_inputs import load_json_file
if __package__: \
from .mmr_cache import content_hash, content_key, key_of, metadata_key
else:
    from mmr_cache import content_hash, content_key, key_of, metadata_key
if __package__: \
from .mmr_builder import SourceKeyedBuilder, bundled_sample, datasets_offline, hub_help, hub_problem
else:
    from mmr_builder import SourceKeyedBuilder, bundled_sample, datasets_offline, hub_help, hub_problem
# fmt: on

logger = logging.getLogger(__name__)

_CITATION = """\
@inproceedings{lin-etal-2024-preflmr,
    title = "{P}re{FLMR}: Scaling Up Fine-Grained Late-Interaction Multi-modal Retrievers",
    author = "Lin, Weizhe and Mei, Jingbiao and Chen, Jinghong and Byrne, Bill",
    booktitle = "Proceedings of the 62nd Annual Meeting of the Association for Computational Linguistics",
    year = "2024",
    url = "https://aclanthology.org/2024.acl-long.289",
    pages = "5294--5316",
}
"""
_DESCRIPTION = (
    "M2KR-WWW2025-Challenge (Task 2 of Track 1, EReL@MIR, WWW 2025): retrieve, for each of 6,415 image or "
    "image+question queries, its passages from a pool of 47,318 Wikipedia-like passages with web screenshots."
)
# The challenge card states no licence; the parent M2KR benchmark
# (BByrneLab/multi_task_multi_modal_knowledge_retrieval_benchmark_M2KR) is MIT.
_LICENSE = "mit"
# Its name as an MTEB task, the one the export card's snippet and mmrhub.mteb both give it (MTEB's any-to-any retrieval
# tasks are named <dataset><query modalities>2<document modalities>Retrieval: image+text to image+text is IT2IT).
MTEB_TASK = "M2KRIT2ITRetrieval"

# The bundled sample: data/m2kr/ beside this file in the repository, mmrhub/data/m2kr/ in an installed wheel.
SAMPLE_DIR = bundled_sample("m2kr")
HUB_TABLES = "hf://datasets/Jingbiao/M2KR-WWW2025-Challenge"
HUB_IMAGES = "hf://datasets/Jingbiao/M2KR-Challenge"
# What a local data_dir holds, for the advice when the Hub cannot be read.
LOCAL_LAYOUT = f"laid out like the Hub repos (<config>/{SPLIT}-*.parquet, and the archives in images/ or beside them)"

# The archive parts each config reads its images from, in order, and the column naming each row's member.
ARCHIVES = {
    "challenge_data": ("query_images.zip",),
    "challenge_passage": ("Web_Image.zip.001", "Web_Image.zip.002", "Web_Image.zip.003"),
}
IMAGE_NAME_FIELDS = {"challenge_data": "img_path", "challenge_passage": "page_screenshot"}


_STRING = datasets.Value("string")
FEATURES = {
    "challenge_data": datasets.Features(
        {
            "img_path": _STRING,
            "instruction": _STRING,
            "question": _STRING,
            "question_id": _STRING,
            "pos_item_ids": datasets.Sequence(_STRING),
            "pos_item_contents": datasets.Sequence(_STRING),
            "image": datasets.Image(),
            "task": _STRING,
        }
    ),
    "challenge_passage": datasets.Features(
        {"passage_id": _STRING, "passage_content": _STRING, "page_screenshot": _STRING, "image": datasets.Image()}
    ),
    "challenge_answers": datasets.Features({"question_id": _STRING, "pos_item_ids": datasets.Sequence(_STRING)}),
}


@dataclass
class M2krConfig(datasets.BuilderConfig):
    """One M2KR table. ``data_dir``: the folder or URL holding the tables (and, by default, the archives).

    ``images_dir``: the folder holding the archives when they are neither in ``<data_dir>/images/`` (where the
    dataset card's ``hf_hub_download(..., local_dir="images/")`` puts them) nor in ``<data_dir>/``.
    ``check_images=False`` reads no archive: the ``image`` column is then empty (scoring never needs images).
    Remote archives (``http(s)://``, ``hf://``) are read in place, one range request per image decoded;
    ``download_archives=True`` downloads them whole instead (about 121 GB for the real screenshots), e.g. from a
    server without Range support. ``ids``: only the rows with these ids (``question_id``; ``passage_id`` for
    ``challenge_passage``), in that order: only their images are referenced, so only theirs are ever read.
    """

    check_images: bool = True
    images_dir: Optional[str] = None
    download_archives: bool = False
    ids: Optional[tuple] = None


class M2kr(SourceKeyedBuilder, datasets.ArrowBasedBuilder):
    """Builder for the M2KR challenge queries, passages and ground truth.

    ``data_dir``: the folder or URL holding the tables and archives; ``HUB_TABLES`` for the two Hub repos; without
    it, the bundled sample (as ``load()``), and a warning says so.
    """

    BUILDER_CONFIG_CLASS = M2krConfig
    BUILDER_CONFIGS = [
        M2krConfig(name=name, version=datasets.Version("1.0.0"), description=description)
        for name, description in (
            ("challenge_data", "Image and image+question queries."),
            ("challenge_passage", "Passages with their web screenshots."),
            ("challenge_answers", "Positive passage ids per query."),
        )
    ]
    DEFAULT_CONFIG_NAME = "challenge_data"

    BENCHMARK = "M2KR"
    SAMPLE_DIR = SAMPLE_DIR
    FEATURES = FEATURES
    INFO = {"description": _DESCRIPTION, "citation": _CITATION, "license": _LICENSE}

    def source_hash(self, data_dir=None, images_dir=None, config_name=None, **kwargs) -> str:
        """The cache key's fingerprint of the sources config ``config_name`` reads (``cache_hash``)."""
        return cache_hash(data_dir, images_dir, config_name)

    def _split_generators(self, dl_manager):
        # Validation runs here, not in _generate_tables: datasets would wrap its errors in DatasetGenerationError.
        tables_base = tables_source(self.config.data_dir)
        name = self.config.name
        names = CONFIG_NAMES if name == "challenge_answers" else (name,)  # answers are checked against both
        options = dl_manager.download_config.storage_options or {}
        urls = {config: list_tables(tables_base, config, options) for config in names}
        paths = dl_manager.download(urls)
        opener = partial(xopen, mode="rb", download_config=dl_manager.download_config)
        table = read_config(name, {config: (paths[config], urls[config]) for config in names}, opener)
        if self.config.ids is not None:
            table = rows_with_ids(table, ID_FIELDS[name], wanted_ids(self.config.ids))
        if name in ARCHIVES and not self.config.check_images:
            logger.warning(
                "%s: check_images=False (--no-check-images), so no archive is read and the image column is empty.", name
            )
            table = table.append_column("image", pa.nulls(table.num_rows, _IMAGE_STORAGE))
        elif name in ARCHIVES:
            parts = find_archives(name, self.config.data_dir, self.config.images_dir)
            if "://" not in parts[0]:
                parts = dl_manager.download(parts)  # a local path as it is
            else:
                if parts[0].startswith("hf://"):
                    # References at today's commit: they keep reading the bytes whose directory was read.
                    folder = pinned(parts[0].rsplit("/", 1)[0], _options_for(parts[0], options))
                    parts = [f"{folder}/{part.rsplit('/', 1)[1]}" for part in parts]
                if self.config.download_archives:  # only when asked: whole, checked, kept in $HF_HOME/mmrhub
                    fs = fsspec.filesystem(parts[0].split("://")[0], **_options_for(parts[0], options))
                    parts = download_parts(fs, [fs._strip_protocol(part) for part in parts], parts)
            storage_options = _options_for(parts[0], options)
            table = add_images(table, name, [_absolute(part) for part in parts], storage_options)
        return [datasets.SplitGenerator(name=datasets.Split.TRAIN, gen_kwargs={"table": table})]


def tables_source(data_dir: Optional[str]) -> str:
    """Where the tables are: ``data_dir`` (``HUB_TABLES`` for the Hub)."""
    if not data_dir:
        raise M2krDataError(
            "No data_dir given, and no bundled sample beside this script: pass data_dir= a local folder laid out "
            f"like the Hub repos (<config>/{SPLIT}-*.parquet, and the archives in images/ or beside them), or "
            f"data_dir={HUB_TABLES!r} to read the Hub."
        )
    data_dir = _absolute(str(data_dir))
    if "::" in data_dir and "://" not in data_dir:
        # datasets and fsspec read "::" as a chain of URLs, so no file under it could be opened.
        raise M2krDataError(f"data_dir {data_dir}: a local path must not contain '::'; move or link the folder.")
    return data_dir


# Where the archives can be read in place from: a local folder, an http(s):// folder, an hf:// repo.
READABLE_PROTOCOLS = ("file", "http", "https", "hf")


def archive_folders(data_dir: Optional[str], images_dir: Optional[str]) -> list:
    """The folders that may hold the archives, in the order they are tried."""
    if images_dir:
        return [check_images_dir(_absolute(str(images_dir)))]
    data_dir = _absolute(str(data_dir))
    if data_dir.rstrip("/") == HUB_TABLES:
        return [HUB_IMAGES]  # the Hub keeps the archives in a repo of their own
    if "://" in data_dir:
        return [data_dir]  # a remote folder cannot be searched cheaply: the archives sit beside the tables
    return [os.path.join(data_dir, "images"), data_dir]


def check_images_dir(images_dir: str) -> str:
    """``images_dir``, refused in one line when the archives cannot be read from it: another protocol (``ftp://``,
    ``s3://``: fsspec would fail deep inside, or ask to install a package), or the archive file itself."""
    protocol = images_dir.split("://", 1)[0] if "://" in images_dir else "file"
    if protocol not in READABLE_PROTOCOLS or "::" in images_dir:
        raise M2krDataError(
            f"images_dir {images_dir}: the archives are read in place from a local folder, an http(s):// folder on a "
            "server with Range support (an S3 bucket's https:// address is one) or an hf:// repo, not from "
            f"{protocol}://; copy them to a local folder, or serve them over https://."
        )
    name = images_dir.rstrip("/").rsplit("/", 1)[-1]
    archives = {part for parts in ARCHIVES.values() for part in parts}
    if os.path.isfile(images_dir) if protocol == "file" else re.search(r"\.zip(\.\d+)?$", name) or name in archives:
        folder = images_dir.rstrip("/").rsplit("/", 1)[0] or "/"
        raise M2krDataError(
            f"images_dir {images_dir} names the archive {name} itself; pass the folder holding the archives "
            f"({', '.join(sorted(archives))}): images_dir={folder!r} (--images-dir {folder})."
        )
    return images_dir


def find_archives(config: str, data_dir: Optional[str], images_dir: Optional[str]) -> list:
    """The parts of a config's archive, all from the first folder holding every one of them; a warning names the
    other folders that hold them too (a stale copy is easy to miss)."""
    folders = archive_folders(data_dir, images_dir)
    if "://" in folders[0]:
        return [_join(folders[0], part) for part in ARCHIVES[config]]  # the download manager names a missing file
    found, looked = [], []
    for folder in folders:
        missing = [part for part in ARCHIVES[config] if not os.path.isfile(_join(folder, part))]
        if missing:
            looked.append(f"{folder}/ (missing {', '.join(missing)})")
        else:
            found.append(folder)
    them = "them" if len(ARCHIVES[config]) > 1 else "it"
    if not found:
        raise FileNotFoundError(
            f"{config}: archive {', '.join(ARCHIVES[config])} not found together in one folder; looked in "
            f"{' and '.join(looked)}; pass images_dir= (--images-dir) the folder that holds {them}."
        )
    if len(found) > 1:
        logger.warning(
            "%s: %s is in both %s/ and %s/; reading %s/ (tried first). Pass images_dir= (--images-dir) the folder "
            "to read, or remove the stale copy.",
            config,
            ", ".join(ARCHIVES[config]),
            *found,
            found[0],
        )
    parts = [_join(found[0], part) for part in ARCHIVES[config]]
    check_reference_safe(parts)
    return parts


def check_reference_safe(parts):
    """An image reference chains the parts with '::' and '|': a path holding either would break every access."""
    for part in parts:
        if "|" in part or "::" in part:
            raise M2krDataError(
                f"{part}: an archive path must not contain '|' or '::', which separate the parts in image "
                "references; move or link the folder."
            )


def _absolute(path: str) -> str:
    return path if "://" in path else os.path.abspath(path)


def _join(base: str, relative: str) -> str:
    return base.rstrip("/") + "/" + relative if "://" in base else os.path.join(base, relative)


def _options_for(url: str, storage_options: dict) -> dict:
    return storage_options.get(url.split("://")[0], {}) if "://" in url else {}


def list_tables(base: str, config: str, storage_options=None) -> list:
    """The ``<config>/train-*.parquet`` files under ``base``, sorted."""
    pattern = _join(base, f"{config}/{SPLIT}-*.parquet")
    on_hub = base.startswith("hf://")
    if on_hub and datasets_offline():
        raise M2krDataError(hub_help(base, hub_problem(), LOCAL_LAYOUT))
    try:
        fs, fs_pattern = fsspec.core.url_to_fs(pattern, **_options_for(pattern, storage_options or {}))
        found = sorted(fs.glob(fs_pattern))
    except Exception as err:  # noqa: BLE001 - any failure to reach the Hub gets the same advice
        if not on_hub:
            raise
        raise M2krDataError(hub_help(base, hub_problem(err), LOCAL_LAYOUT)) from err
    if not found:
        raise M2krDataError(f"No {config}/{SPLIT}-*.parquet under {base}.")
    return [fs.unstrip_protocol(path) if "://" in base else path for path in found]


def add_images(table: pa.Table, config: str, parts, storage_options=None) -> pa.Table:
    """Append the ``image`` reference column; report every row whose image is not an archive member.

    For local parts, each referenced member's local header is checked too (parts swapped or replaced); remote parts
    cost one HEAD each and one or two range requests for the zip directory (then cached), and no image byte.
    """
    fs = fsspec.filesystem(fsspec.core.split_protocol(parts[0])[0] or "file", **(storage_options or {}))
    with open_parts(fs, [fs._strip_protocol(part) for part in parts], parts) as virtual:
        archive = open_archive(virtual, parts)
        label = parts[0] if len(parts) == 1 else f"{parts[0]} (+{len(parts) - 1} parts)"
        resolved = _resolve_images(
            table, config, [info.filename for info in archive.infolist() if not info.is_dir()], label
        )
        if "://" not in parts[0]:  # a small read per member: cheap on disk, a request each over HTTP
            check_local_headers(virtual, archive, dict.fromkeys(resolved), label)
    references = pa.array([archive_url(member, parts) for member in resolved], pa.string())
    return table.append_column("image", _image_column(references))


def _resolve_images(table: pa.Table, config: str, members, label: str) -> list:
    resolve = member_resolver(members)
    names = table[IMAGE_NAME_FIELDS[config]].to_pylist()
    resolved, problems = [], []
    for row_id, name in zip(table[ID_FIELDS[config]].to_pylist(), names):
        member, problem = resolve(name)
        resolved.append(member)
        if problem:
            problems.append(f"{name} ({ID_FIELDS[config]} {row_id}: {problem})")
    if problems:
        raise M2krDataError(f"{config}: {len(problems)} image(s) not found in {label}: {'; '.join(problems)}.")
    return resolved


# The Image feature's storage: an image referenced by path has null bytes.
_IMAGE_STORAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def _image_column(paths: pa.Array) -> pa.StructArray:
    """The Image feature's storage for files referenced by path: no byte of any image is read."""
    return pa.StructArray.from_arrays([pa.nulls(len(paths), pa.binary()), paths], fields=list(_IMAGE_STORAGE))


def member_resolver(members):
    """A row names its member exactly, or by a path the member ends with (``x.png`` -> ``Web_Image/x.png``)."""
    exact = set(members)
    by_suffix = {}
    for member in members:
        pieces = member.split("/")
        for start in range(1, len(pieces)):
            by_suffix.setdefault("/".join(pieces[start:]), []).append(member)

    def resolve(name):
        if name in exact:
            return name, None
        candidates = by_suffix.get(name, [])
        if len(candidates) == 1:
            return candidates[0], None
        if candidates:
            return None, f"ambiguous: {', '.join(candidates)}"
        return None, "no such member"

    return resolve


def source_files(config_name: str, data_dir: str, images_dir: Optional[str] = None) -> list:
    """Local paths of every file a config reads: its Parquet tables and its archive parts."""
    tables = CONFIG_NAMES if config_name == "challenge_answers" else (config_name,)
    paths = [path for config in tables for path in list_tables(str(data_dir), config)]
    return paths + (find_archives(config_name, data_dir, images_dir) if config_name in ARCHIVES else [])


def cache_hash(data_dir: Optional[str], images_dir: Optional[str] = None, config_name: Optional[str] = None) -> str:
    """Hash of this builder's source and of the sources config ``config_name`` (default: challenge_data) reads.

    The source is this file, m2kr_archive.py and m2kr_format.py. Each local table counts by its bytes (xxh3-128):
    an edit is seen whatever the file system does with times. The archives (about 121 GB) count by size, times and
    inode in every folder they are looked for in: reading them on every load is out of the question, rows hold
    references to their members rather than bytes, and preparation checks each referenced member's header. A
    remote file counts by what its host says of it (the Hub: its blob id), or not at all when the host cannot be
    reached: preparation then says why.
    """
    config_name = config_name or M2kr.DEFAULT_CONFIG_NAME
    # The modules as imported: beside this file, or their copies in datasets' modules cache.
    # archive, rules, reading, what the builders share
    modules = (open_zip.__module__, read_table.__module__, load_json_file.__module__, SourceKeyedBuilder.__module__)
    modules += (state_of.__module__,)
    material = [content_hash(path) for path in (__file__, *(sys.modules[module].__file__ for module in modules))]
    if data_dir:
        data_dir = _absolute(str(data_dir))
        tables = CONFIG_NAMES if config_name == "challenge_answers" else (config_name,)
        for pattern in [_join(data_dir, f"{config}/{SPLIT}-*.parquet") for config in tables]:
            material.append([pattern, _table_keys(pattern)])
        folders = archive_folders(data_dir, images_dir)
        for part in [_join(folder, part) for folder in folders for part in ARCHIVES.get(config_name, ())]:
            material.append([part, _archive_state(part)])
    return key_of(*material)


def _table_keys(pattern: str) -> list:
    """xxh3-128 of the bytes of each local table matching ``pattern``; remote tables' metadata."""
    if "://" in pattern:
        return _remote_states(pattern)
    folder, name = os.path.split(pattern)
    return [content_key(path) for path in sorted(glob.glob(os.path.join(glob.escape(folder), name)))]


def _archive_state(path: str):
    """A local part's size, times and inode; a remote part's size and version (one HEAD, never a GET or a glob)."""
    if "://" not in path:
        return metadata_key(path)
    if path.startswith("hf://") and datasets_offline():
        return None  # asking would fail; preparation says that the Hub is offline
    try:
        fs, fs_path = fsspec.core.url_to_fs(path)
        return list(state_of(fs, fs_path, path))
    except Exception:  # noqa: BLE001 - a missing part or an unreachable host: preparation, not the cache key, says it
        return None


def _remote_states(pattern: str) -> Optional[list]:
    if pattern.startswith("hf://") and datasets_offline():
        return None  # asking would fail; preparation says that the Hub is offline
    try:
        fs, fs_pattern = fsspec.core.url_to_fs(pattern)
        return [sorted(fs.info(path).items()) for path in sorted(fs.glob(fs_pattern))]
    except Exception:  # noqa: BLE001 - an unreachable host: preparation, not the cache key, reports it
        return None


def load(
    config_name: str = "challenge_data",
    data_dir: Optional[str] = None,
    split: str = SPLIT,
    streaming: bool = False,
    cache_dir: Optional[str] = None,
    check_images: bool = True,
    images_dir: Optional[str] = None,
    ids=None,
    download_archives: bool = False,
    max_requests: Optional[int] = None,
    read_timeout: Optional[float] = None,
    check_etags: Optional[bool] = None,
):
    """Load one M2KR config as a Dataset (or IterableDataset with ``streaming=True``).

    Without ``data_dir`` the small bundled sample (``data/m2kr/`` beside this file) is used, and a warning says so,
    as by ``M2kr(...)``; ``data_dir=m2kr.HUB_TABLES`` reads the two Hub repos. ``images_dir``: the archives' folder
    (a path, ``http(s)://`` or ``hf://`` URL) when not ``<data_dir>/images/`` or ``<data_dir>/``; remote archives
    are read in place, one range request per image decoded (``download_archives=True`` downloads them whole
    instead). ``check_images=False`` reads no archive and leaves the image column empty. ``ids``: only the rows
    with these ids (``question_id``, or ``passage_id`` for ``challenge_passage``), in this order, so that only
    their images are read; an unknown id is an error naming it, and an id given twice is loaded once (a warning
    says so).

    Remote reads, for this process and the DataLoader workers it starts (``mmr_remote.configure``):
    ``max_requests`` requests open at once (by default the bandwidth-delay rule of ``mmr_remote``), each waiting at
    most ``read_timeout`` seconds for its next byte (60 by default); ``check_etags=False`` accepts answers whose
    ETag differs from the file's (a server whose ETags change from one answer to the next), relying on each part's
    size and each member's CRC-32. ``read_ahead(dataset)`` iterates the rows with many images read at once.
    """
    if config_name not in CONFIG_NAMES:
        raise ValueError(f"Unknown M2KR config {config_name!r}; expected one of {', '.join(CONFIG_NAMES)}.")
    configure(max_requests=max_requests, read_timeout=read_timeout, check_etags=check_etags)
    builder = M2kr(
        config_name=config_name,
        data_dir=_absolute(str(data_dir)) if data_dir else None,
        cache_dir=cache_dir,
        check_images=check_images,
        images_dir=images_dir,
        download_archives=download_archives,
        ids=None if ids is None else wanted_ids(ids),
    )
    if streaming:
        return builder.as_streaming_dataset(split=split)
    builder.download_and_prepare()
    return builder.as_dataset(split=split)


def read_ahead(dataset, max_requests: Optional[int] = None):
    """The rows of ``dataset`` (a ``Dataset`` or a streamed ``IterableDataset`` of ``load``) in order, as iterating it
    gives them, with the images of the rows ahead read at once: many range requests in flight, neighbouring
    members joined (``mmr_remote.read_many``), where iterating the dataset itself reads one image at a time::

        for row in m2kr.read_ahead(m2kr.load("challenge_passage", data_dir=m2kr.HUB_TABLES)):
            row["image"]  # decoded, its bytes already here

    ``max_requests``: requests open at once (``load``'s keyword). Each image is checked as on any read (CRC-32,
    bounds) and decoded as ``datasets.Image`` decodes it."""
    configure(max_requests=max_requests)
    feature = (dataset.features or {}).get("image")
    if not isinstance(feature, datasets.Image) or not feature.decode:
        yield from dataset
        return
    plain = dataset.cast_column("image", datasets.Image(decode=False))
    ahead, rows = itertools.tee(iter(plain))
    contents = read_many(_unread_path(row["image"]) for row in ahead)
    for row, data in zip(rows, contents):
        value = row["image"]
        if data is not None:
            value = {"path": value["path"], "bytes": data}
        row["image"] = None if value is None else feature.decode_example(value)
        yield row


def _unread_path(value) -> Optional[str]:
    """The URL of an image to read (an archive member, a remote file), or None (no image, bytes held, local)."""
    if value is None or value.get("bytes") is not None or "://" not in (value.get("path") or ""):
        return None
    return value["path"]


def wanted_ids(ids) -> tuple:
    """``ids`` as the config keeps them: strings, each once, in the order given (a warning names the ids given
    more than once)."""
    if isinstance(ids, str):
        raise TypeError(f"ids= takes a list of ids, not one string ({ids!r}): write ids=[{ids!r}].")
    given = [str(row_id) for row_id in ids]
    wanted = tuple(dict.fromkeys(given))
    if not wanted:
        raise ValueError("ids= is empty: give the ids of the rows to load, or leave ids out to load every row.")
    if len(wanted) < len(given):
        repeated = [row_id for row_id, count in Counter(given).items() if count > 1]
        shown = ", ".join(map(repr, repeated[:5])) + (f" and {len(repeated) - 5} more" if len(repeated) > 5 else "")
        logger.warning(
            "ids=: %d id(s) given more than once (%s); each row is loaded once, where its id first appears.",
            len(repeated),
            shown,
        )
    return wanted


def rows_with_ids(table: pa.Table, id_field: str, ids) -> pa.Table:
    """The rows of ``table`` whose ``id_field`` is in ``ids``, in that order; an id not in the table is an error
    naming it."""
    position = {}
    for index, row_id in enumerate(table[id_field].to_pylist()):
        position.setdefault(row_id, index)
    missing = [row_id for row_id in ids if row_id not in position]
    if missing:
        shown = ", ".join(map(repr, missing[:5])) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise M2krDataError(f"{len(missing)} of the {len(ids)} ids given are not {id_field}s of the table: {shown}.")
    return table.take([position[row_id] for row_id in ids])
