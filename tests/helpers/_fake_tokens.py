"""A small multi-vector model for the pipeline tests, standing in for PreFLMR behind the same interface: each word of
a text (a query's instruction first) is a unit vector made from the word's hash, a query's image two tokens made from
its mean colour; padding tokens are noise, never kept. Everything is computed in ``collate`` (the DataLoader workers);
``encode`` moves it to the device. ``install()`` puts it behind ``--preset preflmr``, in PreFLMR's own encoder class."""

import zlib

import numpy as np

DIM = 8


def word_vector(word: str) -> np.ndarray:
    vector = np.random.default_rng(zlib.crc32(word.encode())).standard_normal(DIM).astype(np.float32)
    return vector / np.linalg.norm(vector)


def image_vectors(image) -> list:
    mean = np.asarray(image.convert("RGB").resize((8, 8)), dtype=np.float32).mean((0, 1)) / 255
    first = np.concatenate([mean, 1 - mean, [0.5, 0.5]]).astype(np.float32)
    second = np.concatenate([mean[::-1], [1.0], mean, [0.0]]).astype(np.float32)
    return [first / np.linalg.norm(first), second / np.linalg.norm(second)]


def row_tokens(row, role: str) -> np.ndarray:
    """The kept token vectors of one Row: (tokens, DIM)."""
    words = (
        ((row.instruction or "") + " " + (row.text or "")).split() if role == "queries" else (row.text or "").split()
    )
    vectors = [word_vector(word) for word in words]
    if role == "queries" and row.image is not None:
        vectors = image_vectors(row.image) + vectors
    return np.stack(vectors or [word_vector("[empty]")])


class Collate:
    """Rows -> padded vectors (noise where not kept) and the kept mask."""

    def __init__(self, role: str):
        self.role = role

    def __call__(self, rows):
        import torch

        tokens = [row_tokens(row, self.role) for row in rows]
        width = max(len(t) for t in tokens) + 1  # at least one padding token per row
        noise = np.random.default_rng(len(rows)).standard_normal((len(rows), width, DIM)).astype(np.float32)
        kept = np.zeros((len(rows), width), dtype=bool)
        for i, t in enumerate(tokens):
            noise[i, : len(t)] = t
            kept[i, : len(t)] = True
        return {"ids": [row.id for row in rows], "vectors": torch.from_numpy(noise), "kept": torch.from_numpy(kept)}


def fake_encoder_class():
    """PreFLMR's encoder with this model in place of the checkpoint: the identity, orientation, passages' dtype and
    refusals stay PreFLMR's own."""
    from mmrhub.retrieve.late_interaction.preflmr.encoder import PreFLMREncoder

    class FakeTokens(PreFLMREncoder):
        def load(self, folder, image_processor) -> dict:
            self.image_processor_name = image_processor
            return {}

        def collate(self, role: str):
            return Collate(role)

        def reads_images(self, role: str) -> bool:
            return role == "queries"

        def tokenizers(self) -> list:
            return []

        def encode(self, batch, role: str):
            return batch["vectors"].to(self.device), batch["kept"].to(self.device)

    return FakeTokens


def install(monkeypatch=None):
    """Build this model wherever PreFLMR's encoder would be built (the rest of the pipeline stays as it is)."""
    from mmrhub.retrieve.late_interaction.preflmr import encoder

    if monkeypatch is None:
        encoder.PreFLMREncoder = fake_encoder_class()
    else:
        monkeypatch.setattr(encoder, "PreFLMREncoder", fake_encoder_class())


def brute_force(rows_q, rows_c) -> np.ndarray:
    """Every (query, passage) MaxSim of the fake's vectors, with numpy: (queries, passages) float64."""
    queries = [row_tokens(row, "queries").astype(np.float64) for row in rows_q]
    passages = [row_tokens(row, "corpus").astype(np.float64) for row in rows_c]
    return np.array([[(q @ p.T).max(1).sum() for p in passages] for q in queries])
