"""dataset_infos.json: features, splits and sizes of every builder's bundled sample, generated from the builders."""

import json
import os

from mmrhub.export.parquet import portable_features
from mmrhub.writing import write_text


def dataset_infos(benchmarks) -> dict:
    """One entry per config, keyed ``<benchmark>/<config>``, in a stable order.

    The keys are not bare config names on purpose: datasets 3.x reads a dataset_infos.json beside a loading
    script and would then hold the real benchmark to the sample's split sizes.
    """
    infos = {}
    for benchmark in benchmarks:
        module = benchmark.builder()
        for config in benchmark.configs:
            dataset = module.load(config, data_dir=str(benchmark.sample_dir))
            info = dataset.info
            infos[f"{benchmark.name}/{config}"] = {
                "builder_name": benchmark.name,
                "config_name": config,
                "version": str(info.version),
                "description": info.description,
                "citation": info.citation,
                "license": info.license,
                "features": portable_features(info.features),
                "splits": {str(dataset.split): {"name": str(dataset.split), "num_examples": dataset.num_rows}},
                # Source bytes: Arrow sizes would depend on where the checkout lives (image paths are absolute).
                "download_size": _source_bytes(module, config, benchmark.sample_dir),
            }
    return infos


def _source_bytes(module, config: str, data_dir) -> int:
    return sum(os.path.getsize(path) for path in module.source_files(config, str(data_dir)))


def render(benchmarks) -> str:
    """dataset_infos.json's text for ``benchmarks``."""
    return json.dumps(dataset_infos(benchmarks), ensure_ascii=False, indent=2, sort_keys=False) + "\n"


def write_dataset_infos(path, benchmarks) -> None:
    """Write ``render(benchmarks)`` to ``path``."""
    write_text(path, render(benchmarks))
