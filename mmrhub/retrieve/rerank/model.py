"""A multimodal cross-encoder (sentence-transformers ``CrossEncoder``) scoring (query, candidate) pairs.

Inputs are what ``mmrhub retrieve`` embeds: the query image with its question (the image alone when the
question is empty), the candidate's image with its text (product image + title, screenshot + passage).
Generative rerankers (Qwen3-VL-Reranker) load through ``CrossEncoder`` as a multimodal LM whose score is the
logit of "yes" against "no".
"""

import os

import torch

from mmrhub.retrieve.data import Items
from mmrhub.retrieve.encoders import chat_inputs
from mmrhub.retrieve.encoders import image_identity
from mmrhub.retrieve.encoders import refuse_pixel_budget
from mmrhub.retrieve.encoders import rgb
from mmrhub.retrieve.encoders import with_text
from mmrhub.retrieve.fitting import fitted
from mmrhub.retrieve.fitting import most_image_tokens
from mmrhub.retrieve.fitting import surely_fits
from mmrhub.retrieve.loading import load_cross_encoder
from mmrhub.retrieve.presets import Preset
from mmrhub.retrieve.provenance import model_identity


class PairItems(torch.utils.data.Dataset):
    """Pair i -> ((query id, text, image), (candidate id, text, image)); images decoded where fetched (workers)."""

    def __init__(self, queries: Items, corpus: Items, pairs: list):
        self.queries, self.corpus, self.pairs = queries, corpus, pairs

    def __len__(self):
        return len(self.pairs)

    def __getitems__(self, indices):
        pairs = [self.pairs[i] for i in indices]
        # A batch holds a few queries many times over: decode each image once.
        query_rows = sorted({q for q, _ in pairs})
        corpus_rows = sorted({c for _, c in pairs})
        queries = dict(zip(query_rows, self.queries.__getitems__(query_rows)))
        corpus = dict(zip(corpus_rows, self.corpus.__getitems__(corpus_rows)))
        return [(queries[q], corpus[c]) for q, c in pairs]


def model_input(row, prepare_image):
    """An (id, text, image) row as the CrossEncoder takes it: image + text, or the image alone."""
    row_id, text, image = row
    image = prepare_image(row_id, image)
    return {"image": image, "text": text} if text else image


class PairCollate:
    """Runs in DataLoader workers: images converted and the model's processor applied (resizing, patching,
    chat template, tokenizing), so the main process only moves tensors and runs the model."""

    def __init__(self, model, prompt, prepare_image, max_length=None, max_pixels=None):
        self.model, self.prompt, self.max_length, self.max_pixels = model, prompt, max_length, max_pixels
        self.prepare_image = prepare_image

    def __call__(self, rows):
        """A batch of (query, candidate) pairs as the model's inputs."""
        pairs = [(model_input(query, self.prepare_image), model_input(c, self.prepare_image)) for query, c in rows]
        if self.max_length:
            pairs = [self.fit(pair) for pair in pairs]
        return self.model.preprocess(pairs, prompt=self.prompt)

    def fit(self, pair):
        """A pair whose rendered conversation fits the token budget: the candidate's text cut first, then the
        query's; images kept."""
        texts = [item["text"] if isinstance(item, dict) else None for item in pair]
        module = self.model[0]
        images = most_image_tokens(module.processor, len(pair), self.max_pixels)
        if surely_fits(module.tokenizer, [*texts, self.prompt], images, self.max_length):
            return pair

        def rebuilt(texts):
            return tuple(with_text(item, text) if isinstance(item, dict) else item for item, text in zip(pair, texts))

        def length_of(texts):
            return self.model.preprocess([rebuilt(texts)], prompt=self.prompt)["input_ids"].shape[1]

        return rebuilt(fitted(length_of, texts, self.model[0].tokenizer, self.max_length, "a (query, candidate) pair"))


class Reranker:
    """A sentence-transformers CrossEncoder on image + text pairs, with the identity its cached scores are keyed by."""

    def __init__(self, model_id, settings: Preset, revision=None, device="cpu", dtype=torch.float32):
        if os.path.isdir(model_id):
            model_id = os.path.abspath(model_id)
        self.model = load_cross_encoder(model_id, revision, device, dtype)
        if not self.model.supports(("image", "text")) and not self.model.supports("message"):
            raise ValueError(
                f"--model {model_id}: this CrossEncoder takes {', '.join(map(str, self.model.modalities))} only; "
                "reranking here needs image + text inputs (e.g. Qwen/Qwen3-VL-Reranker-2B)."
            )
        module = self.model[0]
        self.chat = "message" in getattr(module, "modality_config", {})
        self.prepare_image = rgb
        if self.chat:
            module.processing_kwargs, self.prepare_image = chat_inputs(module, settings, model_id)
        else:
            refuse_pixel_budget(settings, model_id)
            if settings.max_length:
                self.model.max_seq_length = settings.max_length
        self.settings = settings
        self.prompt = settings.query_instruction
        self.identity = {
            "backend": "sentence-transformers CrossEncoder",
            "model": model_identity(model_id, revision),
            "dtype": str(dtype),
            "max_length": settings.max_length if self.chat else self.model.max_seq_length,
            "prompt": self.prompt,
            "image": image_identity(self.prepare_image, module) if self.chat else None,
            "activation": type(self.model.activation_fn).__name__,
        }

    def collate(self):
        """The DataLoader's collate: the model's preprocessing, run in the workers."""
        # The prompt predict() would use: ours, else the model's default one.
        prompt = self.model._resolve_prompt(self.prompt, None)
        max_length = self.settings.max_length if self.chat else None
        return PairCollate(self.model, prompt, self.prepare_image, max_length, self.settings.max_pixels)

    @torch.inference_mode()
    def score(self, features) -> torch.Tensor:
        """One forward pass over a collated batch: float32 scores on CPU, in batch order. What
        ``CrossEncoder.predict`` does after preprocessing: upcast, then the model's activation."""
        from sentence_transformers.util import batch_to_device

        self.model.eval()
        scores = self.model(batch_to_device(features, self.model.device))["scores"].float()
        return self.model.activation_fn(scores).reshape(len(scores)).cpu()
