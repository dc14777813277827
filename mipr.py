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

import codecs
import hashlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import datasets
import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as paj
from datasets.utils.file_utils import xopen

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

CONFIG_NAMES = ("queries", "corpus", "qrels")
SPLIT = "test"
# The bundled sample: data/mipr/ beside this file in the repository, mmrhub/data/mipr/ in an installed wheel.
_HERE = Path(__file__).resolve().parent
SAMPLE_DIR = _HERE / "data" / "mipr" if (_HERE / "data" / "mipr").is_dir() else _HERE / "mmrhub" / "data" / "mipr"

# Relevance grades as data: the seed's definition of each label.
GRADES = {
    "L1": "Optimal solution: satisfies the underlying need and its key constraints",
    "L2": "Suboptimal solution: relevant but only partially satisfies the need",
    "N1": "Constraint-violating: appears applicable but violates a critical constraint",
    "N2": "Related non-solution: related by category or appearance but does not solve the need",
    "N3": "Irrelevant",
}
# Linear nDCG gains; every other grade, and an unjudged product, gains 0.
GAINS = {"L1": 2, "L2": 1}

SOURCE_FILES = {
    "queries": "mipr_query.jsonl",
    "corpus": "mipr_corpus.jsonl",
    "qrels": "mipr_annotation.jsonl",
}
IMAGE_DIRS = {"queries": "images/query_images", "corpus": "images/product_images"}
IMAGE_NAME_FIELDS = {"queries": "image_url", "corpus": "pict_url"}
ID_FIELDS = {"queries": "idx", "corpus": "item_id", "qrels": "idx"}

# pyarrow's default JSON block; a longer line is read again with a block that holds it.
_BLOCK_SIZE = 1 << 20

_JUDGMENT = pa.struct([("item_id", pa.string()), ("final_grade", pa.string())])
SOURCE_SCHEMAS = {
    "queries": pa.schema([("idx", pa.string()), ("query", pa.string()), ("image_url", pa.string())]),
    "corpus": pa.schema(
        [
            ("item_id", pa.string()),
            ("title", pa.string()),
            ("pict_url", pa.string()),
            ("treecate_full_path", pa.string()),
        ]
    ),
    "qrels": pa.schema([("idx", pa.string()), ("items", pa.list_(_JUDGMENT))]),
}

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


class MiprDataError(ValueError):
    """A MIPR source file does not follow the official format."""


@dataclass
class MiprConfig(datasets.BuilderConfig):
    """One MIPR table. ``data_dir`` is the folder (or URL) holding the official files.

    ``check_images=False`` skips listing the image folders, for hosts that cannot list a folder (plain HTTP).
    """

    check_images: bool = True


class Mipr(datasets.ArrowBasedBuilder):
    """Builder for the MIPR queries, product corpus and graded judgments."""

    BUILDER_CONFIG_CLASS = MiprConfig
    BUILDER_CONFIGS = [
        MiprConfig(name="queries", version=datasets.Version("1.0.0"), description="Image + question queries."),
        MiprConfig(name="corpus", version=datasets.Version("1.0.0"), description="The shared product corpus."),
        MiprConfig(name="qrels", version=datasets.Version("1.0.0"), description="Graded judgments, one row a query."),
    ]
    DEFAULT_CONFIG_NAME = "qrels"

    def __init__(self, *args, hash: Optional[str] = None, **kwargs):
        # datasets keys its cache on ``hash`` (3.6: the script's code; 4+: None unless given) and would return old
        # rows after the data changed: fold a fingerprint of the sources into it, however the builder is called.
        data_dir = kwargs.get("data_dir")
        fingerprint = cache_hash(_data_dir(data_dir)) if data_dir else cache_hash(None)
        super().__init__(*args, hash=_combined_hash(hash, fingerprint), **kwargs)

    @classmethod
    def get_all_exported_dataset_infos(cls):
        # datasets 3.6 reads the README.md beside the script as a dataset card first; the repository README has no
        # YAML block, so every load warned "Repo card metadata block was not found". Read dataset_infos.json alone.
        path = os.path.join(cls.get_imported_module_dir(), "dataset_infos.json")
        if not os.path.isfile(path):
            return datasets.info.DatasetInfosDict()
        with open(path, encoding="utf-8") as f:
            infos = json.load(f)
        return datasets.info.DatasetInfosDict(
            {name: datasets.DatasetInfo.from_dict(info) for name, info in infos.items()}
        )

    def _info(self):
        return datasets.DatasetInfo(
            description=_DESCRIPTION,
            features=FEATURES[self.config.name],
            citation=_CITATION,
            license=_LICENSE,
        )

    def _split_generators(self, dl_manager):
        # Validation runs here, not in _generate_tables: datasets would wrap its errors in DatasetGenerationError.
        base = _data_dir(self.config.data_dir)
        names = ["qrels", "queries", "corpus"] if self.config.name == "qrels" else [self.config.name]
        # Errors name the source as the user gave it, not the download cache's copy.
        shown = {name: _join(base, SOURCE_FILES[name]) for name in names}
        paths = dl_manager.download(shown)
        download_config = dl_manager.download_config
        if self.config.name == "qrels":
            queries = read_table(paths["queries"], "queries", download_config, shown["queries"], ["idx"])
            corpus = read_table(paths["corpus"], "corpus", download_config, shown["corpus"], ["item_id"])
            table = read_table(paths["qrels"], "qrels", download_config, shown["qrels"])
            check_qrels(table, queries["idx"], corpus["item_id"], shown["qrels"])
        else:
            name = self.config.name
            table = read_table(paths[name], name, download_config, shown[name])
            image_dir, image_names = _join(base, IMAGE_DIRS[name]), table[IMAGE_NAME_FIELDS[name]]
            check_image_names(image_names, image_dir, shown[name])
            if self.config.check_images:
                check_images_exist(image_names, image_dir, shown[name], download_config, base)
            table = table.append_column("image", image_references(image_names, image_dir))
        return [datasets.SplitGenerator(name=datasets.Split.TEST, gen_kwargs={"table": table})]

    def _generate_tables(self, table):
        for index, batch in enumerate(table.to_batches(max_chunksize=10_000)):
            yield index, pa.Table.from_batches([batch])


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


