"""What ``retrieve`` and ``rerank`` are asked to do, as frozen dataclasses the commands fill. Imports nothing heavy."""

import os
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from mmrhub.cores import usable_cores
from mmrhub.declaration import Benchmark
from mmrhub.records.meta import check_run_replaceable
from mmrhub.records.meta import meta_path
from mmrhub.retrieve.presets import NONE
from mmrhub.retrieve.presets import Preset
from mmrhub.retrieve.presets import chosen
from mmrhub.retrieve.presets import resolve
from mmrhub.retrieve.run_files import default_output
from mmrhub.writing import check_target
from mmrhub.writing import local_paths

# --backend's choices: the single-vector encoders (encoders.ENCODERS, which imports torch; a test holds them equal).
# A late-interaction backend (PreFLMR's) is chosen by its preset, never by --backend.
BACKEND_CHOICES = ("sentence-transformers", "transformers")
DEFAULT_MODELS = {
    "sentence-transformers": "Qwen/Qwen3-VL-Embedding-2B",
    "transformers": "OFA-Sys/chinese-clip-vit-large-patch14",  # MIPR is Chinese
}
DEFAULT_RERANKER = "Qwen/Qwen3-VL-Reranker-2B"
# A preset that needs its own model family: --model's default with it (the M2KR card's row).
PRESET_DEFAULT_MODELS = {"preflmr": "LinWeizheDragon/PreFLMR_ViT-G"}
DTYPES = ("auto", "float32", "bfloat16", "float16")
SEARCHES = ("torch", "faiss")


