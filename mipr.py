"""MIPR: multimodal intent-to-product retrieval (Chinese e-commerce), as a Hugging Face `datasets` builder.

Reads the official layout of a MIPR download (a local folder, a base URL or an ``hf://`` path)::

    mipr_query.jsonl  mipr_corpus.jsonl  mipr_annotation.jsonl
    images/query_images/  images/product_images/

Configs ``queries``, ``corpus`` and ``qrels``, split ``test``. Images are stored as references to their files
and decoded only on access. Every table is fully validated before anything is written: a malformed input
raises :class:`MiprDataError` naming the file, the line or id, and what was expected.

Use it imported (any ``datasets`` version)::

    import mipr
    qrels = mipr.load("qrels", data_dir="path/to/mipr/data")

or as a loading script on ``datasets`` < 4.0::

    load_dataset("path/to/mipr.py", "qrels", data_dir="path/to/mipr/data", trust_remote_code=True)
"""

import logging
import os
import sys
from dataclasses import dataclass
from functools import partial
from typing import Optional

import datasets
import fsspec
import pyarrow as pa
import pyarrow.compute as pc
from datasets.utils.file_utils import xopen

# The format's rules live beside this file; the names below are also this builder's (mipr.MiprDataError, ...).
# datasets 3.6 copies a loading script's siblings named by a line that *starts* with a relative import, hence the
# backslash; a plain import (no parent package) takes the else branch.
# fmt: off
if __package__: \
from .mipr_format import (CONFIG_NAMES, GRADES, ID_FIELDS, IMAGE_DIRS, IMAGE_NAME_FIELDS, SOURCE_FILES,
                          SOURCE_SCHEMAS, MiprDataError, check_image_names, check_qrels, join_path, read_config,
                          read_table)