def _join(base: str, relative: str) -> str:
    return base.rstrip("/") + "/" + relative if "://" in base else os.path.join(base, relative)


def read_table(path: str, name: str, download_config=None, display: Optional[str] = None, columns=None) -> pa.Table:
    """Read and validate one MIPR JSON Lines table (``name`` in CONFIG_NAMES) into Arrow.

    ``columns`` reads only those fields (other fields are then not checked), e.g. the ids of a joined table.
    """
    display = display or path
    schema = SOURCE_SCHEMAS[name]
    if columns:
        schema = pa.schema([schema.field(column) for column in columns])
    options = paj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore" if columns else "infer")
    try:
        table = _parse_json_lines(path, options, download_config)
        # pyarrow's JSON reader passes invalid UTF-8 through: a full validation of the strings catches it.
        table.validate(full=True)
    except pa.ArrowInvalid as err:
        _raise_first_bad_line(path, schema, display, download_config, cause=str(err))
    table = _drop_unexpected_fields(table, schema, display)
    if any(table[field].null_count for field in schema.names) or (name == "qrels" and _has_null_judgment(table)):
        _raise_first_bad_line(path, schema, display, download_config, cause="null field")
    if ID_FIELDS[name] in schema.names:
        _check_unique(table, ID_FIELDS[name], path, display, download_config)
    if name == "qrels":
        _check_judgments(table, display)
    return table


def _parse_json_lines(path: str, options: paj.ParseOptions, download_config) -> pa.Table:
    """Parse a JSON Lines file; a line longer than the reader's block (1 MiB) gets a block that holds it."""
    try:
        return _read_json(path, options, download_config, _BLOCK_SIZE)
    except pa.ArrowInvalid as err:
        if "straddl" not in str(err):
            raise
    longest = max((len(line) for _, line in _lines(path, download_config)), default=0)
    return _read_json(path, options, download_config, longest + 1)


def _read_json(path: str, options: paj.ParseOptions, download_config, block_size: int) -> pa.Table:
    with xopen(path, "rb", download_config=download_config) as f:
        return paj.read_json(f, read_options=paj.ReadOptions(block_size=block_size), parse_options=options)


def _drop_unexpected_fields(table: pa.Table, schema: pa.Schema, display: str) -> pa.Table:
    extra = [field for field in table.schema.names if field not in schema.names]
    extra += [f"items.{f.name}" for f in _judgment_type(table).fields if f.name not in _JUDGMENT.names]
    if extra:
        logger.warning("%s: fields not in the MIPR format are left out: %s", display, ", ".join(extra))
    return table.select(schema.names).cast(schema)


def _judgment_type(table: pa.Table) -> pa.StructType:
    return table.schema.field("items").type.value_type if "items" in table.schema.names else pa.struct([])


def _has_null_judgment(table: pa.Table) -> bool:
    items = pc.list_flatten(table["items"])
    return bool(items.null_count or pc.struct_field(items, [0]).null_count or pc.struct_field(items, [1]).null_count)


