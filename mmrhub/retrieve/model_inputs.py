"""What the embedder (``encoders.py``) and the reranker (``rerank/model.py``) hand their models alike: images in RGB
(or under a Qwen3-VL pixel budget), a chat-template model's processing keywords, an image + text input, the
pixel values the workers send compacted and the main process moves to the device, and what decides the pixels a
model sees (for the cache key and the run's metadata).
"""

import torch

from mmrhub.retrieve.images import RESIZE_RULE
from mmrhub.retrieve.images import BudgetImages
from mmrhub.retrieve.images import SquareImages
from mmrhub.retrieve.images import present
from mmrhub.retrieve.presets import Preset

FRAMES_KEY = "mmrhub_pixel_frames"  # (frames, values of one frame a patch): pixel values sent with one frame


def rgb(row_id, image):
    """The item's image in RGB; an error naming the item when it has none."""
    image = present(row_id, image)
    return image if image.mode == "RGB" else image.convert("RGB")


def refuse_pixel_budget(settings: Preset, model_id: str) -> None:
    """--min-pixels / --max-pixels are refused, not ignored, for a model without a chat template: they apply to
    Qwen3-VL's (``chat_inputs``)."""
    if settings.min_pixels or settings.max_pixels:
        raise ValueError(
            f"--min-pixels / --max-pixels: {model_id} takes no chat template; they apply to Qwen3-VL models."
        )


def to_device(features: dict, device) -> dict:
    """A collated batch's tensors on ``device``, copied without waiting (from pinned memory on CUDA); other values
    as they are. Pixel values ``compact`` sent with one frame of two get their second frame back there."""
    moved = {
        key: value.to(device, non_blocking=True) if isinstance(value, torch.Tensor) else value
        for key, value in features.items()
    }
    frames = moved.pop(FRAMES_KEY, None)
    if frames:
        pixels = moved["pixel_values"]
        channels = pixels.shape[1] // frames[1]
        moved["pixel_values"] = (
            pixels.view(len(pixels), channels, 1, -1).expand(-1, -1, frames[0], -1).reshape(len(pixels), -1)
        )
    return moved


class Compact:
    """What the workers send of a Qwen-VL processor's pixel values on CUDA, for the main process's one copy of each
    batch (into pinned memory) to be small: its main cost per item. The processor repeats an image into the two
    frames of a temporal patch (``temporal_patch_size``), so a patch's 1,536 values are 768 twice: the first frame
    is sent, and ``to_device`` repeats it on the device (where the frames are not equal, both are sent). Values are
    cast to the model's dtype, the cast its vision tower makes first (Qwen3-VL's patch embedding). The model gets
    the same numbers in its own dtype. Off (None) on CPU, where there is no copy to save."""

    def __init__(self, dtype, temporal: int):
        self.dtype, self.temporal = dtype, temporal

    @classmethod
    def for_model(cls, module, device, dtype):
        """The compaction a chat model on ``device`` in ``dtype`` takes, or None."""
        temporal = getattr(
            getattr(getattr(module, "processor", None), "image_processor", None), "temporal_patch_size", 0
        )
        if torch.device(device).type != "cuda" or not temporal:
            return None
        return cls(dtype if dtype in (torch.bfloat16, torch.float16) else None, int(temporal))

    def __call__(self, features):
        """``features`` with their pixel values compacted (in place)."""
        pixels = features.get("pixel_values")
        if not isinstance(pixels, torch.Tensor) or not pixels.is_floating_point() or pixels.ndim != 2:
            return features
        if self.temporal > 1 and pixels.shape[1] % self.temporal == 0:
            frames = pixels.view(len(pixels), 3, self.temporal, -1)
            if all(torch.equal(frames[:, :, 0], frames[:, :, t]) for t in range(1, self.temporal)):
                pixels = frames[:, :, 0].reshape(len(pixels), -1)
                features[FRAMES_KEY] = (self.temporal, pixels.shape[1] // 3)
        features["pixel_values"] = pixels.to(self.dtype) if self.dtype is not None else pixels.contiguous()
        return features


def with_text(item: dict, text):
    """An image + text input with ``text`` (the image alone when it is None)."""
    return {**item, "text": text} if text else item["image"]


def prepare_inputs(module, model, settings: Preset, model_id: str) -> tuple:
    """(whether the sentence-transformers ``model`` renders a chat template, its image preparation): a chat model
    (Qwen3-VL) gets the preset's processing keywords; any other refuses a pixel budget and takes ``max_length``."""
    if "message" in getattr(module, "modality_config", {}):
        module.processing_kwargs, prepare_image = chat_inputs(module, settings, model_id)
        return True, prepare_image
    refuse_pixel_budget(settings, model_id)
    if settings.max_length:
        model.max_seq_length = settings.max_length
    return False, rgb


def chat_inputs(module, settings: Preset, model_id: str) -> tuple:
    """(processing keywords, image preparation) of a chat-template module. Text truncation is off: ``fitted`` cuts
    text, the processor would cut into image tokens. With a pixel budget, images are laid on white and resized as
    the Qwen3-VL authors resize them (``images.py``) and the processor is told not to resize; a budget needs
    Qwen-VL's image processor (patches merged 2x2), others resize to a size of their own. A preset that opens the
    assistant's turn (the authors' embedder renders with add_generation_prompt) has it opened whatever the
    checkpoint's own configuration says."""
    merged = {key: dict(value) for key, value in module.processing_kwargs.items()}
    merged.setdefault("text", {})["truncation"] = False
    if settings.add_generation_prompt:
        merged.setdefault("chat_template", {})["add_generation_prompt"] = True
    if not (settings.min_pixels or settings.max_pixels):
        return merged, rgb
    image_processor = getattr(module.processor, "image_processor", None)
    if not getattr(image_processor, "merge_size", None):
        raise ValueError(
            f"--min-pixels / --max-pixels: {model_id}'s image processor ({type(image_processor).__name__}) "
            "resizes to a size of its own; pixel budgets apply to Qwen-VL models. Leave both out."
        )
    size = image_processor.size
    budget = BudgetImages(settings.min_pixels or size["shortest_edge"], settings.max_pixels or size["longest_edge"])
    merged.setdefault("image", {})["do_resize"] = False
    return merged, budget


def image_identity(prepare_image, module) -> dict:
    """What decides the pixels a model sees, for the cache key and the run's metadata."""
    if isinstance(prepare_image, BudgetImages):
        return {"min_pixels": prepare_image.min_pixels, "max_pixels": prepare_image.max_pixels, "resize": RESIZE_RULE}
    if isinstance(prepare_image, SquareImages):
        return {"side": prepare_image.side, "resample": prepare_image.resample, "order": "resize, then RGB"}
    return module.processing_kwargs.get("image") if module is not None else "RGB"
