"""Copies of the tiny checkpoints (``scripts/tiny_models.py``) damaged as a broken download or a bad edit leaves a
model: one NaN weight, a whole tensor of NaN, an infinite tensor, a tensor of finite values so large that the
model's sums overflow, a weight stored as integers, or an image processor whose ``image_std`` is 0."""

import json
import shutil
from pathlib import Path

WEIGHT_DAMAGES = ("one NaN weight", "a tensor of NaN", "an infinite tensor")
DAMAGES = (*WEIGHT_DAMAGES, "image_std of 0")
PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")


def damaged_copy(source, target, damage: str, tensor: str) -> Path:
    """``source`` copied to ``target`` with ``damage`` done to the stored tensor named ``tensor`` (or, for
    ``image_std of 0``, to every image processor config in the folder)."""
    target = Path(shutil.copytree(source, target))
    if damage == "image_std of 0":
        for path in [p for name in PROCESSOR_FILES for p in target.rglob(name)]:
            config = json.loads(path.read_text())
            inner = config.get("image_processor", config)
            inner["image_std"] = [0.0, 0.0, 0.0]
            path.write_text(json.dumps(config, indent=1))
        return target
    import torch  # here: the helper's names import on a partial install, where the tests that damage skip
    from safetensors import safe_open
    from safetensors.torch import save_file

    change = {
        "one NaN weight": lambda t: t.flatten().index_fill(0, torch.tensor([0]), float("nan")).reshape(t.shape),
        "a tensor of NaN": lambda t: torch.full_like(t, float("nan")),
        "an infinite tensor": lambda t: torch.full_like(t, float("inf")),
        "overflowing weights": lambda t: torch.full_like(t, 3e38),
        "a weight stored as int64": lambda t: t.round().to(torch.int64),
    }[damage]
    for path in sorted(target.rglob("*.safetensors")):
        with safe_open(path, "pt") as f:
            if tensor not in f.keys():
                continue
            tensors, metadata = {name: f.get_tensor(name) for name in f.keys()}, f.metadata()
        tensors[tensor] = change(tensors[tensor]).contiguous()
        save_file(tensors, path, metadata=metadata)
        return target
    raise KeyError(f"{tensor} is in no safetensors file of {source}")
