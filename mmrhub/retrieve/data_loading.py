"""Queries and corpus of a benchmark, loaded through its builder, read lazily by DataLoader workers."""

import hashlib
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING
from typing import NamedTuple
from typing import Optional

import torch

from mmrhub.declaration import Side
from mmrhub.image_digests import image_digests
from mmrhub.retrieve import distributed
from mmrhub.retrieve.images import EXIF_APPLY
from mmrhub.retrieve.images import decoded
from mmrhub.retrieve.options import DataOptions

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
    queries, corpus = load_side(data, "queries"), load_side(data, "corpus")
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
    (None when it has none) and its own instruction (M2KR's queries; None elsewhere)."""

    id: str
    text: Optional[str]
    image: Optional["PIL.Image.Image"]
    instruction: Optional[str] = None


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
        texts = [text if text else None for text in batch[self.table.text_column]]
        images = [decoded(value, self.orientation) for value in batch["image"]] if self.images else [None] * len(texts)
        instructions = batch[self.instruction_column] if self.instruction_column else [None] * len(texts)
        return [Row(*fields) for fields in zip(batch[self.table.id_column], texts, images, instructions)]

    def __getitem__(self, index):
        return self.__getitems__([index])[0]


def has_instructions(dataset) -> bool:
    """Whether a queries table carries its own instructions (``INSTRUCTION_COLUMN``)."""
    return INSTRUCTION_COLUMN in dataset.column_names


def loader(items: Items, collate, batch_size: int, num_workers: int, pin_memory: bool):
    """Batches in dataset order; ``collate`` (image preparation, the model's processor, tokenising) runs in the
    workers, so the main process only receives ready tensors (in pinned memory on CUDA, to be moved without
    waiting)."""
    return torch.utils.data.DataLoader(
        items,
        batch_size=batch_size,
        shuffle=False,
        num_workers=num_workers,
        collate_fn=collate,
        pin_memory=pin_memory,
        persistent_workers=False,
        prefetch_factor=2 if num_workers else None,  # two batches ready per worker: enough, and bounded memory
        multiprocessing_context=worker_context(num_workers),
        worker_init_fn=keep_freed_memory if num_workers else None,
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
