"""Building blocks of the export tests: exporting a bundled sample, row comparisons, and what the MTEB exports must
hold (the builders' ids, texts and judgments)."""

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


def expected_mipr():
    """(corpus ids, corpus texts, query ids, query texts, {query: {item: gain}}) of the MIPR builder."""
    mipr = builder_module("mipr")
    corpus, queries, qrels = mipr.load("corpus"), mipr.load("queries"), mipr.load("qrels")
    judgments = {
        row["idx"]: {item["item_id"]: mipr.GAINS.get(item["final_grade"], 0) for item in row["items"]} for row in qrels
    }
    return corpus["item_id"], corpus["title"], queries["idx"], queries["query"], judgments


def expected_m2kr():
    """The same five of the M2KR builder, each positive passage judged 1."""
    m2kr = builder_module("m2kr")
    passages, data, answers = (
        m2kr.load("challenge_passage"),
        m2kr.load("challenge_data"),
        m2kr.load("challenge_answers"),
    )
    judgments = {row["question_id"]: {pid: 1 for pid in row["pos_item_ids"]} for row in answers}
    return passages["passage_id"], passages["passage_content"], data["question_id"], data["question"], judgments


EXPECTED = {"mipr": expected_mipr, "m2kr": expected_m2kr}