else:
    from mipr_format import (CONFIG_NAMES, GRADES, ID_FIELDS, IMAGE_DIRS, IMAGE_NAME_FIELDS, SOURCE_FILES,
                             SOURCE_SCHEMAS, MiprDataError, check_image_names, check_qrels, join_path, read_config,
                             read_table)
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
@misc{li_mipr,
  title = {MIPR: A Benchmark for Reasoning-Intensive Multimodal Intent-to-Product Retrieval with Multi-Category Solutions},
  author = {Qiang Li and Xuan Lu and Jian Ruan and Manxi Lin and Jiacheng Chen and Wen Shen and Zhihua Wei and Xiaoyu Shen and Dan Ou and Xiangheng Kong and Junjun Zheng}
}
"""
_DESCRIPTION = (
    "MIPR pairs a situational image with a free-form Chinese question and asks a retriever to find the products "
    "of a shared 30,731-product Taobao corpus that satisfy the underlying need, possibly across several product "
    "categories. 3,522 queries, 447,809 graded judgments (L1, L2, N1, N2, N3)."
)
_LICENSE = "apache-2.0"
# Its name as an MTEB task, the one the export card's snippet and mmrhub.mteb both give it (MTEB's any-to-any retrieval
# tasks are named <dataset><query modalities>2<document modalities>Retrieval: image+text to image+text is IT2IT).
MTEB_TASK = "MIPRIT2ITRetrieval"

SPLIT = "test"
# What a local data_dir holds, for the advice when the Hub cannot be read.
LOCAL_LAYOUT = "holding mipr_query.jsonl, mipr_corpus.jsonl, mipr_annotation.jsonl and images/"
# The bundled sample: data/mipr/ beside this file in the repository, mmrhub/data/mipr/ in an installed wheel.
SAMPLE_DIR = bundled_sample("mipr")

# Linear nDCG gains of every grade; an unjudged product gains 0. The metric's own (metrics/mipr/mipr_measures.py)
# are the same (a test holds them equal): the metric folder stands alone, so neither imports the other.
GAINS = {"L1": 2, "L2": 1, "N1": 0, "N2": 0, "N3": 0}

_STRING = datasets.Value("string")
FEATURES = {
    "queries": datasets.Features({"idx": _STRING, "query": _STRING, "image_url": _STRING, "image": datasets.Image()}),
    "corpus": datasets.Features(
        {
            "item_id": _STRING,
            "title": _STRING,
            "pict_url": _STRING,
            "treecate_full_path": _STRING,
            "image": datasets.Image(),
        }
    ),
    # A plain list of dicts keeps the source's row shape (a list of judgments) on every datasets version.
    "qrels": datasets.Features({"idx": _STRING, "items": [{"item_id": _STRING, "final_grade": _STRING}]}),
}


@dataclass
class MiprConfig(datasets.BuilderConfig):
    """One MIPR table. ``data_dir`` is the folder (or URL) holding the official files.

    ``check_images=False`` skips listing the image folders, for hosts that cannot list a folder (plain HTTP).
    """

    check_images: bool = True


class Mipr(SourceKeyedBuilder, datasets.ArrowBasedBuilder):
    """Builder for the MIPR queries, product corpus and graded judgments."""

    BUILDER_CONFIG_CLASS = MiprConfig
    BUILDER_CONFIGS = [
        MiprConfig(name="queries", version=datasets.Version("1.0.0"), description="Image + question queries."),
        MiprConfig(name="corpus", version=datasets.Version("1.0.0"), description="The shared product corpus."),
        MiprConfig(name="qrels", version=datasets.Version("1.0.0"), description="Graded judgments, one row a query."),
    ]
    DEFAULT_CONFIG_NAME = "qrels"

    BENCHMARK = "MIPR"
    SAMPLE_DIR = SAMPLE_DIR
    FEATURES = FEATURES
    INFO = {"description": _DESCRIPTION, "citation": _CITATION, "license": _LICENSE}

    def source_hash(self, data_dir=None, config_name=None, **kwargs) -> str:
        """The cache key's fingerprint of the sources config ``config_name`` reads (``cache_hash``)."""
        return cache_hash(_data_dir(data_dir) if data_dir else None, config_name)

    def _split_generators(self, dl_manager):
        # Validation runs here, not in _generate_tables: datasets would wrap its errors in DatasetGenerationError.
        base, name = _data_dir(self.config.data_dir), self.config.name
        names = ["qrels", "queries", "corpus"] if name == "qrels" else [name]
        # Errors name the source as the user gave it, not the download cache's copy.
        paths = _download(dl_manager, {config: join_path(base, SOURCE_FILES[config]) for config in names}, base)
        download_config = dl_manager.download_config
        table = read_config(name, base, paths, partial(xopen, mode="rb", download_config=download_config))
        if name != "qrels":
            image_dir, image_names = join_path(base, IMAGE_DIRS[name]), table[IMAGE_NAME_FIELDS[name]]
            if self.config.check_images:
                shown = join_path(base, SOURCE_FILES[name])
                check_images_exist(image_names, image_dir, shown, download_config, base)
            table = table.append_column("image", image_references(image_names, image_dir))
        return [datasets.SplitGenerator(name=datasets.Split.TEST, gen_kwargs={"table": table})]


def _data_dir(data_dir: Optional[str]) -> str:
    if not data_dir:
        raise MiprDataError(
            "No data_dir given: pass data_dir= the folder (or URL) holding mipr_query.jsonl, mipr_corpus.jsonl, "
            "mipr_annotation.jsonl and images/, or call mipr.load() without data_dir for the bundled sample."
        )
    data_dir = str(data_dir)
    if "://" in data_dir:
        return data_dir
    if "::" in data_dir:
        # datasets reads "::" in an image path as a chain of URLs, so every image access would fail.
        raise MiprDataError(f"data_dir {data_dir}: a local path must not contain '::'; move or link the folder.")
    return os.path.abspath(data_dir)


def _download(dl_manager, urls: dict, base: str) -> dict:
    """The download manager's copies of ``urls``; on the Hub, offline or unreachable is said in words."""
    if not base.startswith("hf://"):
        return dl_manager.download(urls)
    if datasets_offline():
        raise MiprDataError(hub_help(base, hub_problem(), LOCAL_LAYOUT))
    try:
        return dl_manager.download(urls)
    except FileNotFoundError:
        raise
    except Exception as err:  # noqa: BLE001 - any failure to reach the Hub gets the same advice
        raise MiprDataError(hub_help(base, hub_problem(err), LOCAL_LAYOUT)) from err


