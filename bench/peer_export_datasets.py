"""What a user writes instead of ``mmrhub export mipr``: the MIPR README's ``load_dataset("json")`` for each table,
the image files as an ``Image`` column, and each table written as Parquet shards with the images embedded, as
``Dataset.push_to_hub`` writes them (its shard loop, minus the upload). No image is opened: the bytes are copied.

    python bench/peer_export_datasets.py DATA_DIR OUT
"""

import sys
from pathlib import Path

import datasets
from datasets import Image
from datasets import load_dataset
from datasets.arrow_writer import get_writer_batch_size_from_data_size
from datasets.arrow_writer import get_writer_batch_size_from_features
from datasets.table import embed_table_storage
from datasets.utils.py_utils import convert_file_size_to_int

# table: (file, its image-name column, the folder of its images under images/), as the MIPR README lays them out
TABLES = {
    "queries": ("mipr_query.jsonl", "image_url", "query_images"),
    "corpus": ("mipr_corpus.jsonl", "pict_url", "product_images"),
    "qrels": ("mipr_annotation.jsonl", None, None),
}


def push_to_hub_shards(dataset: datasets.Dataset, folder: Path) -> None:
    """``Dataset._push_parquet_shards_to_hub``'s shard loop, writing the shards to ``folder``."""
    nbytes = dataset._estimate_nbytes()
    batch_size = get_writer_batch_size_from_features(dataset.features) or get_writer_batch_size_from_data_size(
        len(dataset), nbytes
    )
    num_shards = int(nbytes / convert_file_size_to_int(datasets.config.MAX_SHARD_SIZE)) + 1
    folder.mkdir(parents=True)
    for index in range(num_shards):
        shard = dataset.shard(num_shards=num_shards, index=index, contiguous=True).with_format("arrow")
        shard = shard.map(embed_table_storage, batched=True, batch_size=batch_size, keep_in_memory=True)
        shard.to_parquet(folder / f"test-{index:05d}-of-{num_shards:05d}.parquet", batch_size=batch_size)


def main(data: Path, out: Path) -> None:
    datasets.disable_progress_bars()
    for name, (file, column, images) in TABLES.items():
        table = load_dataset("json", data_files={"test": str(data / file)}, split="test")
        if column:
            paths = [str(data / "images" / images / image) for image in table[column]]
            table = table.add_column("image", paths).cast_column("image", Image())
        push_to_hub_shards(table, out / name)


if __name__ == "__main__":
    main(*map(Path, sys.argv[1:]))
