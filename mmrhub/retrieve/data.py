"""Queries and corpus of a benchmark, loaded through its builder, read lazily by DataLoader workers."""

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from mmrhub.declaration import Side
from mmrhub.retrieve import distributed
from mmrhub.retrieve.options import DataOptions

if TYPE_CHECKING:
    from datasets import Dataset


@dataclass(frozen=True)
class LoadedSide:
    """The queries or the corpus as loaded: its ``Dataset``, its declaration (a benchmark Side) and its ids."""

    dataset: "Dataset"
    table: Side
    ids: list  # a plain list: indexing a datasets Column costs a formatting call per item


def load_side(data: DataOptions, side: str) -> LoadedSide:
    """The queries or corpus of ``data.benchmark`` (``side``: "queries" or "corpus"), through its builder."""
    benchmark = data.benchmark
    table = getattr(benchmark, side)
    options = benchmark.builder_options(images_dir=data.images_dir)
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


def fingerprint(dataset, table) -> str:
    """Content hash of ids, texts and image names: what the embeddings depend on, independent of the data's path."""
    digest = hashlib.sha256()
    columns = dataset.select_columns([table.id_column, table.text_column, table.image_name_column])
    for batch in columns.with_format("arrow").iter(batch_size=10_000):
        for name in (table.id_column, table.text_column, table.image_name_column):
            digest.update(name.encode())
            for value in batch[name].to_pylist():
                digest.update(b"\x00" if value is None else b"\x01" + value.encode() + b"\x00")
    return digest.hexdigest()


class Items(torch.utils.data.Dataset):
    """(id, text or None, PIL image) rows; images are decoded in whichever process fetches them (the workers)."""

    def __init__(self, dataset, table):
        self.dataset = dataset.select_columns([table.id_column, table.text_column, "image"])
        self.table = table

    def __len__(self):
        return len(self.dataset)

    def __getitems__(self, indices):
        batch = self.dataset[list(indices)]
        texts = [text if text else None for text in batch[self.table.text_column]]
        return list(zip(batch[self.table.id_column], texts, batch["image"]))

    def __getitem__(self, index):
        return self.__getitems__([index])[0]


def loader(items: Items, collate, batch_size: int, num_workers: int, pin_memory: bool):
    """Batches in dataset order; ``collate`` (image conversion, model preprocessing) runs in the workers."""
    return torch.utils.data.DataLoader(
        items,
        batch_size=batch_size,
        shuffle=False,
        num_workers=num_workers,
        collate_fn=collate,
        pin_memory=pin_memory,
        persistent_workers=False,
        prefetch_factor=4 if num_workers else None,
    )
