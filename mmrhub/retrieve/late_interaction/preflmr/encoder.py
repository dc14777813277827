"""PreFLMR as the pipeline's encoder (the protocol of ``mmrhub/retrieve/encoders.py``): ``collate(role)`` is what the
DataLoader workers run (texts built and tokenised, masks computed, images through the CLIP image processor: ready
tensors), ``encode(batch, role)`` runs the model in the main process and returns token vectors with their kept-mask:
queries ((B, Tq, dim) float32, (B, Tq) bool), passages ((B, Tp, dim) float32, (B, Tp) bool, Tp the batch's longest).
Vectors are unit length and zero where the mask is False. The search (``maxsim.py``) keeps the kept tokens and casts
passages to half on a GPU as the authors do (modeling_flmr.py:1338-1339).
"""

import os

import torch

from mmrhub.records.provenance import model_identity
from mmrhub.retrieve.data_loading import QUERIES
from mmrhub.retrieve.late_interaction.maxsim import passage_dtype
from mmrhub.retrieve.late_interaction.preflmr import inputs
from mmrhub.retrieve.late_interaction.preflmr.batches import TokenBatch
from mmrhub.retrieve.late_interaction.preflmr.checkpoint import check_image_processor
from mmrhub.retrieve.late_interaction.preflmr.checkpoint import checkpoint_folder
from mmrhub.retrieve.late_interaction.preflmr.checkpoint import load_tokenizers
from mmrhub.retrieve.late_interaction.preflmr.checkpoint import load_weights
from mmrhub.retrieve.late_interaction.preflmr.config import read_config
from mmrhub.retrieve.late_interaction.preflmr.model import PreFLMRModel
from mmrhub.retrieve.model_loading import check_reachable
from mmrhub.retrieve.presets import EXIF_IGNORE

PASSAGE_PADDING = "the batch's longest (the authors pad to doc_maxlen; kept tokens' vectors are the same)"


class QueryCollate:
    """Runs in the workers: each row's query text, tokens, kept-mask and pixel values."""

    def __init__(self, tokenizer, image_processor, maxlen: int, instruction_token, skip_ids, with_image: bool):
        self.tokenizer, self.image_processor = tokenizer, image_processor
        self.maxlen, self.instruction_token, self.skip_ids = maxlen, instruction_token, tuple(skip_ids)
        self.instruction_id = inputs.instruction_id(tokenizer, instruction_token)
        self.with_image = with_image

    def __call__(self, rows) -> dict:
        """A batch of ``Row``s as the query encoder's inputs."""
        texts = [inputs.query_text(row.instruction, row.text, self.instruction_token) for row in rows]
        ids, attention = inputs.query_tokens(self.tokenizer, texts, self.maxlen)
        batch = {
            "ids": [row.id for row in rows],
            "input_ids": ids,
            "attention_mask": attention,
            "token_mask": inputs.query_mask(ids, self.instruction_id, self.skip_ids),
            "pixel_values": None,
        }
        if self.with_image:
            images = [inputs.query_image(row.image) for row in rows]
            batch["pixel_values"] = self.image_processor(images=images, return_tensors="pt")["pixel_values"]
        return batch


class PassageCollate:
    """Runs in the workers: each passage's tokens, packed (``batches.TokenBatch``; passages are text only). The
    kept-mask is computed from the ids where the model runs (``encode``)."""

    def __init__(self, tokenizer, maxlen: int):
        self.tokenizer, self.maxlen = tokenizer, maxlen

    def __call__(self, rows) -> dict:
        """A batch of ``Row``s as the passage encoder's inputs."""
        ids, attention = inputs.passage_tokens(self.tokenizer, [row.text or "" for row in rows], self.maxlen)
        return {"ids": [row.id for row in rows], "tokens": TokenBatch(ids, attention)}


