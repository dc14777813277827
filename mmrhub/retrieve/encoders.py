"""Encoders: image + text items -> one L2-normalised float32 vector each.

Two backends share one fusion rule for models that embed images and texts separately:
``v = normalize((1 - w) * normalize(image) + w * normalize(text))`` with ``w = text_weight``; an item without
text (an image-only M2KR query, an empty MIPR question) gets ``normalize(image)``. Models that take image and
text as one input (Qwen3-VL-Embedding through sentence-transformers) embed them together instead.

Every input is prepared in the DataLoader workers: the image decoded and prepared, the model's processor
(normalise, patchify) and tokeniser applied (``collate``). The main process receives ready tensors, moves them
(from pinned memory, without waiting, on CUDA) and runs the model (``encode``). Vectors leave ``encode`` in
float32, so similarities are computed in float32 whatever the model's dtype.
"""

import inspect

import torch
import torch.nn.functional as F

from mmrhub.records.provenance import model_identity
from mmrhub.retrieve.data_loading import CORPUS
from mmrhub.retrieve.data_loading import QUERIES
from mmrhub.retrieve.images import SquareImages
from mmrhub.retrieve.model_inputs import Compact
from mmrhub.retrieve.model_inputs import image_identity
from mmrhub.retrieve.model_inputs import prepare_inputs
from mmrhub.retrieve.model_inputs import refuse_pixel_budget
from mmrhub.retrieve.model_inputs import rgb
from mmrhub.retrieve.model_inputs import to_device
from mmrhub.retrieve.model_inputs import with_text
from mmrhub.retrieve.model_loading import build_model
from mmrhub.retrieve.presets import EXIF_APPLY
from mmrhub.retrieve.presets import Preset
from mmrhub.retrieve.presets import instruction
from mmrhub.retrieve.token_budget import fitted
from mmrhub.retrieve.token_budget import most_image_tokens
from mmrhub.retrieve.token_budget import surely_fits


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
    """Runs in DataLoader workers: prepares images (``prepare_image``) and applies the processor and tokeniser, so
    the device only computes."""

    def __init__(
        self, tokenizer, image_processor, max_length: int, padding, prompt=None, image_kwargs=None, prepare_image=rgb
    ):
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.max_length = max_length
        self.padding = padding
        self.prompt = prompt or ""
        self.image_kwargs = image_kwargs or {}
        self.prepare_image = prepare_image

    def __call__(self, rows):
        """A batch of ``Row``s as the processor's inputs."""
        ids = [row.id for row in rows]
        images = [self.prepare_image(row.id, row.image) for row in rows]
        texts = [self.prompt + row.text for row in rows if row.text is not None]
        batch = {
            "ids": ids,
            "pixel_values": self.image_processor(images=images, return_tensors="pt", **self.image_kwargs)[
                "pixel_values"
            ],
            "has_text": torch.tensor([row.text is not None for row in rows], dtype=torch.bool),
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
    row_instructions = False  # each role's instruction, never a row's own

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
        self.image_kwargs = _image_kwargs(settings)
        self.prepare_image = rgb
        if settings.square_resize:
            self.prepare_image = SquareImages(self.model.config.vision_config.image_size, settings.resample)
        self.orientation = settings.exif_orientation or EXIF_APPLY
        self.text_weight = text_weight
        self.settings = settings
        self._text_args = set(inspect.signature(self.model.get_text_features).parameters)
        self.identity = {
            "backend": self.backend,
            "model": model_identity(model_id, revision),
            "dtype": str(dtype),
            "max_length": self.max_length,
            "padding": self.padding,
            "image": {
                **{key: str(value) for key, value in self.image_kwargs.items()},
                "prepare": image_identity(self.prepare_image, None),
            },
            "exif_orientation": self.orientation,
            "text_weight": text_weight,
            "query_instruction": settings.query_instruction,
            "document_instruction": settings.document_instruction,
            "similarity": SIMILARITY,
        }

    def collate(self, role: str):
        """The DataLoader's collate for ``role``: the role's instruction prepended to its texts."""
        prompt = self.settings.query_instruction if role == QUERIES else self.settings.document_instruction
        return DualCollate(
            self.tokenizer,
            self.image_processor,
            self.max_length,
            self.padding,
            prompt,
            self.image_kwargs,
            self.prepare_image,
        )

    def reads_images(self, role: str) -> bool:
        """Whether ``role``'s images are read: every item's is."""
        return True

    def tokenizers(self) -> list:
        """The tokenisers its texts go through (for the unknown-token check)."""
        return [self.tokenizer]

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


def _image_kwargs(settings: Preset) -> dict:
    """The image processor's call keywords the preset asks for: with a square resize (done before the conversion to
    RGB, ``SquareImages``), neither resize nor centre crop by the processor."""
    if not settings.square_resize:
        return {}
    return {"do_resize": False, "do_center_crop": False}


def _model_max_length(tokenizer, config) -> int:
    limits = [getattr(tokenizer, "model_max_length", None)]
    limits.append(getattr(getattr(config, "text_config", config), "max_position_embeddings", None))
    limits = [limit for limit in limits if isinstance(limit, int) and 0 < limit < 1_000_000]
    return min(limits) if limits else 512


SIMILARITY = "float32: vectors upcast before normalising and before every dot product"


class Prepared:
    """The DataLoader's collate of a sentence-transformers encoder: runs in the workers, calling the encoder's
    ``prepare`` (images prepared, the model's own preprocessing); the workers are forked (``data.worker_context``),
    so the model is shared with them, never pickled."""

    def __init__(self, encoder, role: str):
        self.encoder, self.role = encoder, role

    def __call__(self, rows):
        """A batch of ``Row``s as ready model inputs."""
        return self.encoder.prepare(rows, self.role)


class SentenceTransformersEncoder:
    """``sentence-transformers`` backend: fused image + text input where the model takes it (Qwen3-VL-Embedding),
    else separate image and text vectors fused by the rule above. Queries are prepared and embedded as
    ``encode_query`` does (the model's query prompt, task "query"), corpus items as ``encode_document``; the
    preparation is done in the workers (``prepare``), the forward pass in the main process (``encode``)."""

    backend = "sentence-transformers"

    def __init__(self, model_id, settings: Preset, revision=None, device="cpu", dtype=torch.float32, text_weight=0.5):
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(model_id, revision=revision, device=str(device), model_kwargs={"dtype": dtype})
        self.model.eval()
        self.fused = self.model.supports(("image", "text"))
        if not self.fused and not (self.model.supports("image") and self.model.supports("text")):
            raise ValueError(
                f"{model_id} embeds {', '.join(map(str, self.model.modalities))} only; retrieval here needs images "
                "and texts."
            )
        self.module = self.model[0]
        # Chat-template models (Qwen3-VL): instructions in a system turn, text cut by us, never image tokens.
        self.chat, self.prepare_image = prepare_inputs(self.module, self.model, settings, model_id)
        self.settings = settings
        self.orientation = settings.exif_orientation or EXIF_APPLY
        self.tasks = {QUERIES: "query", CORPUS: "document"}
        self.prompts = {
            QUERIES: self._prompt(QUERIES, instruction(settings, settings.query_instruction)),
            CORPUS: self._prompt(CORPUS, instruction(settings, settings.document_instruction)),
        }
        # M2KR's queries: each row's own instruction in its system turn (the Qwen3-VL embedding preset)
        self.row_instructions = self.chat and settings.row_instructions
        self.compact = Compact.for_model(self.module, device, dtype) if self.chat else None
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
            "row_instructions": self.row_instructions,
            "chat_template": self.module.processing_kwargs.get("chat_template") if self.chat else None,
            "image": image_identity(self.prepare_image, self.module) if self.chat else None,
            "exif_orientation": self.orientation,
            "similarity": SIMILARITY,
        }

    def _prompt(self, role: str, given):
        """The prompt ``encode_query`` / ``encode_document`` would use: ``given``, else the model's own prompt for
        the role (sentence-transformers' order of names), else its default prompt."""
        if given is not None:
            return given
        names = ("query",) if role == QUERIES else ("document", "passage", "corpus")
        name = next((name for name in names if name in self.model.prompts), self.model.default_prompt_name)
        return self.model.prompts.get(name) if name is not None else None

    def row_prompt(self, row, role: str):
        """The prompt of one row: its own instruction (punctuated as the preset says) where the preset takes rows'
        instructions and the row has one, else the role's."""
        if self.row_instructions and role == QUERIES and row.instruction and row.instruction.strip():
            return instruction(self.settings, row.instruction)
        return self.prompts[role]

    def collate(self, role: str):
        """The DataLoader's collate: ``prepare``, run in the workers."""
        return Prepared(self, role)

    def reads_images(self, role: str) -> bool:
        """Whether ``role``'s images are read: every item's is."""
        return True

    def tokenizers(self) -> list:
        """The tokenisers its texts go through (for the unknown-token check)."""
        return [self.module.tokenizer] if getattr(self.module, "tokenizer", None) is not None else []

    def prepare(self, rows, role: str) -> dict:
        """A batch of ``Row``s as model inputs, as ``encode_query`` / ``encode_document`` would have built them from
        the same items: one part per call those make (fused models: items with text, then images alone; others:
        the images, then the texts), each in the length order sentence-transformers sorts its inputs by."""
        images = [self.prepare_image(row.id, row.image) for row in rows]
        texts = [row.text for row in rows]
        prompts = [self.row_prompt(row, role) for row in rows]
        with_text = [i for i, text in enumerate(texts) if text is not None]
        parts = []
        if self.fused:
            image_only = [i for i, text in enumerate(texts) if text is None]
            for group in (with_text, image_only):
                items = [{"image": images[i], "text": texts[i]} if texts[i] is not None else images[i] for i in group]
                if group:
                    parts.append(self._part("fused", group, items, [prompts[i] for i in group], role))
        else:
            parts.append(self._part("image", list(range(len(rows))), images, prompts, role))
            if with_text:
                parts.append(
                    self._part("text", with_text, [texts[i] for i in with_text], [prompts[i] for i in with_text], role)
                )
        return {
            "ids": [row.id for row in rows],
            "has_text": torch.tensor([text is not None for text in texts], dtype=torch.bool),
            "parts": parts,
        }

    def _part(self, kind: str, rows: list, items: list, prompts: list, role: str) -> dict:
        """One call's inputs: the items fitted to the token budget, sorted as sentence-transformers sorts them,
        preprocessed with their prompts; ``rows``: the batch positions of the features' rows, in their order."""
        if self.chat and self.settings.max_length:
            items = [self.fit(item, prompt) for item, prompt in zip(items, prompts)]
        order = self._length_order(items)
        items, prompts, rows = [items[i] for i in order], [prompts[i] for i in order], [rows[i] for i in order]
        task = self.tasks[role]
        if len(set(prompts)) != 1:  # rows with their own instructions: each row's conversation with its own system turn
            items, prompts = self._conversations(items, prompts), [None]
        if self.compact is not None:
            features = self.compact.preprocess(self.model, items, prompt=prompts[0], task=task)
        else:
            features = self.model.preprocess(items, prompt=prompts[0], task=task)
        return {"kind": kind, "rows": rows, "features": features}

    def _length_order(self, items: list) -> list:
        """The order sentence-transformers' encode puts a batch's inputs in: longest first (interleaved with the
        shortest where inputs are flattened for flash attention)."""
        import numpy as np

        order = np.argsort([-self.model._input_length(item) for item in items])
        if self.model._can_flatten_inputs():
            order = self.model._interleave_sorted_indices(order)
        return order.tolist()

    def _conversations(self, items: list, prompts: list) -> list:
        """Each item as the one-turn conversation sentence-transformers makes of it (image before text), its own
        prompt prepended as the system turn."""
        formatter = self.module.input_formatter
        conversations = []
        for item, prompt in zip(items, prompts):
            messages = formatter.to_message(dict(item) if isinstance(item, dict) else {"image": item})
            conversations.append(formatter.prepend_prompt_to_messages([messages], prompt)[0] if prompt else messages)
        return conversations

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
        """One prepared batch -> (n, d) normalised float32 vectors on the device: fused by the rule above, or
        embedded together."""
        parts = []
        for part in batch["parts"]:
            features = to_device(part["features"], self.model.device, self.compact)
            embeddings = self.model(features, task=self.tasks[role])["sentence_embedding"]
            if self.model.truncate_dim is not None:
                from sentence_transformers.util import truncate_embeddings

                embeddings = truncate_embeddings(embeddings, self.model.truncate_dim)
            parts.append((part["rows"], F.normalize(embeddings, p=2, dim=1).float()))
        if not self.fused:  # the images' vectors of every row, then the texts' of the rows with text, in batch order
            (_, image), *text = [(rows, vectors[torch.argsort(torch.tensor(rows))]) for rows, vectors in parts]
            text = text[0][1] if text else None
            return fuse(image, text, batch["has_text"].to(image.device), self.text_weight)
        first = parts[0][1]
        out = first.new_empty((len(batch["ids"]), first.shape[1]))
        for rows, vectors in parts:
            out[rows] = vectors
        return out


ENCODERS = {"transformers": DualEncoder, "sentence-transformers": SentenceTransformersEncoder}


def build_encoder(backend: str, model_id: str, settings: Preset, **options):
    """The ``backend``'s encoder of ``model_id`` (a local folder by its absolute path) with the run's
    ``settings``; ``options``: its keywords."""
    return build_model(ENCODERS[backend], model_id, settings, **options)
