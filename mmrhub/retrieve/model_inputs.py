"""What the embedder (``encoders.py``) and the reranker (``rerank/model.py``) hand their models alike: images in RGB
(or under a Qwen3-VL pixel budget), a chat-template model's processing keywords, an image + text input, the
pixel values the workers send compacted and the main process moves to the device, and what decides the pixels a
model sees (for the cache key and the run's metadata).
"""

import torch

from mmrhub.retrieve.images import RESIZE_RULE
from mmrhub.retrieve.images import BudgetImages
from mmrhub.retrieve.images import SquareImages
from mmrhub.retrieve.images import as_rgb
from mmrhub.retrieve.images import present
from mmrhub.retrieve.presets import Preset

FRAMES_KEY = "mmrhub_pixel_frames"  # (frames, values of one frame a patch): pixel values sent with one frame


def rgb(row_id, image):
    """The item's image in RGB (``images.as_rgb``); an error naming the item when it has none."""
    return as_rgb(present(row_id, image))


def refuse_pixel_budget(settings: Preset, model_id: str) -> None:
    """--min-pixels / --max-pixels are refused, not ignored, for a model without a chat template: they apply to
    Qwen3-VL's (``chat_inputs``)."""
    if settings.min_pixels or settings.max_pixels:
        raise ValueError(
            f"--min-pixels / --max-pixels: {model_id} takes no chat template; they apply to Qwen3-VL models."
        )


def to_device(features: dict, device, compact=None) -> dict:
    """A collated batch's tensors on ``device``, copied without waiting (from pinned memory on CUDA); other values
    as they are. Pixel values ``compact`` sent as one frame's bytes (``Compact``) are normalised there by the
    processor's own arithmetic and cast to the model's dtype; one frame of two gets its second frame back."""
    moved = {
        key: value.to(device, non_blocking=True) if isinstance(value, torch.Tensor) else value
        for key, value in features.items()
    }
    frames = moved.pop(FRAMES_KEY, None)
    if frames:
        pixels = moved["pixel_values"]
        if not pixels.is_floating_point():
            if compact is None:
                raise ValueError("pixel values sent as bytes need the Compact that sent them to be normalised")
            pixels = compact.normalized(pixels)
        channels = pixels.shape[1] // frames[1]
        moved["pixel_values"] = (
            pixels.view(len(pixels), channels, 1, -1).expand(-1, -1, frames[0], -1).reshape(len(pixels), -1)
        )
    return moved


