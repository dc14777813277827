"""Shared fixtures of the export tests: each bundled sample exported once per session, and row comparisons."""

import pyarrow as pa
import pytest
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


@pytest.fixture(scope="session")
def exported(tmp_path_factory):
    """``exported(benchmark, format)`` -> the repo folder, exported from the bundled sample on first use."""
    root = tmp_path_factory.mktemp("export")
    done = {}

    def get(benchmark: str, format: str = "hf"):
        if (benchmark, format) not in done:
            done[benchmark, format] = export(benchmark, root / f"{benchmark}-{format}", format=format)
        return done[benchmark, format]

    return get


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