def _lines(path: str, download_config):
    """(line number, bytes) of each non-blank line: the n-th Arrow row comes from the n-th of them.

    Only error paths call this, so the fast path never holds the file's bytes. A UTF-8 byte order mark at the
    start of the file is dropped, as the JSON reader does.
    """
    with xopen(path, "rb", download_config=download_config) as f:
        for number, line in enumerate(f, start=1):
            if number == 1 and line.startswith(codecs.BOM_UTF8):
                line = line[len(codecs.BOM_UTF8) :]
            if line.strip():
                yield number, line


def _raise_first_bad_line(path: str, schema: pa.Schema, display: str, download_config, cause: str):
    for number, line in _lines(path, download_config):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as err:
            raise MiprDataError(
                f"{display} line {number}: byte 0x{line[err.start]:02x} at column {err.start + 1} is not valid "
                "UTF-8; MIPR files must be UTF-8 encoded."
            ) from None
        try:
            record = json.loads(text)
        except ValueError as err:
            raise MiprDataError(f"{display} line {number}: invalid JSON ({err}).") from None
        problem = _text_problem(record) or _record_problem(record, schema)
        if problem:
            raise MiprDataError(f"{display} line {number}: {problem}.")
    raise MiprDataError(f"{display}: could not be read as JSON Lines ({cause}).")