def check_images_exist(names: pa.ChunkedArray, image_dir: str, display: str, download_config=None, data_dir=None):
    """List the image folder once and report every referenced file that is missing, empty or links elsewhere."""
    if "://" not in image_dir:
        _check_local_images(pc.unique(names).to_pylist(), image_dir, display, data_dir or os.path.dirname(image_dir))
        return
    storage_options = (download_config.storage_options or {}) if download_config else {}
    fs, path = fsspec.core.url_to_fs(image_dir, **storage_options.get(image_dir.split("://")[0], {}))
    wanted = set(pc.unique(names).to_pylist())
    web = image_dir.startswith(("http://", "https://"))
    try:
        # Plain string ops: datasets patches this module's os.path for streaming, and that is slow per call.
        present = {entry.rstrip("/").rsplit("/", 1)[-1] for entry in fs.ls(path, detail=False)}
    except FileNotFoundError:
        if not web:
            raise MiprDataError(f"{display}: image folder {image_dir}/ does not exist.") from None
        present = None
    except NotImplementedError:
        logger.warning("%s: %s cannot be listed, so missing images will only show on access.", display, image_dir)
        return
    except Exception:  # noqa: BLE001 - a web server refusing to list a folder (403, ...) is no missing folder
        if not web:
            raise
        present = None
    if web and wanted and not (present or set()) & wanted:
        # A web server that lists no folder (S3, a CDN, nginx without autoindex): one image is asked for instead.
        _check_one_image(fs, path, image_dir, sorted(wanted)[0], display)
        return
    _raise_missing(sorted(wanted - present), image_dir, display)


def _check_one_image(fs, path: str, image_dir: str, name: str, display: str):
    """An image folder on a web server that does not list folders: its first image must be there (one HEAD)."""
    try:
        fs.info(f"{path.rstrip('/')}/{name}")
    except FileNotFoundError:
        raise MiprDataError(
            f"{display}: {image_dir}/ cannot be listed (a web server without folder listings?) and its image {name} "
            "is not there (404 Not Found): check data_dir, or pass check_images=False (--no-check-images) to skip "
            "the image checks."
        ) from None
    except Exception as err:  # noqa: BLE001 - the server's other refusals: one line
        raise MiprDataError(
            f"{display}: {image_dir}/ cannot be listed and its image {name} cannot be read ({type(err).__name__}: "
            f"{err}); check data_dir, or pass check_images=False (--no-check-images) to skip the image checks."
        ) from None
    logger.warning(
        "%s: %s/ cannot be listed (a web server without folder listings); its image %s is there, and a missing "
        "one will only show when it is read. check_images=False (--no-check-images) skips this check.",
        display,
        image_dir,
        name,
    )


def _raise_missing(missing: list, image_dir: str, display: str):
    if missing:
        raise MiprDataError(f"{display}: {len(missing)} image file(s) missing from {image_dir}/: {', '.join(missing)}")


def _check_local_images(names: list, image_dir: str, display: str, data_dir: str):
    """One scandir of the folder; a stat only for links (where they lead) and referenced files (their size)."""
    try:
        with os.scandir(image_dir) as listing:
            entries = {entry.name: entry for entry in listing}
    except FileNotFoundError:
        raise MiprDataError(f"{display}: image folder {image_dir}/ does not exist.") from None
    _raise_missing(sorted(name for name in names if name not in entries), image_dir, display)
    root = os.path.realpath(data_dir)
    for name in sorted(names):
        problem = _image_file_problem(entries[name], root)
        if problem:
            raise MiprDataError(f"{display}: image file {entries[name].path} {problem}; expected a non-empty file.")


def _image_file_problem(entry: os.DirEntry, root: str) -> Optional[str]:
    if entry.is_symlink():
        target = os.path.realpath(entry.path)
        if os.path.commonpath([root, target]) != root:
            return f"is a symbolic link to {target}, outside the data folder {root}"
    try:
        if not entry.is_file():
            return "is not a regular file"
        if entry.stat().st_size == 0:
            return "is empty (0 bytes)"
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    return None


