"""Encoders: image + text items -> one L2-normalised float32 vector each.

Two backends share one fusion rule for models that embed images and texts separately:
``v = normalize((1 - w) * normalize(image) + w * normalize(text))`` with ``w = text_weight``; an item without
text (an image-only M2KR query, an empty MIPR question) gets ``normalize(image)``. Models that take image and
text as one input (Qwen3-VL-Embedding through sentence-transformers) embed them together instead.
"""

import inspect
import os

import torch
import torch.nn.functional as F

from mmrhub.retrieve.fitting import fitted
from mmrhub.retrieve.fitting import most_image_tokens
from mmrhub.retrieve.fitting import surely_fits
from mmrhub.retrieve.images import RESIZE_RULE
from mmrhub.retrieve.images import BudgetImages
from mmrhub.retrieve.images import present
from mmrhub.retrieve.presets import Preset
from mmrhub.retrieve.presets import instruction
from mmrhub.retrieve.provenance import model_identity

QUERIES = "queries"
CORPUS = "corpus"


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


def fuse(image, text, has_text, weight: float):
    """The fusion rule above: ``image`` (n, d) and ``text`` (rows with text only, in order) -> (n, d)."""
    image = F.normalize(image.float(), dim=-1)
    if text is None or not len(text):
        return image
    text = F.normalize(text.float(), dim=-1)
    fused = image.clone()
    fused[has_text] = F.normalize((1 - weight) * image[has_text] + weight * text, dim=-1)
    return fused


def pooled(output):
    """transformers 5 returns a ModelOutput from get_*_features (projection in pooler_output), 4.x a tensor."""
    return output.pooler_output if hasattr(output, "pooler_output") else output


class DualCollate:
    """Runs in DataLoader workers: decodes images and applies the processor, so the device only computes."""

    def __init__(self, tokenizer, image_processor, max_length: int, padding, prompt=None, image_kwargs=None):
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.max_length = max_length
        self.padding = padding
        self.prompt = prompt or ""
        self.image_kwargs = image_kwargs or {}

    def __call__(self, rows):
        """A batch of rows as the processor's inputs."""
        ids = [row_id for row_id, _, _ in rows]
        images = [rgb(row_id, image) for row_id, _, image in rows]
        texts = [self.prompt + text for _, text, _ in rows if text is not None]
        batch = {
            "ids": ids,
            "pixel_values": self.image_processor(images=images, return_tensors="pt", **self.image_kwargs)[
                "pixel_values"
            ],
            "has_text": torch.tensor([text is not None for _, text, _ in rows], dtype=torch.bool),
            "text": None,
        }
        if texts:
            batch["text"] = dict(
                self.tokenizer(
                    texts, padding=self.padding, truncation=True, max_length=self.max_length, return_tensors="pt"
                )
            )
        return batch


class DualEncoder:
    """``transformers`` backend: CLIP-style dual encoders (CLIP, Chinese-CLIP, SigLIP) with get_*_features."""

    backend = "transformers"

    def __init__(self, model_id, settings: Preset, revision=None, device="cpu", dtype=torch.float32, text_weight=0.5):
        from transformers import AutoModel
        from transformers import AutoProcessor

        refuse_pixel_budget(settings, model_id)
        self.model = AutoModel.from_pretrained(model_id, revision=revision, dtype=dtype).to(device).eval()
        if not (hasattr(self.model, "get_image_features") and hasattr(self.model, "get_text_features")):
            raise ValueError(
                f"--backend transformers needs a dual encoder with get_image_features and get_text_features "
                f"(CLIP, Chinese-CLIP, SigLIP); {model_id} is a {type(self.model).__name__}. "
                "Use --backend sentence-transformers for other models."
            )
        processor = AutoProcessor.from_pretrained(model_id, revision=revision)
        self.tokenizer = processor.tokenizer
        self.image_processor = processor.image_processor
        self.device = torch.device(device)
        self.dtype = dtype
        model_type = self.model.config.model_type
        self.max_length = settings.max_length or _model_max_length(self.tokenizer, self.model.config)
        # SigLIP was trained on texts padded to max_length; its pooled vector changes with the padding.
        self.padding = "max_length" if model_type == "siglip" or settings.pad_to_max_length else True
        self.image_kwargs = _image_kwargs(settings, self.model.config)
        self.text_weight = text_weight
        self.settings = settings
        self._text_args = set(inspect.signature(self.model.get_text_features).parameters)
        self.identity = {
            "backend": self.backend,
            "model": model_identity(model_id, revision),
            "dtype": str(dtype),
            "max_length": self.max_length,
            "padding": self.padding,
            "image": {key: str(value) for key, value in self.image_kwargs.items()},
            "text_weight": text_weight,
            "query_instruction": settings.query_instruction,
            "document_instruction": settings.document_instruction,
        }

    def collate(self, role: str):
        """The DataLoader's collate for ``role``: the role's instruction prepended to its texts."""
        prompt = self.settings.query_instruction if role == QUERIES else self.settings.document_instruction
        return DualCollate(
            self.tokenizer, self.image_processor, self.max_length, self.padding, prompt, self.image_kwargs
        )

    @torch.inference_mode()
    def encode(self, batch, role: str) -> torch.Tensor:
        """One collated batch -> (n, d) fused, normalised vectors on the device."""
        pixels = batch["pixel_values"].to(self.device, self.dtype, non_blocking=True)
        image = pooled(self.model.get_image_features(pixel_values=pixels))
        text = None
        if batch["text"] is not None:
            inputs = {k: v.to(self.device, non_blocking=True) for k, v in batch["text"].items() if k in self._text_args}
            text = pooled(self.model.get_text_features(**inputs))
        return fuse(image, text, batch["has_text"].to(self.device), self.text_weight)


