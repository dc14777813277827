"""Queries and corpus of a benchmark, loaded through its builder, read lazily by DataLoader workers."""

import hashlib
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING
from typing import NamedTuple
from typing import Optional

import torch

from mmr_remote import read_many
from mmr_remote import resolve_hub_files
from mmrhub.declaration import Side
from mmrhub.image_digests import image_digests
from mmrhub.retrieve import distributed
from mmrhub.retrieve.images import decoded
from mmrhub.retrieve.options import DataOptions
from mmrhub.retrieve.presets import EXIF_APPLY

# The two sides a run loads, embeds and names (the Benchmark's fields of the same names).
QUERIES, CORPUS = "queries", "corpus"

if TYPE_CHECKING:
    import PIL.Image
    from datasets import Dataset


@dataclass(frozen=True)
class LoadedSide:
    """The queries or the corpus as loaded: its ``Dataset``, its declaration (a benchmark Side) and its ids."""

    dataset: "Dataset"
    table: Side
    ids: list  # a plain list: indexing a datasets Column costs a formatting call per item

    @cached_property
    def image_digests(self) -> list:
        """Each row's image digest (``image_digests``: what its bytes hash to), computed once a run."""
        return image_digests(self.dataset)

    @cached_property
    def fingerprint(self) -> str:
        """``fingerprint`` of this side, computed once a run."""
        return fingerprint(self.dataset, self.table, self.image_digests)

    def images_record(self) -> dict:
        """{image name: digest} of this side's images, for the run's record (``provenance.data_record``)."""
        names = self.dataset.select_columns([self.table.image_name_column])[self.table.image_name_column]
        return {name: digest for name, digest in zip(names, self.image_digests) if digest is not None}


def load_side(data: DataOptions, side: str) -> LoadedSide:
    """The queries or corpus of ``data.benchmark`` (``side``: "queries" or "corpus"), through its builder."""
    benchmark = data.benchmark
    table = getattr(benchmark, side)
    options = benchmark.builder_options(images_dir=data.images_dir, download_archives=data.download_archives)
    dataset = benchmark.builder().load(
        table.config, data_dir=data.folder, split=data.split or benchmark.split, **options
    )
    return LoadedSide(dataset, table, list(dataset[table.id_column]))


def load_both_sides(data: DataOptions, context):
    """(queries, corpus) as LoadedSides; rank 0 prepares the builders' caches, the other ranks then read them."""
    if not context.is_main:
        distributed.barrier(context)
    queries, corpus = load_side(data, QUERIES), load_side(data, CORPUS)
    if context.is_main:
        distributed.barrier(context)
    return queries, corpus


def read_truth(data: DataOptions):
    """The judgments scoring reads (``Benchmark.read_truth``) from a local data folder; None for tables read from a
    URL or the Hub: the run is then written unscored, and a line says how to score it."""
    return None if remote_tables(data) else data.benchmark.read_truth(data.folder)


def remote_tables(data: DataOptions) -> bool:
    """Whether the builder reads the tables from a URL or the Hub (``--data-dir``)."""
    return "://" in data.folder


def fingerprint(dataset, table, digests: list) -> str:
    """Content hash of ids, texts, image names and each image's ``digests`` (its bytes): what the embeddings and
    scores depend on, independent of the data's path."""
    digest = hashlib.sha256()
    columns = dataset.select_columns([table.id_column, table.text_column, table.image_name_column])
    for batch in columns.with_format("arrow").iter(batch_size=10_000):
        for name in (table.id_column, table.text_column, table.image_name_column):
            digest.update(name.encode())
            for value in batch[name].to_pylist():
                digest.update(b"\x00" if value is None else b"\x01" + value.encode() + b"\x00")
    digest.update(b"image bytes")
    digest.update("".join("\x00" if value is None else f"\x01{value}\x00" for value in digests).encode())
    return digest.hexdigest()


class Row(NamedTuple):
    """One query or corpus item as the models read it: its id, its text (None when empty), its decoded image
    (None when it has none), its own instruction (M2KR's queries; None elsewhere) and its image's name (for
    messages)."""

    id: str
    text: Optional[str]
    image: Optional["PIL.Image.Image"]
    instruction: Optional[str] = None
    image_name: Optional[str] = None


class ItemError(ValueError):
    """An item whose image cannot be read, or whose model input cannot be made: one line naming the table, the row
    (by its id) and the image, whichever process met it."""


