"""dataset_infos.json: features, splits and sizes of every builder's bundled sample, generated from the builders."""

import json
import os
from pathlib import Path

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.benchmarks import builder_module


def dataset_infos() -> dict:
    """One entry per config, keyed ``<benchmark>/<config>``, in a stable order.

    The keys are not bare config names on purpose: datasets 3.x reads a dataset_infos.json beside a loading
    script and would then hold the real benchmark to the sample's split sizes.
    """
    infos = {}
    for benchmark in BENCHMARKS:
        module = builder_module(benchmark)
        for config in module.CONFIG_NAMES:
            dataset = module.load(config)
            info = dataset.info
            infos[f"{benchmark}/{config}"] = {
                "builder_name": benchmark,
                "config_name": config,
                "version": str(info.version),
                "description": info.description,
                "citation": info.citation,
                "license": info.license,
                "features": portable_features(info.features.to_dict()),
                "splits": {str(dataset.split): {"name": str(dataset.split), "num_examples": dataset.num_rows}},
                # Source bytes: Arrow sizes would depend on where the checkout lives (image paths are absolute).
                "download_size": _source_bytes(module, config),
            }
    return infos


def portable_features(features):
    """Write unsized lists in the legacy ``[feature]`` form, which datasets 3.x and 4.x+ both read
    (3.x does not know the ``List`` type that 4.x+ writes)."""
    if isinstance(features, dict):
        if features.get("_type") == "List" and "length" not in features:
            return [portable_features(features["feature"])]
        return {key: portable_features(value) for key, value in features.items()}
    if isinstance(features, list):
        return [portable_features(value) for value in features]
    return features


def _source_bytes(module, config: str) -> int:
    return sum(os.path.getsize(path) for path in module.source_files(config, str(module.SAMPLE_DIR)))


def render() -> str:
    return json.dumps(dataset_infos(), ensure_ascii=False, indent=2, sort_keys=False) + "\n"


def write_dataset_infos(path) -> None:
    Path(path).write_text(render(), encoding="utf-8")