def _image_kwargs(settings: Preset, config) -> dict:
    """The image processor's call keywords the preset asks for: a square resize to the vision tower's input
    (no centre crop), with the preset's filter."""
    if not settings.square_resize:
        return {}
    from PIL import Image

    side = config.vision_config.image_size
    return {
        "size": {"height": side, "width": side},
        "do_center_crop": False,
        "resample": Image.Resampling[settings.resample.upper()],
    }


def _model_max_length(tokenizer, config) -> int:
    limits = [getattr(tokenizer, "model_max_length", None)]
    limits.append(getattr(getattr(config, "text_config", config), "max_position_embeddings", None))
    limits = [limit for limit in limits if isinstance(limit, int) and 0 < limit < 1_000_000]
    return min(limits) if limits else 512


class PlainCollate:
    """Runs in DataLoader workers: decodes and prepares images (``rgb`` or a ``BudgetImages``); the model's own
    preprocessing follows."""

    def __init__(self, prepare_image):
        self.prepare_image = prepare_image

    def __call__(self, rows):
        """A batch of rows as ids, texts and decoded images."""
        return {
            "ids": [row_id for row_id, _, _ in rows],
            "texts": [text for _, text, _ in rows],
            "images": [self.prepare_image(row_id, image) for row_id, _, image in rows],
        }


