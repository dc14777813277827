"""Building blocks of the export tests: exporting a bundled sample, and row comparisons."""

import pyarrow as pa
from datasets.utils.file_utils import xopen

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.export.parquet import file_name
from mmrhub.export.repo import export as export_repo

SPLITS = {"mipr": "test", "m2kr": "train"}
DEFAULTS = {"mipr": "qrels", "m2kr": "challenge_data"}


def builder_module(benchmark: str):
    return BENCHMARKS[benchmark].builder()


def export(benchmark: str, out, **options):
    """``mmrhub.export.repo.export`` of the benchmark named ``benchmark``."""
    return export_repo(BENCHMARKS[benchmark], out, **options)


def builder_table(benchmark: str, config: str) -> pa.Table:
    return BENCHMARKS[benchmark].builder().load(config).with_format("arrow")[:]


def read_source(path: str) -> bytes:
    with xopen(path, "rb") as f:
        return f.read()


def embedded_expected(table: pa.Table) -> pa.Table:
    """The builder's table with every image reference replaced by what the export must hold: the file's bytes
    and its own name."""
    for index, field in enumerate(table.schema):
        if field.name == "image":
            images = [
                {"bytes": read_source(image["path"]), "path": file_name(image["path"])}
                for image in table[field.name].to_pylist()
            ]
            table = table.set_column(index, field, pa.array(images, field.type))
    return table


def run_cli(argv) -> int:
    """``mmrhub <argv>`` as the installed command runs it: errors become one line on stderr and exit status 1."""
    from mmrhub.cli import main

    return main(argv)