INSTRUCTION_COLUMN = "instruction"  # a query table's own task instruction (M2KR's, from PreFLMR)


class Items(torch.utils.data.Dataset):
    """``Row``s; images are decoded (``images.decoded``, EXIF orientation as ``orientation`` says) in whichever
    process fetches them: the DataLoader workers. ``instructions``: read each row's ``INSTRUCTION_COLUMN`` (where
    the table has one). ``images=False``: no image is read (a text-only side, PreFLMR's passages; Row.image None)."""

    def __init__(self, dataset, table, orientation: str = EXIF_APPLY, instructions: bool = False, images: bool = True):
        from datasets import Image

        self.instruction_column = INSTRUCTION_COLUMN if instructions and has_instructions(dataset) else None
        columns = [table.id_column, table.text_column] + ["image"] * images
        columns += [self.instruction_column] * bool(self.instruction_column)
        self.dataset = dataset.select_columns(columns)
        if images:
            self.dataset = self.dataset.cast_column("image", Image(decode=False))
        self.images = images
        self.table = table
        self.orientation = orientation

    def __len__(self):
        return len(self.dataset)

    def __getitems__(self, indices):
        batch = self.dataset[list(indices)]
        ids = batch[self.table.id_column]
        texts = [text if text else None for text in batch[self.table.text_column]]
        values = fetched(batch["image"]) if self.images else [None] * len(texts)
        images = [self.decoded(row_id, value) for row_id, value in zip(ids, values)]
        names = [image_name(value) for value in values]
        instructions = batch[self.instruction_column] if self.instruction_column else [None] * len(texts)
        return [Row(*fields) for fields in zip(ids, texts, images, instructions, names)]

    def decoded(self, row_id, value):
        """One row's image decoded (``images.decoded``); what Pillow refuses (a file cut short, one over its
        decompression-bomb limit, a file that is no image) is an ``ItemError`` naming the table, the row and the
        image, as ``mmrhub export`` names it."""
        try:
            return decoded(value, self.orientation)
        except Exception as err:  # Pillow's OSError, SyntaxError, ValueError, DecompressionBombError, ...
            from PIL import UnidentifiedImageError

            why = "no image format Pillow knows" if isinstance(err, UnidentifiedImageError) else one_line(err)
            raise ItemError(
                f"{self.table.config} {self.table.id_column}={row_id}: image {image_name(value)} cannot be decoded as "
                f"an image ({why}). Replace or remove that file."
            ) from None

    def __getitem__(self, index):
        return self.__getitems__([index])[0]


def fetched(values: list) -> list:
    """The batch's image values (``{"path", "bytes"}``) with the bytes of its remote images (archive members over
    HTTP or the Hub) read at once: many requests in flight, neighbours joined (``mmr_remote.read_many``), where
    decoding them one by one would wait for each in turn."""
    remote = [i for i, value in enumerate(values) if is_remote_image(value)]
    contents = read_many([values[i]["path"] for i in remote]) if remote else ()
    values = list(values)
    for i, data in zip(remote, contents):
        values[i] = {"path": values[i]["path"], "bytes": data}
    return values


def is_remote_image(value) -> bool:
    """Whether reading the image asks a server: a URL, or a member of an archive that is one."""
    if value is None or value.get("bytes") is not None or not value.get("path"):
        return False
    return "://" in value["path"].split("::")[-1]


def has_instructions(dataset) -> bool:
    """Whether a queries table carries its own instructions (``INSTRUCTION_COLUMN``)."""
    return INSTRUCTION_COLUMN in dataset.column_names


def image_name(value) -> Optional[str]:
    """An image's name as the builders store it (``{"path", "bytes"}``): its path, or None."""
    return value.get("path") if isinstance(value, dict) else getattr(value, "filename", None) or None


def one_line(err: Exception) -> str:
    """An error's words on one line, its type named where they do not say it."""
    text = " ".join(str(err).split()) or type(err).__name__
    return text if isinstance(err, (ValueError, OSError)) else f"{type(err).__name__}: {text}"


