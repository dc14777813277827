"""The model's side of the shared prefix (its inputs: ``shared_inputs.py``), on the main process.

For each query, the vision tower runs on its image once and the language model on its prefix once; the prefix's
keys and values are kept. Each batch of its candidates' suffixes then runs against them: the cache holds the
prefix expanded to the batch (a view, no copy; the cache's update concatenates it with the suffix's own keys and
values, the one copy attention needs), the attention mask covers prefix and suffix, and the positions are those the
whole pair has. The language model is causal, so the prefix's keys and values do not depend on the candidate: the
scores are the whole pairs' (tests: within 1e-5 in float32).

Positions: Qwen3-VL's multimodal rotary positions (``get_rope_index``: text advances one a token, an image's tokens
take (time, row, column) positions and advance by its larger side) are additive, so a suffix's positions are those
of the suffix alone plus the prefix's next position. Deepstack: the vision tower's intermediate features are added
at the image tokens of whatever the language model runs, the prefix's in its pass (into the cached keys and values)
and the suffix's in the suffix's, as in the whole pass. The score is then read at the last token, as the
CrossEncoder's own modules read it (``LogitScore`` on the LM head's logits there).
"""

import inspect
from dataclasses import dataclass

import torch

from mmrhub.retrieve.model_inputs import to_device
from mmrhub.retrieve.rerank.shared_inputs import SharedBatch


@dataclass
class Prefix:
    """One query's prefix on the device: each layer's keys and values (batch of one), its length, the position the
    suffix starts at, and how many of its batches are still to come."""

    layers: list
    length: int
    next_position: torch.Tensor
    batches_left: int


class SharedForward:
    """Scores ``SharedBatch``es with a Qwen3-VL CrossEncoder: each query's prefix run once and kept until its last
    batch has run (batches of several queries may come interleaved, one query per DataLoader worker)."""

    def __init__(self, cross_encoder, compact=None):
        generative = cross_encoder[0].model  # Qwen3VLForConditionalGeneration
        self.backbone, self.head = generative.model, generative.lm_head
        self.scorers = list(cross_encoder)[1:]
        self.compact = compact
        self.device = cross_encoder.device
        forward = set(inspect.signature(self.backbone.forward).parameters)
        self.cache_name = "cache" if "cache" in forward else "past_key_values"  # transformers < 5.25: the latter
        self.rope_takes_types = "mm_token_type_ids" in inspect.signature(self.backbone.get_rope_index).parameters
        self.prefixes = {}

    def positions(self, features: dict) -> torch.Tensor:
        """(3, batch, length) multimodal rotary positions of ``features`` alone, as the model's own forward
        computes them (padding ignored)."""
        kwargs = {
            "input_ids": features["input_ids"],
            "image_grid_thw": features.get("image_grid_thw"),
            "attention_mask": features["attention_mask"],
        }
        if self.rope_takes_types:
            kwargs["mm_token_type_ids"] = features["mm_token_type_ids"]
        return self.backbone.get_rope_index(**kwargs)[0]

    def run(self, features: dict, positions, cache, attention_mask):
        """The language model (and vision tower, on the images ``features`` hold) over ``features``' tokens,
        after what ``cache`` holds; its last hidden states."""
        return self.backbone(
            input_ids=features["input_ids"],
            attention_mask=attention_mask,
            pixel_values=features.get("pixel_values"),
            image_grid_thw=features.get("image_grid_thw"),
            position_ids=positions,
            use_cache=True,
            **{self.cache_name: cache},
        ).last_hidden_state

    def prefix(self, features: dict, batches: int) -> Prefix:
        """Run a query's prefix once; its keys and values, layer by layer."""
        from transformers import DynamicCache

        cache = DynamicCache(config=self.backbone.config)
        positions = self.positions(features)
        self.run(features, positions, cache, features["attention_mask"])
        layers = [(layer.keys, layer.values) for layer in cache.layers]
        return Prefix(layers, features["input_ids"].shape[1], positions.max() + 1, batches)

    def expanded(self, prefix: Prefix, rows: int):
        """A cache holding the prefix's keys and values for ``rows`` sequences: views of the one copy."""
        from transformers import DynamicCache

        cache = DynamicCache(config=self.backbone.config)
        for layer, (keys, values) in zip(cache.layers, prefix.layers):
            layer.update(keys[:, :, :0].expand(rows, -1, -1, -1), values[:, :, :0].expand(rows, -1, -1, -1))
            layer.keys, layer.values = keys.expand(rows, -1, -1, -1), values.expand(rows, -1, -1, -1)
        return cache

    @torch.inference_mode()
    def __call__(self, batch: SharedBatch) -> torch.Tensor:
        """The raw scores (before the activation) of one batch of a query's candidates, in batch order."""
        if batch.prefix is not None:
            self.prefixes[batch.query] = self.prefix(self.moved(batch.prefix), batch.batches)
        prefix = self.prefixes[batch.query]
        suffix = self.moved(batch.suffix)
        rows = len(suffix["input_ids"])
        mask = suffix["attention_mask"]
        attention_mask = torch.cat([mask.new_ones(rows, prefix.length), mask], dim=1)
        positions = self.positions(suffix) + prefix.next_position
        hidden = self.run(suffix, positions, self.expanded(prefix, rows), attention_mask)
        prefix.batches_left -= 1
        if not prefix.batches_left:
            del self.prefixes[batch.query]
        features = {"causal_logits": self.head(hidden[:, -1:])}
        for scorer in self.scorers:
            features = scorer(features)
        return features["scores"]

    def moved(self, features: dict) -> dict:
        """A batch's tensors on the model's device (pixel values restored as ``to_device`` restores them)."""
        return to_device(features, self.device, self.compact)