class Compact:
    """What the workers send of a Qwen-VL processor's pixel values on CUDA, for the main process's one copy of each
    batch (into pinned memory) to be small: its main cost per item. The processor repeats an image into the two
    frames of a temporal patch (``temporal_patch_size``), so a patch's 1,536 values are 768 twice: one frame is
    sent, and ``to_device`` repeats it on the device. The model gets the same numbers in its own dtype, the cast
    its vision tower makes first (Qwen3-VL's patch embedding). Off (None) on CPU, where there is no copy to save.

    Where the input module takes per-call processor keywords, the processor is asked for one frame
    (``temporal_patch_size`` 1, whose patch layout is the first frame of the usual one) and, where it resizes
    nothing (the presets' pixel budgets: the image is resized before, ``images.py``), for the image's own bytes,
    neither rescaled nor normalised: a quarter of the float32 values' bytes, and half of bfloat16's. ``to_device``
    then normalises them on the device with the processor's own ``rescale_and_normalize`` (elementwise float32
    arithmetic, rounded alike on every device) and casts them. Else the two frames are made, compared, and the
    first sent, cast in the worker, where they are equal (both where not)."""

    def __init__(self, dtype, temporal: int, frame_size: int = 0, image_processor=None):
        self.dtype, self.temporal = dtype, temporal
        # One frame's values (3 x patch x patch), where the processor can be asked for one frame.
        self.frame_size = frame_size if temporal > 1 else 0
        self.image_processor = image_processor if self.frame_size else None
        self.processing_kwargs = None
        if self.frame_size:
            self.processing_kwargs = {"image": {"temporal_patch_size": 1}}
            if self.image_processor is not None:
                self.processing_kwargs["image"].update(do_rescale=False, do_normalize=False)

    @classmethod
    def for_model(cls, module, device, dtype):
        """The compaction a chat model on ``device`` in ``dtype`` takes, or None."""
        image_processor = getattr(getattr(module, "processor", None), "image_processor", None)
        temporal = getattr(image_processor, "temporal_patch_size", 0)
        if torch.device(device).type != "cuda" or not temporal:
            return None
        patch = getattr(image_processor, "patch_size", 0)
        frame_size = 3 * patch * patch if patch and takes_kwargs(module) else 0
        raw = image_processor if sends_bytes(module, image_processor) else None
        return cls(dtype if dtype in (torch.bfloat16, torch.float16) else None, int(temporal), frame_size, raw)

    def preprocess(self, model, inputs, **kwargs):
        """``model.preprocess(inputs, **kwargs)`` (a sentence-transformers model), asking the processor for one
        frame (of bytes) where it can, compacted."""
        if self.processing_kwargs:
            kwargs["processing_kwargs"] = self.processing_kwargs
        return self(model.preprocess(inputs, **kwargs))

    def __call__(self, features):
        """``features`` with their pixel values compacted (in place)."""
        pixels = features.get("pixel_values")
        if not isinstance(pixels, torch.Tensor) or pixels.ndim != 2:
            return features
        if self.frame_size and pixels.shape[1] == self.frame_size:  # the processor made one frame, as asked
            features[FRAMES_KEY] = (self.temporal, pixels.shape[1] // 3)
            if not pixels.is_floating_point():  # the image's bytes: normalised and cast on the device
                return features
        elif not pixels.is_floating_point():
            return features
        elif self.temporal > 1 and pixels.shape[1] % self.temporal == 0:
            frames = pixels.view(len(pixels), 3, self.temporal, -1)
            if all(torch.equal(frames[:, :, 0], frames[:, :, t]) for t in range(1, self.temporal)):
                pixels = frames[:, :, 0].reshape(len(pixels), -1)
                features[FRAMES_KEY] = (self.temporal, pixels.shape[1] // 3)
        features["pixel_values"] = pixels.to(self.dtype) if self.dtype is not None else pixels.contiguous()
        return features

    def normalized(self, pixels):
        """One frame's bytes (n, 3 x patch x patch), on the device: the processor's float32 values, in the model's
        dtype."""
        processor = self.image_processor
        values = processor.rescale_and_normalize(
            pixels.view(len(pixels), 3, 1, -1),
            processor.do_rescale,
            processor.rescale_factor,
            processor.do_normalize,
            processor.image_mean,
            processor.image_std,
        ).reshape(len(pixels), -1)
        return values.to(self.dtype) if self.dtype is not None else values


def sends_bytes(module, image_processor) -> bool:
    """Whether the workers may send the image's bytes: the processor resizes nothing (told so by the presets'
    pixel budgets) and is told nothing else about its images, and normalises with torch (transformers'
    torchvision backend), so that the same arithmetic can run on the device."""
    told = dict(getattr(module, "processing_kwargs", {}).get("image") or {})
    if told.pop("do_resize", True) is not False or told:
        return False
    backend = [klass.__name__ for klass in type(image_processor).__mro__]
    return "TorchvisionBackend" in backend and callable(getattr(image_processor, "rescale_and_normalize", None))


def takes_kwargs(module) -> bool:
    """Whether the input module's ``preprocess`` takes per-call ``processing_kwargs`` (sentence-transformers
    6.1 and later)."""
    import inspect

    preprocess = getattr(module, "preprocess", None)
    return preprocess is not None and "processing_kwargs" in inspect.signature(preprocess).parameters


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