class NamedErrors:
    """A collate that names the item it fails on: the batch's rows are tried one by one to find it, and the error
    is an ``ItemError`` naming the table, the row and the image (an error the collate already names an item in,
    an ``ItemError``, is kept as it is)."""

    def __init__(self, collate, table: Side):
        self.collate, self.table = collate, table

    def __call__(self, rows):
        """``collate(rows)``, or the one line naming the item it fails on."""
        try:
            return self.collate(rows)
        except ItemError:
            raise
        except Exception as err:
            culprit = next((row for row in rows if self._fails(row)), None)
            if culprit is None:
                raise
            image = f" (image {culprit.image_name})" if culprit.image_name else ""
            raise ItemError(
                f"{self.table.config} {self.table.id_column}={culprit.id}{image}: the model's input cannot be made "
                f"from it ({one_line(err)})."
            ) from None

    def _fails(self, row) -> bool:
        try:
            self.collate([row])
        except Exception:
            return True
        return False


def worker_errors(batches):
    """``batches`` (a DataLoader's), each error a worker raised re-raised as the main process would have raised it:
    its own type and words, not torch's "Caught ... in DataLoader worker process N" and the worker's traceback."""
    iterator = iter(batches)
    while True:
        try:
            batch = next(iterator)
        except StopIteration:
            return
        except Exception as err:
            original = from_worker(err)
            if original is None:
                raise
            raise original from None
        yield batch


def from_worker(err: Exception) -> Optional[Exception]:
    """The error a DataLoader worker raised, rebuilt from the one torch re-raises in the main process (its message
    is "Caught <type> in DataLoader worker process N.\nOriginal Traceback ..."), or None for any other error."""
    text = err.args[0] if err.args and isinstance(err.args[0], str) else str(err)
    if not text.startswith(f"Caught {type(err).__name__} in DataLoader worker process") or "\nOriginal " not in text:
        return None
    kind = type(err)
    qualified = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    start = text.rfind(f"\n{qualified}: ")
    words = text[start + len(qualified) + 3 :].strip() if start >= 0 else ""
    if issubclass(kind, KeyError):  # a traceback shows the key's repr
        import ast

        try:
            return kind(ast.literal_eval(words))
        except (ValueError, SyntaxError):
            pass
    try:
        return kind(words)
    except Exception:
        return ValueError(words)


def loader(items: Items, collate, batch_size: int, num_workers: int, pin_memory: bool):
    """Batches in dataset order; ``collate`` (image preparation, the model's processor, tokenising) runs in the
    workers, so the main process only receives ready tensors (in pinned memory on CUDA, to be moved without
    waiting). Remote archives' ``hf://`` parts are resolved before the workers start, so each inherits where to
    read them. An item a worker cannot read or prepare ends the iteration in the one line the main process would
    give (``NamedErrors``, ``worker_errors``)."""
    if num_workers:
        resolve_hub_files()
    return worker_errors(
        torch.utils.data.DataLoader(
            items,
            batch_size=batch_size,
            shuffle=False,
            num_workers=num_workers,
            collate_fn=NamedErrors(collate, items.table),
            pin_memory=pin_memory,
            persistent_workers=False,
            prefetch_factor=2 if num_workers else None,  # two batches ready per worker: enough, and bounded memory
            multiprocessing_context=worker_context(num_workers),
            worker_init_fn=keep_freed_memory if num_workers else None,
        )
    )


# glibc's M_MMAP_THRESHOLD and M_TRIM_THRESHOLD (mallopt's parameter numbers) and the size kept under both.
_MMAP_THRESHOLD, _TRIM_THRESHOLD, _KEPT = -3, -1, 1 << 30


def keep_freed_memory(worker_id: int = 0) -> None:
    """Run in each DataLoader worker: keep freed memory in the process's heap for the next batch. By default glibc
    maps each block of 32 MiB or more afresh and hands it back when freed, so every batch's pixel values (a hundred
    MB in float32 for 16 product photos, made and copied four times by the processor) touch new pages, and the page
    faults were half a worker's time. The same bytes are computed; a worker keeps its largest batch's memory. Only
    with glibc (Linux); elsewhere nothing changes."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        mallopt = libc.mallopt if libc is not None else None
    except (OSError, AttributeError):
        return
    if mallopt is not None:
        mallopt(_MMAP_THRESHOLD, _KEPT)
        mallopt(_TRIM_THRESHOLD, _KEPT)


def worker_context(num_workers: int):
    """Workers are forked where the platform forks (Linux): they inherit the loaded processor, which a spawned
    worker would receive pickled with the whole model. Elsewhere the platform's default."""
    import multiprocessing
    import sys

    if num_workers and sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return None