def default_num_workers() -> int:
    """DataLoader workers preparing inputs (decoding, resizing, the processor, tokenising): one per core this
    process may use, shared among the processes a launcher started on this machine (LOCAL_WORLD_SIZE)."""
    local_processes = max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1") or 1))
    return max(1, usable_cores() // local_processes)


@dataclass(frozen=True)
class DataOptions:
    """Which data to load: the benchmark's declaration, its folder (bundled sample if None), split, M2KR archives."""

    benchmark: Benchmark  # looked up by the command
    data_dir: str | None = None
    split: str | None = None
    images_dir: str | None = None
    download_archives: bool = False  # remote archives downloaded whole rather than read in place

    @property
    def folder(self) -> str:
        """The data folder to read: ``data_dir``, else the benchmark's bundled sample."""
        return self.benchmark.data_folder(self.data_dir)


@dataclass(frozen=True)
class RunOptions:
    """Where the model runs (device, dtype), how many workers feed it, and where its results are cached."""

    device: str | None = None  # None: cuda:<local rank> when CUDA is available, else cpu
    dtype: str = "auto"  # one of DTYPES; auto: bfloat16 on CUDA, float32 on CPU
    num_workers: int = field(default_factory=default_num_workers)
    cache_dir: str | None = None  # None: the cache's own folder under $HF_HOME/mmrhub
    use_cache: bool = True

    def check_cache_dir(self) -> None:
        """A cache folder that cannot be one (a file, or a file where one of its folders must be) is one line before
        any work, not a run that silently caches nothing."""
        if not self.use_cache or not self.cache_dir:
            return
        path = Path(self.cache_dir)
        for part in [path, *path.parents]:
            if part.exists():
                if not part.is_dir():
                    raise NotADirectoryError(
                        f"--cache-dir {self.cache_dir}: {part} is a file, not a folder, so nothing could be cached; "
                        "give a folder (made if missing), or leave --cache-dir out for $HF_HOME/mmrhub."
                    )
                return


@dataclass(frozen=True)
class OutputOptions:
    """Where the run is written, whether it is scored, and where per-phase timings go."""

    path: str | None = None  # None: runs/<benchmark>_<model>.json
    score: bool = True
    stats_json: str | None = None
    named_after_model: bool = False  # ``path`` was made from the model's name (baseline's), not given by the user

    def run_path(self, data: "DataOptions", model_id: str, candidates: str | None = None) -> Path:
        """``path``, else ``runs/<benchmark>_<last part of the model id>.json``, checked before any work: neither the
        run, its metadata nor ``stats_json`` may be one of the inputs (the data folder's tables and images, the
        candidates run, a local model folder), and a name made from the model's is refused when it holds a run of
        another model (``check_run_replaceable``)."""
        if self.path and not self.named_after_model:
            path = Path(self.path)
        else:
            path = Path(self.path) if self.path else default_output(data.benchmark.name, model_id)
            check_run_replaceable(path, model_id)
        inputs = data.benchmark.data_inputs(data.folder) + local_paths([data.images_dir, candidates])
        inputs.append(Path(model_id))  # a local model folder (a Hub id names no local file)
        if not path.is_dir():
            path.parent.mkdir(parents=True, exist_ok=True)  # runs/ is made on the first run
        check_target(path, "--output", inputs, example=f"{data.benchmark.name}.json")
        check_target(meta_path(path), "--output's metadata", inputs)
        if self.stats_json:
            check_target(self.stats_json, "--stats-json", inputs, example="stats.json")
        return path


@dataclass(frozen=True)
class ModelSettings:
    """The preset (None: the one the model id names; ``none``: the checkpoint's own) and what overrides it."""

    preset: str | None = None
    query_instruction: str | None = None  # embedding: queries' instruction; reranker: the <Instruct> line
    document_instruction: str | None = None
    min_pixels: int | None = None
    max_pixels: int | None = None
    max_length: int | None = None  # tokens; text is cut, image tokens never
    exif_orientation: str | None = None  # "apply" or "ignore" (presets.EXIF_CHOICES)
    image_processor: str | None = None  # PreFLMR: Hub id or folder of the CLIP image processor
    default_instruction: bool = False  # every query gets the preset's instruction, not its row's own

    def resolve(self, model_id: str, role: str) -> Preset:
        """The settings a run of ``model_id`` in ``role`` uses."""
        overrides = {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "preset"}
        return resolve(model_id, self.preset, role, **overrides)

    def chosen_by(self, model_id: str, role: str) -> str:
        """What chose the preset, in words ("--preset NAME", "the folder's name 'x'", ...), for the run's log."""
        found = chosen(model_id, self.preset, role)
        return found[1] if found else ("--preset none" if self.preset == NONE else "no preset names this model")


@dataclass(frozen=True)
class RetrieveOptions:
    """Embed queries and corpus with ``model``, retrieve the exact top-k (or rank ``candidates`` pools)."""

    data: DataOptions
    model: str  # Hub id or local folder
    backend: str = "sentence-transformers"  # one of BACKEND_CHOICES
    revision: str | None = None
    settings: ModelSettings = field(default_factory=ModelSettings)
    text_weight: float = 0.5  # fusion of separate image and text vectors
    batch_size: int = 32
    top_k: int = 100
    search: str = "torch"  # one of SEARCHES
    candidates: str | None = None  # a baseline run whose ranked items are each query's pool (only they are embedded)
    queries: int | None = None  # embed only the first N queries (None: all)
    query_ids: tuple = ()  # embed only these queries, in this order
    runtime: RunOptions = field(default_factory=RunOptions)
    output: OutputOptions = field(default_factory=OutputOptions)


@dataclass(frozen=True)
class RerankOptions:
    """Rerank the pools of the ``candidates`` run with the cross-encoder ``model``."""

    data: DataOptions
    candidates: str
    model: str = DEFAULT_RERANKER
    revision: str | None = None
    settings: ModelSettings = field(default_factory=ModelSettings)  # query_instruction: the <Instruct> line
    batch_size: int = 16  # pairs per forward pass
    top_n: int | None = None  # None: the whole pool
    chunk_queries: int = 64  # queries per cached chunk of scores
    shared_prefix: bool = True  # each query's prefix computed once for all its candidates, where the model allows
    runtime: RunOptions = field(default_factory=RunOptions)
    output: OutputOptions = field(default_factory=OutputOptions)

    def __post_init__(self):
        for name in ("batch_size", "chunk_queries", "top_n"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"--{name.replace('_', '-')} {value}: must be at least 1.")