class SentenceTransformersEncoder:
    """``sentence-transformers`` backend: fused image + text input where the model takes it (Qwen3-VL-Embedding),
    else separate image and text vectors fused by the rule above. Queries go through ``encode_query`` (the
    model's query prompt), corpus items through ``encode_document``."""

    backend = "sentence-transformers"

    def __init__(self, model_id, settings: Preset, revision=None, device="cpu", dtype=torch.float32, text_weight=0.5):
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(model_id, revision=revision, device=str(device), model_kwargs={"dtype": dtype})
        self.fused = self.model.supports(("image", "text"))
        if not self.fused and not (self.model.supports("image") and self.model.supports("text")):
            raise ValueError(
                f"{model_id} embeds {', '.join(map(str, self.model.modalities))} only; retrieval here needs images "
                "and texts."
            )
        self.module = self.model[0]
        # Chat-template models (Qwen3-VL): instructions in a system turn, text cut by us, never image tokens.
        self.chat = "message" in getattr(self.module, "modality_config", {})
        self.prepare_image = rgb
        if self.chat:
            self.module.processing_kwargs, self.prepare_image = chat_inputs(self.module, settings, model_id)
        else:
            refuse_pixel_budget(settings, model_id)
            if settings.max_length:
                self.model.max_seq_length = settings.max_length
        self.settings = settings
        self.prompts = {
            QUERIES: instruction(settings, settings.query_instruction),
            CORPUS: instruction(settings, settings.document_instruction),
        }
        self.text_weight = text_weight
        self.identity = {
            "backend": self.backend,
            "model": model_identity(model_id, revision),
            "dtype": str(dtype),
            "max_length": settings.max_length if self.chat else self.model.max_seq_length,
            "fused": self.fused,
            "text_weight": None if self.fused else text_weight,
            "query_prompt": self.prompts[QUERIES],
            "document_prompt": self.prompts[CORPUS],
            "image": image_identity(self.prepare_image, self.module) if self.chat else None,
        }

    def collate(self, role: str):
        """The DataLoader's collate: images only prepared; the model preprocesses in ``encode``."""
        return PlainCollate(self.prepare_image)

    def _encode(self, inputs, role: str) -> torch.Tensor:
        encode = self.model.encode_query if role == QUERIES else self.model.encode_document
        prompt = self.prompts[role]
        kwargs = {"prompt": prompt} if prompt is not None else {}
        if self.chat and self.settings.max_length:
            inputs = [self.fit(item, prompt) for item in inputs]
        vectors = encode(
            inputs,
            batch_size=len(inputs),
            convert_to_tensor=True,
            normalize_embeddings=True,
            show_progress_bar=False,
            **kwargs,
        )
        return vectors.float()

    def fit(self, item, prompt):
        """An input whose rendered conversation fits the token budget: its text cut, its image kept."""
        if not isinstance(item, dict):
            return item

        tokenizer, limit = self.module.tokenizer, self.settings.max_length
        if surely_fits(
            tokenizer,
            [item["text"], prompt],
            most_image_tokens(self.module.processor, 1, self.settings.max_pixels),
            limit,
        ):
            return item

        def length_of(texts):
            return self.module.preprocess([with_text(item, texts[0])], prompt=prompt)["input_ids"].shape[1]

        (text,) = fitted(length_of, [item["text"]], self.module.tokenizer, self.settings.max_length, "an input")
        return with_text(item, text)

    @torch.inference_mode()
    def encode(self, batch, role: str) -> torch.Tensor:
        """One collated batch -> (n, d) normalised vectors: fused by the rule above, or embedded together."""
        texts, images = batch["texts"], batch["images"]
        has_text = torch.tensor([text is not None for text in texts], dtype=torch.bool)
        with_text = [i for i, text in enumerate(texts) if text is not None]
        if not self.fused:
            text = self._encode([texts[i] for i in with_text], role) if with_text else None
            return fuse(self._encode(images, role), text, has_text.to(self.model.device), self.text_weight)
        # One call per input shape: a batch mixing dicts and bare images is not one modality.
        image_only = [i for i, text in enumerate(texts) if text is None]
        parts = {}
        if with_text:
            parts[tuple(with_text)] = self._encode([{"image": images[i], "text": texts[i]} for i in with_text], role)
        if image_only:
            parts[tuple(image_only)] = self._encode([images[i] for i in image_only], role)
        first = next(iter(parts.values()))
        out = first.new_empty((len(texts), first.shape[1]))
        for rows, vectors in parts.items():
            out[list(rows)] = vectors
        return out


def with_text(item: dict, text):
    """An image + text input with ``text`` (the image alone when it is None)."""
    return {**item, "text": text} if text else item["image"]


def chat_inputs(module, settings: Preset, model_id: str) -> tuple:
    """(processing keywords, image preparation) of a chat-template module. Text truncation is off: ``fitted`` cuts
    text, the processor would cut into image tokens. With a pixel budget, images are laid on white and resized as
    the Qwen3-VL authors resize them (``images.py``) and the processor is told not to resize; a budget needs
    Qwen-VL's image processor (patches merged 2x2), others resize to a size of their own."""
    merged = {key: dict(value) for key, value in module.processing_kwargs.items()}
    merged.setdefault("text", {})["truncation"] = False
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
    """What decides the pixels a chat-template model sees, for the cache key and the run's metadata."""
    if isinstance(prepare_image, BudgetImages):
        return {"min_pixels": prepare_image.min_pixels, "max_pixels": prepare_image.max_pixels, "resize": RESIZE_RULE}
    return module.processing_kwargs.get("image")


ENCODERS = {"transformers": DualEncoder, "sentence-transformers": SentenceTransformersEncoder}


def build_encoder(backend: str, model_id: str, settings: Preset, **options):
    """The ``backend``'s encoder of ``model_id`` (a local folder by its absolute path) with the run's
    ``settings``; ``options``: its keywords."""
    if os.path.isdir(model_id):
        model_id = os.path.abspath(model_id)
    return ENCODERS[backend](model_id, settings, **options)