def _text_problem(record) -> Optional[str]:
    """A lone surrogate escape (such as \\ud800) decodes to no character, so no UTF-8 text can hold it."""
    try:
        json.dumps(record, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as err:
        return f"the escape \\u{ord(err.object[err.start]):04x} is a lone surrogate, not a character"
    return None


def _record_problem(record, schema: pa.Schema) -> Optional[str]:
    if not isinstance(record, dict):
        return f"expected a JSON object, got {type(record).__name__}"
    for field in schema.names:
        if record.get(field) is None:
            return f'missing field "{field}"'
        if field == "items":
            problem = _items_problem(record[field])
            if problem:
                return problem
        elif not isinstance(record[field], str):
            return f'field "{field}" must be a string, got {type(record[field]).__name__} {record[field]!r}'
    return None


def _items_problem(items) -> Optional[str]:
    if not isinstance(items, list):
        return f'field "items" must be a list of {{"item_id", "final_grade"}} objects, got {type(items).__name__}'
    for position, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            return f"items[{position}] must be an object, got {type(item).__name__}"
        for field in ("item_id", "final_grade"):
            if not isinstance(item.get(field), str):
                return f'items[{position}] field "{field}" must be a string, got {item.get(field)!r}'
    return None


def _check_unique(table: pa.Table, field: str, path: str, display: str, download_config):
    column = table[field]
    if pc.count_distinct(column).as_py() == len(column):
        return
    first_line = {}
    for (number, _), value in zip(_lines(path, download_config), column.to_pylist()):
        if value in first_line:
            raise MiprDataError(f'{display} line {number}: duplicate {field} "{value}" (first on line {first_line[value]}).')
        first_line[value] = number


def _check_judgments(table: pa.Table, display: str):
    """Every grade is known and no product is judged twice for one query (vectorised; Python only on error)."""
    judged = pc.list_flatten(table["items"])
    rows = pc.list_parent_indices(table["items"])
    item_ids, grades = pc.struct_field(judged, [0]), pc.struct_field(judged, [1])
    unknown = pc.invert(pc.is_in(grades, value_set=pa.array(list(GRADES))))
    if pc.any(unknown).as_py():
        at = pc.index(unknown, True).as_py()
        raise MiprDataError(
            f'{display} {_judgment_name(table, rows, at)}: unknown final_grade "{grades[at].as_py()}"; '
            f"expected one of {', '.join(GRADES)}."
        )
    # (row, product code) pairs as sorted integers: a hash-based distinct count would take ~100 MB here.
    codes = pc.dictionary_encode(item_ids.combine_chunks())
    pairs = np.sort(rows.to_numpy() * len(codes.dictionary) + codes.indices.to_numpy())
    if (pairs[1:] == pairs[:-1]).any():
        seen = set()
        for at, pair in enumerate(zip(rows.to_pylist(), item_ids.to_pylist())):
            if pair in seen:
                raise MiprDataError(f'{display} {_judgment_name(table, rows, at)}: item_id "{pair[1]}" judged twice.')
            seen.add(pair)


def _judgment_name(table: pa.Table, rows, at: int) -> str:
    """'idx "7" items[3]' for the flattened judgment at position ``at``."""
    row = rows[at].as_py()
    first_of_row = pc.index(rows, row).as_py()
    return f'idx "{table["idx"][row].as_py()}" items[{at - first_of_row + 1}]'


def check_qrels(qrels: pa.Table, query_ids: pa.ChunkedArray, item_ids: pa.ChunkedArray, display: str):
    """Every judged query must be in the queries file and every judged product in the corpus."""
    unknown_queries = pc.invert(pc.is_in(qrels["idx"], value_set=query_ids.combine_chunks()))
    if pc.any(unknown_queries).as_py():
        idx = pc.filter(qrels["idx"], unknown_queries)[0].as_py()
        raise MiprDataError(f'{display} idx "{idx}": query not in {SOURCE_FILES["queries"]}.')
    judged = pc.list_flatten(qrels["items"])
    unknown_items = pc.invert(pc.is_in(pc.struct_field(judged, [0]), value_set=item_ids.combine_chunks()))
    if pc.any(unknown_items).as_py():
        position = pc.index(unknown_items, True).as_py()
        item_id = pc.struct_field(judged, [0])[position].as_py()
        name = _judgment_name(qrels, pc.list_parent_indices(qrels["items"]), position)
        raise MiprDataError(f'{display} {name}: judged item_id "{item_id}" not in {SOURCE_FILES["corpus"]}.')


def check_image_names(names: pa.ChunkedArray, image_dir: str, display: str):
    """Image names are plain file names, so a reference can never point outside the image folder."""
    bad = [name for name in pc.unique(names).to_pylist() if "/" in name or "\\" in name or name in ("", ".", "..")]
    if bad:
        raise MiprDataError(f"{display}: image names must be plain file names under {image_dir}/, got: {', '.join(bad)}")


def check_images_exist(names: pa.ChunkedArray, image_dir: str, display: str, download_config=None, data_dir=None):
    """List the image folder once and report every referenced file that is missing, empty or links elsewhere."""
    if "://" not in image_dir:
        _check_local_images(pc.unique(names).to_pylist(), image_dir, display, data_dir or os.path.dirname(image_dir))
        return
    storage_options = (download_config.storage_options or {}) if download_config else {}
    fs, path = fsspec.core.url_to_fs(image_dir, **storage_options.get(image_dir.split("://")[0], {}))
    try:
        # Plain string ops: datasets patches this module's os.path for streaming, and that is slow per call.
        present = {entry.rstrip("/").rsplit("/", 1)[-1] for entry in fs.ls(path, detail=False)}
    except FileNotFoundError:
        raise MiprDataError(f"{display}: image folder {image_dir}/ does not exist.") from None
    except NotImplementedError:
        logger.warning("%s: %s cannot be listed, so missing images will only show on access.", display, image_dir)
        return
    _raise_missing(sorted(set(pc.unique(names).to_pylist()) - present), image_dir, display)


def _raise_missing(missing: list, image_dir: str, display: str):
    if missing:
        raise MiprDataError(
            f"{display}: {len(missing)} image file(s) missing from {image_dir}/: {', '.join(missing)}"
        )


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


def cache_hash(data_dir: Optional[str]) -> str:
    """Hash of this builder's source and of the data files' metadata, so a change to either rebuilds the cache.

    Local files give size, mtime_ns, ctime_ns and inode: an edit that restores the mtime still changes the ctime,
    and a file replaced by another changes the inode.
    """
    digest = hashlib.sha256(Path(__file__).read_bytes())
    for relative in [*SOURCE_FILES.values(), *IMAGE_DIRS.values()] if data_dir else []:
        digest.update(json.dumps([relative, _file_state(_join(data_dir, relative))], default=str).encode())
    return digest.hexdigest()[:16]


def _file_state(path: str):
    try:
        if "://" not in path:
            state = os.stat(path)
            return [state.st_size, state.st_mtime_ns, state.st_ctime_ns, state.st_ino]
        fs, fs_path = fsspec.core.url_to_fs(path)
        return sorted(fs.info(fs_path).items())
    except FileNotFoundError:
        return None


def _combined_hash(given: Optional[str], fingerprint: str) -> str:
    return hashlib.sha256(f"{given}:{fingerprint}".encode()).hexdigest()[:16] if given else fingerprint


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
    if data_dir is None:
        data_dir = str(SAMPLE_DIR)
        logger.warning("No data_dir given: loading the bundled MIPR sample %s, not the benchmark.", data_dir)
    data_dir = _data_dir(data_dir)
    builder = Mipr(config_name=config_name, data_dir=data_dir, cache_dir=cache_dir, check_images=check_images)
    if streaming:
        return builder.as_streaming_dataset(split=split)
    builder.download_and_prepare()
    return builder.as_dataset(split=split)
