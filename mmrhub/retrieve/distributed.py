"""One process or many (``torchrun`` / ``accelerate launch``): rank, device, sharding and gathering.

Both launchers set RANK, WORLD_SIZE and LOCAL_RANK; rank r embeds the r-th contiguous shard
(``datasets.distributed.split_dataset_by_node``), so the gathered shards are the corpus in its own order.
"""

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass
class Context:
    """This process's rank among ``world_size`` and its device."""

    rank: int = 0
    world_size: int = 1
    device: torch.device = torch.device("cpu")

    @property
    def is_main(self) -> bool:
        """Rank 0: the process that reads the judgments, searches and writes."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        """More than one process."""
        return self.world_size > 1

    @classmethod
    def from_launcher(cls, device=torch.device("cpu")) -> "Context":
        """This process's rank and world size as the launcher set them (RANK, WORLD_SIZE; one process without a
        launcher): the one place they are read."""
        return cls(int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1")), torch.device(device))


def setup(device=None) -> Context:
    """Join the process group when launched with WORLD_SIZE > 1 (NCCL on CUDA, gloo on CPU)."""
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if device is None:
        device = f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu"
    elif torch.device(device).type == "cuda" and not torch.cuda.is_available():
        built = "" if torch.version.cuda else ", a build without CUDA"
        raise ValueError(
            f"--device {device}: CUDA is not available here (torch {torch.__version__}{built}); give --device cpu, or "
            "leave --device out to run where CUDA is."
        )
    elif torch.device(device) == torch.device("cuda"):  # --device cuda: this process's GPU (set_device needs one)
        device = f"cuda:{local_rank}"
    context = Context.from_launcher(device)
    if context.device.type == "cuda":
        torch.cuda.set_device(context.device)
    if context.distributed and not dist.is_initialized():
        cuda = context.device.type == "cuda"
        dist.init_process_group(backend="nccl" if cuda else "gloo", device_id=context.device if cuda else None)
    return context


def launched(runtime, work):
    """``work(context)`` in the process group the launcher set up (or alone), which is left afterwards;
    ``runtime``: the RunOptions (device, workers)."""
    if runtime.num_workers:  # the tokenizers' own threads would fight the DataLoader workers
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    context = setup(runtime.device)
    try:
        return work(context)
    finally:
        teardown(context)


def teardown(context: Context):
    """Leave the process group, if one was joined."""
    if context.distributed and dist.is_initialized():
        dist.destroy_process_group()


def shard(dataset, context: Context):
    """This rank's contiguous shard of ``dataset`` (all of it on one process)."""
    if not context.distributed:
        return dataset
    from datasets.distributed import split_dataset_by_node

    return split_dataset_by_node(dataset, rank=context.rank, world_size=context.world_size)


def gather_rows(tensor: torch.Tensor, context: Context) -> torch.Tensor:
    """Concatenate every rank's rows in rank order (shards may differ in length by one)."""
    if not context.distributed:
        return tensor
    sizes = [torch.zeros(1, dtype=torch.int64, device=tensor.device) for _ in range(context.world_size)]
    dist.all_gather(sizes, torch.tensor([len(tensor)], device=tensor.device))
    sizes = [int(size.item()) for size in sizes]
    padded = tensor.new_zeros((max(sizes), *tensor.shape[1:]))
    padded[: len(tensor)] = tensor
    pieces = [torch.empty_like(padded) for _ in range(context.world_size)]
    dist.all_gather(pieces, padded.contiguous())
    return torch.cat([piece[:size] for piece, size in zip(pieces, sizes)])


def largest(value: int, context: Context) -> int:
    """The largest of every rank's ``value``."""
    if not context.distributed:
        return value
    box = torch.tensor([value], dtype=torch.int64, device=context.device)
    dist.all_reduce(box, op=dist.ReduceOp.MAX)
    return int(box.item())


def broadcast(value, context: Context):
    """Rank 0's Python value on every rank."""
    if not context.distributed:
        return value
    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def barrier(context: Context):
    """Wait for every rank (nothing on one process)."""
    if context.distributed:
        dist.barrier()


TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def resolve_dtype(name: str, device: torch.device, preset: str | None = None) -> torch.dtype:
    """``auto``: the preset's dtype where it names one (PreFLMR's float32, as its authors load it), else bfloat16
    on CUDA and float32 elsewhere; any other name its own dtype."""
    if name == "auto":
        if preset is not None:
            return TORCH_DTYPES[preset]
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    return TORCH_DTYPES[name]
