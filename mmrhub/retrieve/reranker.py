"""A multimodal cross-encoder (sentence-transformers ``CrossEncoder``) scoring (query, candidate) pairs.

Inputs are what ``mmrhub retrieve`` embeds: the query image with its question (the image alone when the
question is empty), the candidate's image with its text (product image + title, screenshot + passage).
Generative rerankers (Qwen3-VL-Reranker) load through ``CrossEncoder`` as a multimodal LM whose score is the
logit of "yes" against "no".
"""

import os

import torch

from mmrhub.retrieve.data import Items
from mmrhub.retrieve.encoders import rgb
from mmrhub.retrieve.identity import model_identity


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


def model_input(row):
    """An (id, text, image) row as the CrossEncoder takes it: image + text, or the image alone."""
    row_id, text, image = row
    image = rgb(row_id, image)
    return {"image": image, "text": text} if text else image


class PairCollate:
    """Runs in DataLoader workers: images converted and the model's processor applied (resizing, patching,
    chat template, tokenizing), so the main process only moves tensors and runs the model."""

    def __init__(self, model, prompt):
        self.model, self.prompt = model, prompt

    def __call__(self, rows):
        """A batch of (query, candidate) pairs as the model's inputs."""
        pairs = [(model_input(query), model_input(candidate)) for query, candidate in rows]
        return self.model.preprocess(pairs, prompt=self.prompt)


class Reranker:
    """A sentence-transformers CrossEncoder on image + text pairs, with the identity its cached scores are keyed by."""

    def __init__(self, model_id, revision=None, device="cpu", dtype=torch.float32, max_length=None, prompt=None):
        from sentence_transformers import CrossEncoder

        if os.path.isdir(model_id):
            model_id = os.path.abspath(model_id)
        self.model = CrossEncoder(
            model_id, revision=revision, device=str(device), max_length=max_length, model_kwargs={"dtype": dtype}
        )
        if not self.model.supports(("image", "text")) and not self.model.supports("message"):
            raise ValueError(
                f"--model {model_id}: this CrossEncoder takes {', '.join(map(str, self.model.modalities))} only; "
                "reranking here needs image + text inputs (e.g. Qwen/Qwen3-VL-Reranker-2B)."
            )
        self.prompt = prompt
        self.identity = {
            "backend": "sentence-transformers CrossEncoder",
            "model": model_identity(model_id, revision),
            "dtype": str(dtype),
            "max_length": self.model.max_seq_length,
            "prompt": prompt,
            "activation": type(self.model.activation_fn).__name__,
        }

    def collate(self):
        """The DataLoader's collate: the model's preprocessing, run in the workers."""
        # The prompt predict() would use: ours, else the model's default one.
        return PairCollate(self.model, self.model._resolve_prompt(self.prompt, None))

    @torch.inference_mode()
    def score(self, features) -> torch.Tensor:
        """One forward pass over a collated batch: float32 scores on CPU, in batch order. What
        ``CrossEncoder.predict`` does after preprocessing: upcast, then the model's activation."""
        from sentence_transformers.util import batch_to_device

        self.model.eval()
        scores = self.model(batch_to_device(features, self.model.device))["scores"].float()
        return self.model.activation_fn(scores).reshape(len(scores)).cpu()