class PreFLMREncoder:
    """PreFLMR as the retrieval pipeline runs it: a checkpoint (a folder or a Hub id) with its tokenizers and CLIP
    image processor, under the run's settings, with what the pipeline and the token cache ask of it (its identity,
    how its images are oriented, the passages' dtype)."""

    backend = "preflmr"

    def __init__(self, model_id: str, settings, revision=None, device="cpu", dtype=torch.float32, text_weight=None):
        """``settings``: the run's (the ``preflmr`` preset's, with overrides); ``text_weight``: unused, the model
        fuses image and text itself."""
        refuse_unused(settings)
        self.settings = settings
        self.device, self.dtype = torch.device(device), dtype
        self.row_instructions = settings.row_instructions  # each query's own instruction starts its text
        # the authors open image files with PIL alone (example_use_preflmr.py:291), as the preset says
        self.orientation = settings.exif_orientation or EXIF_IGNORE
        self.passage_dtype = passage_dtype(self.device)
        folder = checkpoint_folder(model_id, revision)
        own = self.load(folder, settings.image_processor)
        self.identity = {
            "backend": self.backend,
            "model": model_identity(str(folder) if os.path.isdir(model_id) else model_id, revision),
            "dtype": str(dtype),
            "image_processor": model_identity(self.image_processor_name) if self.image_processor_name else None,
            **own,
            "passage_dtype": str(self.passage_dtype),
            "exif_orientation": self.orientation,
            "row_instructions": self.row_instructions,
            "similarity": "float32 unit token vectors; MaxSim summed over the query's kept tokens",
        }

    def load(self, folder, image_processor) -> dict:
        """Read the checkpoint in ``folder`` and the image processor (the config's ``vision_model_version`` unless
        one is given); returns what of them the identity records besides their names."""
        self.config = read_config(folder)
        self.query_tokenizer, self.context_tokenizer = load_tokenizers(folder, self.config.text["vocab_size"])
        self.image_processor_name = image_processor or self.config.vision_model_version
        if not image_processor:  # the config's: checked here, as --image-processor is before the model loads
            check_reachable(self.image_processor_name, "--image-processor (the config's vision_model_version)")
        self.image_processor = load_image_processor(self.image_processor_name)
        check_image_processor(self.image_processor, self.image_processor_name, self.config)
        from transformers.initialization import no_init_weights

        # every tensor is loaded (load_weights names any it cannot find), so none is drawn at random first: building
        # the model with random draws takes far longer than loading it
        with torch.device(self.device), no_init_weights():
            model = PreFLMRModel(self.config)
        load_weights(model, folder)
        self.model = model.to(self.dtype).eval()
        self.passage_skip_ids = inputs.punctuation_ids(self.context_tokenizer) if self.config.mask_punctuation else []
        return {"config": self.config.describe(), "passage_padding": PASSAGE_PADDING}

    def collate(self, role: str):
        """The DataLoader's collate for ``role`` (picklable: tokenisers, processor and plain settings)."""
        if role == QUERIES:
            return QueryCollate(
                self.query_tokenizer,
                self.image_processor,
                self.config.query_maxlen,
                self.config.mask_instruction_token,
                self.config.query_skip_ids,
                self.config.query_vision,
            )
        return PassageCollate(self.context_tokenizer, self.config.doc_maxlen)

    def reads_images(self, role: str) -> bool:
        """Whether ``role``'s images are read: queries' where the config concatenates image tokens; passages are
        text (``passage_content``, example_use_preflmr.py:226)."""
        return role == QUERIES and self.config.query_vision

    def tokenizers(self) -> list:
        """The tokenisers its texts go through (for the unknown-token check)."""
        return [self.query_tokenizer, self.context_tokenizer]

    @torch.inference_mode()
    def encode(self, batch, role: str) -> tuple:
        """One collated batch -> (token vectors (n, tokens, dim), kept-mask (n, tokens) bool) on the device."""
        if role != QUERIES:
            ids, attention = batch["tokens"].to(self.device)
            return self.model.passages(ids, attention, inputs.passage_mask(ids, self.passage_skip_ids))
        ids = batch["input_ids"].to(self.device, non_blocking=True)
        attention = batch["attention_mask"].to(self.device, non_blocking=True)
        mask = batch["token_mask"].to(self.device, non_blocking=True)
        pixels = batch["pixel_values"]
        if pixels is not None:
            pixels = pixels.to(self.device, self.dtype, non_blocking=True)
        return self.model.query(ids, attention, mask, pixels)


# Settings PreFLMR takes from its checkpoint and the authors' code, never from the command line.
UNUSED = {
    "query_instruction": "--query-instruction (each query's own instruction is part of its text)",
    "document_instruction": "--document-instruction",
    "min_pixels": "--min-pixels (the CLIP image processor sizes images)",
    "max_pixels": "--max-pixels (the CLIP image processor sizes images)",
    "max_length": "--max-length (query_maxlen and doc_maxlen come with the checkpoint)",
}


def refuse_unused(settings) -> None:
    """An override PreFLMR would silently ignore is refused, naming the option."""
    for name, option in UNUSED.items():
        if getattr(settings, name) is not None:
            raise ValueError(f"{option}: not a PreFLMR setting; leave it out.")
    if not settings.row_instructions:
        raise ValueError(
            "--default-instruction: PreFLMR's queries begin with their own instruction (as its authors' code "
            "makes them); leave it out."
        )


def load_image_processor(name_or_folder: str):
    """The CLIP image processor the authors' example loads (``AutoImageProcessor``, example_use_preflmr.py:250),
    as transformers' PIL implementation: the one transformers 4.49 gave them, whose resizing the torchvision one
    does not repeat exactly."""
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    return CLIPImageProcessorPil.from_pretrained(name_or_folder)


def build_preflmr_encoder(model_id: str, image_processor=None, device="cpu", dtype=torch.float32, revision=None):
    """PreFLMR's encoder under its preset's settings (``--preset preflmr``), as a script or a test loads it."""
    from mmrhub.retrieve.presets import resolve

    settings = resolve(model_id, "preflmr", "embedding", image_processor=image_processor)
    return PreFLMREncoder(model_id, settings, revision=revision, device=device, dtype=dtype)