def image_references(names: pa.ChunkedArray, image_dir: str) -> pa.Array:
    """The Image feature's storage for files referenced by path: no byte of any image is read."""
    paths = pc.binary_join_element_wise(image_dir.rstrip("/") + "/", names.combine_chunks(), "")
    return pa.StructArray.from_arrays([pa.nulls(len(paths), pa.binary()), paths], names=["bytes", "path"])


def source_files(config_name: str, data_dir: str) -> list:
    """Local paths of every file a config reads: its JSON Lines tables and its image folder's files."""
    tables = CONFIG_NAMES if config_name == "qrels" else (config_name,)
    paths = [os.path.join(data_dir, SOURCE_FILES[name]) for name in tables]
    if config_name in IMAGE_DIRS:
        image_dir = os.path.join(data_dir, IMAGE_DIRS[config_name])
        paths += [os.path.join(image_dir, name) for name in sorted(os.listdir(image_dir))]
    return paths


def cache_hash(data_dir: Optional[str], config_name: Optional[str] = None) -> str:
    """Hash (``mmr_cache.key_of``) of this builder's source and of the sources config ``config_name`` (default: qrels)
    reads.

    Each local table counts by its bytes (xxh3-128): an edit is seen whatever the file system does with times. An
    image folder counts by its own size, times and inode, which change when a file is added, removed or renamed:
    rows hold paths to the images, never their bytes, and reading every image on every load would cost more than
    the load. A remote file counts by what its host says of it (size, ETag, time): keying it on content would mean
    downloading it.
    """
    config_name = config_name or Mipr.DEFAULT_CONFIG_NAME
    modules = (read_table.__module__, load_json_file.__module__, SourceKeyedBuilder.__module__)  # rules, reading, base
    material = [content_hash(path) for path in (__file__, *(sys.modules[module].__file__ for module in modules))]
    tables = CONFIG_NAMES if config_name == "qrels" else (config_name,)
    for relative in [SOURCE_FILES[name] for name in tables] if data_dir else []:
        material.append([relative, _table_key(join_path(data_dir, relative))])
    if data_dir and config_name in IMAGE_DIRS:
        folder = IMAGE_DIRS[config_name]
        material.append([folder, _folder_state(join_path(data_dir, folder))])
    return key_of(*material)


def _table_key(path: str):
    """xxh3-128 of a local table's bytes; a remote table's metadata."""
    if "://" in path:
        return _remote_info(path)
    return content_key(path)


def _folder_state(path: str):
    if "://" in path:
        return _remote_info(path)
    return metadata_key(path)


def _remote_info(path: str) -> Optional[list]:
    if path.startswith("hf://") and datasets_offline():
        return None  # asking would fail; preparation says that the Hub is offline
    try:
        fs, fs_path = fsspec.core.url_to_fs(path)
        return sorted(fs.info(fs_path).items())
    except Exception:  # noqa: BLE001 - a missing file or unreachable host: preparation, not the cache key, reports it
        return None


def load(
    config_name: str = "qrels",
    data_dir: Optional[str] = None,
    split: str = SPLIT,
    streaming: bool = False,
    cache_dir: Optional[str] = None,
    check_images: bool = True,
):
    """Load one MIPR config as a Dataset (or IterableDataset with ``streaming=True``).

    Without ``data_dir`` the small bundled sample (``data/mipr/`` beside this file) is used, and a warning says so.
    ``check_images=False`` skips the checks of the image folders (scoring never needs the images).
    """
    if config_name not in CONFIG_NAMES:
        raise ValueError(f"Unknown MIPR config {config_name!r}; expected one of {', '.join(CONFIG_NAMES)}.")
    data_dir = _data_dir(data_dir) if data_dir is not None else None  # None: the builder takes the sample
    builder = Mipr(config_name=config_name, data_dir=data_dir, cache_dir=cache_dir, check_images=check_images)
    if streaming:
        return builder.as_streaming_dataset(split=split)
    builder.download_and_prepare()
    return builder.as_dataset(split=split)
