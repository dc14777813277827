"""What both builders (``mipr.py``, ``m2kr.py``) share, written once: the cache key folded from the sources, the
bundled sample when no data_dir is given, each config's info (its features from the builder, the rest from
``dataset_infos.json``), the tables written in batches, the Hub-offline test and the advice when the Hub cannot be
read, and an unusable cache said in one line.

A sibling of the builders: as a datasets < 4 loading script each builder imports it relatively (and datasets copies
it beside the script), imported as a top-level module it has no package.
"""

import logging
import os
from pathlib import Path
from typing import Optional

import datasets
import pyarrow as pa

# fmt: off
if __package__: \
from .mmr_cache import VouchedCache, cache_error, key_of
else:
    from mmr_cache import VouchedCache, cache_error, key_of
if __package__: \
from .mmr_inputs import load_json_file
else:
    from mmr_inputs import load_json_file
# fmt: on

DATASETS_CACHE = "HF_HOME (or HF_DATASETS_CACHE, or cache_dir=)"


def bundled_sample(name: str) -> Path:
    """The bundled sample of benchmark ``name``: ``data/<name>/`` beside the builders in the repository,
    ``mmrhub/data/<name>/`` in an installed wheel (a datasets 3.6 script's copy has neither)."""
    here = Path(__file__).resolve().parent
    return here / "data" / name if (here / "data" / name).is_dir() else here / "mmrhub" / "data" / name


class SourceKeyedBuilder(VouchedCache):
    """A mixin for a builder (put it before ``datasets.ArrowBasedBuilder``) whose cache entries are keyed on its
    sources and vouch for their bytes, and whose configs each validate their table in ``_split_generators`` and
    hand it whole to ``_generate_tables``.

    A builder sets ``BENCHMARK`` (its name in messages), ``SAMPLE_DIR``, ``FEATURES`` and ``INFO`` (below), and
    defines ``source_hash(**kwargs)`` (the fingerprint of the builder's code and of the sources the config reads).
    """

    BENCHMARK = ""
    SAMPLE_DIR: Optional[Path] = None  # the bundled sample, loaded when no data_dir is given
    FEATURES: dict = {}  # config name -> its datasets.Features
    INFO: dict = {}  # the DatasetInfo's description, citation and license

    def __init__(self, *args, hash: Optional[str] = None, **kwargs):
        # datasets keys its cache on ``hash`` (3.6: the script's code; 4+: None unless given) and would return old
        # rows after the data changed: fold a fingerprint of the sources into it, however the builder is called.
        sample = self.SAMPLE_DIR
        if not kwargs.get("data_dir") and sample is not None and sample.is_dir():  # a 3.6 script's copy has none
            logging.getLogger(type(self).__module__).warning(
                "No data_dir given: loading the bundled %s sample %s, not the benchmark.", self.BENCHMARK, sample
            )
            kwargs["data_dir"] = str(sample)
        fingerprint = self.source_hash(**kwargs)
        try:
            super().__init__(*args, hash=combined_hash(hash, fingerprint), **kwargs)
        except OSError as err:  # datasets makes its cache folder here: a read-only or misplaced HF_HOME
            folder = kwargs.get("cache_dir") or datasets.config.HF_DATASETS_CACHE
            said = cache_error(err, folder, DATASETS_CACHE)
            if said is err:
                raise
            raise said from None

    def source_hash(self, **kwargs) -> str:
        """The fingerprint of the builder's code and of the sources the config of ``kwargs`` reads."""
        raise NotImplementedError

    def _info(self):
        return datasets.DatasetInfo(features=self.FEATURES[self.config.name], **self.INFO)

    def _generate_tables(self, table):
        # the table _split_generators validated (datasets would wrap its errors in DatasetGenerationError here)
        for index, batch in enumerate(table.to_batches(max_chunksize=10_000)):
            yield index, pa.Table.from_batches([batch])

    @classmethod
    def get_all_exported_dataset_infos(cls):
        """The configs' infos from dataset_infos.json beside the script, not from a README card."""
        # datasets 3.6 reads the README.md beside the script as a dataset card first; the repository README has no
        # YAML block, so every load warned "Repo card metadata block was not found". Read dataset_infos.json alone.
        path = os.path.join(cls.get_imported_module_dir(), "dataset_infos.json")
        if not os.path.isfile(path):
            return datasets.info.DatasetInfosDict()
        infos = load_json_file(path)
        return datasets.info.DatasetInfosDict(
            {name: datasets.DatasetInfo.from_dict(info) for name, info in infos.items()}
        )


def combined_hash(given: Optional[str], fingerprint: str) -> str:
    """datasets' ``hash`` (if any) and the sources' fingerprint, as one key."""
    return key_of(given, fingerprint) if given else fingerprint


def datasets_offline() -> bool:
    """Whether the Hub may not be asked (HF_HUB_OFFLINE or HF_DATASETS_OFFLINE)."""
    flags = (os.environ.get(name, "").upper() for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))
    return any(flag in ("1", "ON", "YES", "TRUE") for flag in flags) or bool(
        getattr(datasets.config, "HF_HUB_OFFLINE", False)
    )


def hub_help(base: str, problem: str, local_layout: str) -> str:
    """The advice when ``base`` is on the Hub and cannot be read: a local folder ``local_layout``."""
    return f"data_dir {base} is on the Hub, but {problem}; pass data_dir= (--data-dir) a local folder {local_layout}."


def hub_problem(err: Optional[BaseException] = None) -> str:
    """Why the Hub cannot be read: offline (no ``err``), or ``err``."""
    if err is None:
        return "the Hub is offline here (HF_HUB_OFFLINE or HF_DATASETS_OFFLINE is set)"
    return f"the Hub cannot be reached ({type(err).__name__}: {err})"
