"""Queries and corpus of a benchmark, loaded through its builder, read lazily by DataLoader workers."""

import hashlib

import torch

from mmrhub.retrieve import distributed


def load_side(benchmark, side: str, data_dir=None, split=None, images_dir=None):
    """The queries or corpus ``Dataset`` of a benchmark (bundled sample without ``data_dir``) and its Side;
    ``images_dir``: M2KR's archives, if kept elsewhere."""
    table = getattr(benchmark, side)
    data_dir = str(data_dir or benchmark.sample_dir)
    options = benchmark.builder_options(images_dir=images_dir)
    dataset = benchmark.builder().load(table.config, data_dir=data_dir, split=split or benchmark.split, **options)
    return dataset, table


def load_both_sides(benchmark, args, context):
    """(queries, their Side, corpus, its Side); rank 0 prepares the builders' caches, the other ranks then read them."""
    if not context.is_main:
        distributed.barrier(context)
    queries, query_table = load_side(benchmark, "queries", args.data_dir, args.split, args.images_dir)
    corpus, corpus_table = load_side(benchmark, "corpus", args.data_dir, args.split, args.images_dir)
    if context.is_main:
        distributed.barrier(context)
    return queries, query_table, corpus, corpus_table


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
