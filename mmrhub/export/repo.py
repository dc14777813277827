"""Export a benchmark as a script-free Hub dataset repo: one Parquet folder per config and a README.md card."""

import errno
import logging
import os
from pathlib import Path
from typing import Optional

from mmrhub.declaration import Benchmark
from mmrhub.export import FORMATS
from mmrhub.export.atomic import atomic_dir
from mmrhub.export.card import ExportedConfig
from mmrhub.export.card import render
from mmrhub.export.mteb_layout import DEFAULT_CONFIG as MTEB_DEFAULT_CONFIG
from mmrhub.export.parquet import MAX_SHARD_SIZE
from mmrhub.export.parquet import RowSource
from mmrhub.export.parquet import write_split
from mmrhub.export.trec import readme
from mmrhub.export.trec import write_qrels

logger = logging.getLogger(__name__)


def data_root(benchmark: Benchmark, data_dir: Optional[str]) -> Optional[str]:
    """The local folder the export reads (None for remote data): never replaced, and every file read lies in it."""
    folder = benchmark.data_folder(data_dir)
    return None if "://" in folder else str(Path(folder).absolute())


def images_folder(builder_options: Optional[dict], root: Optional[str]) -> Optional[str]:
    """The local folder every image read lies in: the archives' folder the user named (``images_dir``), else the
    data folder; None when the images are remote (members are then read straight into the shards, and no local
    file is involved)."""
    images_dir = (builder_options or {}).get("images_dir")
    if not images_dir:
        return root
    return None if "://" in str(images_dir) else str(Path(images_dir).absolute())


def row_sources(benchmark: Benchmark, format: str, root: Optional[str]) -> dict:
    """Per config, what its messages name a row by: the id column of the builder's table (``id`` in MTEB's)."""
    if format == "mteb":
        return {name: RowSource(name, root, "id") for name in ("corpus", "query")}
    return {side.config: RowSource(side.config, root, side.id_column) for side in (benchmark.queries, benchmark.corpus)}


def no_space(out: Path) -> OSError:
    """The error for a full disk, saying what was kept."""
    kept = f" and the previous {out} is unchanged" if out.exists() else ""
    return OSError(
        f"No space left on device while exporting to {out.parent}: the partial export was removed{kept}. "
        "Free some space or choose another OUT."
    )


def export(
    benchmark: Benchmark,
    out,
    data_dir: Optional[str] = None,
    format: str = "hf",
    repo_id: Optional[str] = None,
    metric_space: Optional[str] = None,
    overwrite: bool = False,
    max_shard_size=MAX_SHARD_SIZE,
    cache_dir: Optional[str] = None,
    builder_options: Optional[dict] = None,
) -> Path:
    """Build every config with the builder of ``benchmark`` (a ``mmrhub.benchmarks.Benchmark``) and write the
    repo folder ``out`` atomically. Without ``data_dir`` the bundled sample is exported, and its card says so.

    ``repo_id`` and ``metric_space`` only name the repos in the card's code snippets; ``builder_options`` are the
    builder's own keywords (``check_images``, M2KR's ``images_dir``).
    """
    if format not in FORMATS:
        raise ValueError(f"Unknown export format {format!r}; expected one of {', '.join(FORMATS)}.")
    module = benchmark.builder()
    repo_id = repo_id or f"your-org/{benchmark.name}" + ("-mteb" if format == "mteb" else "")
    metric_space = metric_space or f"your-org/{benchmark.name}"

    def load(config):
        return module.load(config, data_dir=data_dir, cache_dir=cache_dir, **(builder_options or {}))

    if format == "trec":
        return _export_qrels(
            benchmark, module, load, Path(os.path.abspath(out)), overwrite, data_root(benchmark, data_dir)
        )
    if format == "hf":
        tables = ((config, load(config)) for config in module.CONFIG_NAMES)
        default_config = benchmark.default_config
    else:
        tables = benchmark.mteb_tables(module, load)
        default_config = MTEB_DEFAULT_CONFIG
    root = data_root(benchmark, data_dir)
    images_root = images_folder(builder_options, root)
    sources = row_sources(benchmark, format, images_root)
    out = Path(os.path.abspath(out))  # "." and "a/.." named as the folders they are
    try:
        protected = [folder for folder in (root, images_root) if folder]
        with atomic_dir(out, overwrite=overwrite, protected=protected) as work:
            configs = []
            for name, dataset in tables:
                split = str(dataset.split)
                source = sources.get(name, RowSource(name, root))
                written = write_split(dataset, work, name, split, max_shard_size=max_shard_size, source=source)
                logger.info("%s: %d rows in %d file(s)", name, written.num_examples, len(written.files))
                configs.append(ExportedConfig(name=name, split=split, features=dataset.features, written=written))
            card = render(
                benchmark,
                module,
                configs,
                default_config,
                repo_id,
                metric_space,
                mteb=format == "mteb",
                sample=data_dir is None,
            )
            (work / "README.md").write_text(card, encoding="utf-8")
    except OSError as err:
        if err.errno == errno.ENOSPC:
            raise no_space(out) from err
        raise
    return out


def _export_qrels(benchmark: Benchmark, module, load, out: Path, overwrite: bool, root: Optional[str]) -> Path:
    """The judgments as trec_eval qrels files, written aside and moved into place like every export."""
    try:
        with atomic_dir(out, overwrite=overwrite, protected=[root] if root else []) as work:
            written = write_qrels(benchmark.qrels_tables(module, load), work)
            notes = benchmark.card.get("trec_notes", "")
            (work / "README.md").write_text(readme(benchmark.title, written, notes), encoding="utf-8")
    except OSError as err:
        if err.errno == errno.ENOSPC:
            raise no_space(out) from err
        raise
    return out
