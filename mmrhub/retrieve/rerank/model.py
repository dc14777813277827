"""A multimodal cross-encoder (sentence-transformers ``CrossEncoder``) scoring (query, candidate) pairs.

Inputs are what ``mmrhub retrieve`` embeds: the query image with its question (the image alone when the
question is empty), the candidate's image with its text (product image + title, screenshot + passage).
Generative rerankers (Qwen3-VL-Reranker) load through ``CrossEncoder`` as a multimodal LM whose score is the
logit of "yes" against "no".
"""

import os
from typing import Any
from typing import NamedTuple

import torch

from mmrhub.records.provenance import model_identity
from mmrhub.retrieve.data_loading import Items
from mmrhub.retrieve.model_inputs import Compact
from mmrhub.retrieve.model_inputs import image_identity
from mmrhub.retrieve.model_inputs import prepare_inputs
from mmrhub.retrieve.model_inputs import to_device
from mmrhub.retrieve.model_inputs import with_text
from mmrhub.retrieve.model_loading import load_cross_encoder
from mmrhub.retrieve.presets import EXIF_APPLY
from mmrhub.retrieve.presets import Preset
from mmrhub.retrieve.rerank.pairs import batches
from mmrhub.retrieve.rerank.pairs import even_batches
from mmrhub.retrieve.rerank.shared_forward import SharedForward
from mmrhub.retrieve.rerank.shared_inputs import SHARED
from mmrhub.retrieve.rerank.shared_inputs import SharedBatch
from mmrhub.retrieve.rerank.shared_inputs import SharedInputs
from mmrhub.retrieve.rerank.shared_inputs import images_of
from mmrhub.retrieve.rerank.shared_inputs import refusal
from mmrhub.retrieve.token_budget import fitted
from mmrhub.retrieve.token_budget import most_image_tokens
from mmrhub.retrieve.token_budget import surely_fits


def model_input(row, prepare_image):
    """An (id, text, image) row as the CrossEncoder takes it: image + text, or the image alone."""
    row_id, text, image = row[0], row[1], row[2]
    image = prepare_image(row_id, image)
    return {"image": image, "text": text} if text else image


class Side(NamedTuple):
    """One side of a pair, prepared: the CrossEncoder's input, and the instruction of its row (a query's own,
    where the preset takes rows' instructions and the row has one; else None: the run's instruction)."""

    input: Any  # an image, or {"image": ..., "text": ...}
    instruction: str | None = None


class PairCollate:
    """(query row, candidate row) pairs -> the model's inputs (``Reranker.features``), each side prepared here."""

    def __init__(self, reranker):
        self.reranker = reranker

    def __call__(self, rows):
        """A batch of (query, candidate) ``Row`` pairs as the model's inputs."""
        prepared = [(self.reranker.prepared(query), self.reranker.prepared(candidate)) for query, candidate in rows]
        return self.reranker.features(prepared)


QUERY, CANDIDATE = "query", "candidate"


class PairBatches(torch.utils.data.IterableDataset):
    """The batches of a rerank, made in the DataLoader workers: worker w of W takes chunks w, w + W, ... (``work``:
    (chunk number, its (query row, corpus row) pairs, each pair's text length)) and yields (chunk number, positions
    in the chunk's pairs, model inputs, path) for each batch of each; the path is ``SHARED`` or why the batch's
    pairs run whole. Whole pairs: batches of ``batch_size`` longest first over the chunk. Shared prefix: query by
    query, its prefix prepared once and its candidates' suffixes in even batches (``Reranker.shared``); a pair the
    token budget would cut runs whole. The batches depend on the chunk alone, so a pair gets the same score whichever
    way the work is split. Within a chunk every distinct image is decoded and prepared once, kept until the chunk's
    last pair that shows it: a query's image once per run (a query lies in one chunk), a product shown with several
    queries of a chunk once per chunk."""

    def __init__(self, queries: Items, corpus: Items, work: list, reranker, batch_size: int):
        self.queries, self.corpus, self.work, self.reranker = queries, corpus, work, reranker
        self.batch_size = batch_size

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        for chunk, pairs, lengths in self.work[worker::workers]:
            yield from self.chunk(chunk, pairs, lengths)

    def chunk(self, chunk: int, pairs: list, lengths: list):
        """One chunk's batches, each distinct image prepared once: its pairs taken batch by batch (whole pairs) or
        query by query (shared prefix)."""
        shared = self.reranker.shared is not None
        units = by_query(pairs) if shared else batches(lengths, self.batch_size)
        last_use = {}
        for number, positions in enumerate(units):
            for position in positions:
                query, candidate = pairs[position]
                last_use[QUERY, query] = last_use[CANDIDATE, candidate] = number
        ready = {}
        for number, positions in enumerate(units):
            wanted = [pairs[position] for position in positions]
            self.prepare(ready, QUERY, self.queries, {query for query, _ in wanted})
            self.prepare(ready, CANDIDATE, self.corpus, {candidate for _, candidate in wanted})
            sides = [(ready[QUERY, query], ready[CANDIDATE, candidate]) for query, candidate in wanted]
            if shared:
                key = (chunk, wanted[0][0])
                yield from self.query_batches(chunk, key, positions, sides, [lengths[p] for p in positions])
            else:
                yield chunk, positions, self.reranker.features(sides), self.reranker.whole_because
            for key in {(QUERY, query) for query, _ in wanted} | {(CANDIDATE, c) for _, c in wanted}:
                if last_use[key] == number:
                    del ready[key]

    def query_batches(self, chunk: int, key: tuple, positions: list, sides: list, lengths: list):
        """One query's batches: its candidates' suffixes in even batches against its prefix (prepared once, sent
        with the first), then its pairs that run whole, by why."""
        shared = self.reranker.shared
        prefix, suffixes, whole = shared.split(sides)
        sharing = list(suffixes)
        groups = even_batches([lengths[i] for i in sharing], self.batch_size)
        prefix_features = shared.features([prefix], images_of(sides[0][0].input)) if groups else None
        for number, group in enumerate(groups):
            chosen = [sharing[i] for i in group]
            images = [image for i in chosen for image in images_of(sides[i][1].input)]
            suffix = shared.features([suffixes[i] for i in chosen], images)
            inputs = SharedBatch(key, len(groups), prefix_features if number == 0 else None, suffix)
            yield chunk, [positions[i] for i in chosen], inputs, SHARED
        for why in sorted(set(whole.values())):
            alike = [i for i in whole if whole[i] == why]
            for group in batches([lengths[i] for i in alike], self.batch_size):
                chosen = [alike[i] for i in group]
                yield chunk, [positions[i] for i in chosen], self.reranker.features([sides[i] for i in chosen]), why

    def prepare(self, ready: dict, side: str, items: Items, rows: set) -> None:
        """Decode and prepare the ``rows`` of ``items`` not yet in ``ready``, in one read of the table."""
        missing = sorted(row for row in rows if (side, row) not in ready)
        for row, item in zip(missing, items.__getitems__(missing) if missing else ()):
            ready[side, row] = self.reranker.prepared(item)


def by_query(pairs: list) -> list:
    """The positions of a chunk's pairs, grouped by query in the chunk's order."""
    groups = {}
    for position, (query, _) in enumerate(pairs):
        groups.setdefault(query, []).append(position)
    return list(groups.values())


class Reranker:
    """A sentence-transformers CrossEncoder on image + text pairs, with the identity its cached scores are keyed by.
    Its inputs are prepared in the DataLoader workers (``prepared``, ``features``); ``score`` runs the model."""

    def __init__(
        self, model_id, settings: Preset, revision=None, device="cpu", dtype=torch.float32, shared_prefix: bool = True
    ):
        if os.path.isdir(model_id):
            model_id = os.path.abspath(model_id)
        self.model = load_cross_encoder(model_id, revision, device, dtype)
        if not self.model.supports(("image", "text")) and not self.model.supports("message"):
            raise ValueError(
                f"--model {model_id}: this CrossEncoder takes {', '.join(map(str, self.model.modalities))} only; "
                "reranking here needs image + text inputs (e.g. Qwen/Qwen3-VL-Reranker-2B)."
            )
        self.model.eval()
        module = self.model[0]
        self.chat, self.prepare_image = prepare_inputs(module, self.model, settings, model_id)
        self.settings = settings
        self.orientation = settings.exif_orientation or EXIF_APPLY
        self.prompt = settings.query_instruction
        # The prompt predict() would use: ours, else the model's default one.
        self.resolved_prompt = self.model._resolve_prompt(self.prompt, None)
        # Each query's own instruction in its <Instruct>: line (M2KR's), as QwenLM's evaluation passes it
        # (presets.QWEN3_VL_RERANKER's sources); a chat model's system turn holds it.
        self.row_instructions = bool(self.chat and settings.row_instructions)
        self.max_length = settings.max_length if self.chat else None
        self.compact = Compact.for_model(module, device, dtype) if self.chat else None
        # Each query's prefix computed once for all its candidates where the model allows (shared_inputs.py);
        # else every pair runs whole, and whole_because says why.
        self.whole_because = refusal(self.model, self.chat) if shared_prefix else NO_SHARED_PREFIX
        self.shared = SharedInputs(self) if self.whole_because is None else None
        self.shared_forward = SharedForward(self.model, self.compact) if self.shared is not None else None
        self.identity = {
            "backend": "sentence-transformers CrossEncoder",
            "model": model_identity(model_id, revision),
            "dtype": str(dtype),
            "max_length": settings.max_length if self.chat else self.model.max_seq_length,
            "prompt": self.prompt,
            "row_instructions": self.row_instructions,
            "image": image_identity(self.prepare_image, module) if self.chat else None,
            "exif_orientation": self.orientation,
            "activation": type(self.model.activation_fn).__name__,
            "score": SCORE_PRECISION,
        }

    def collate(self):
        """A collate of (query row, candidate row) pairs: the model's preprocessing (``prepared``, ``features``)."""
        return PairCollate(self)

    def tokenizers(self) -> list:
        """The tokenisers its texts go through (for the unknown-token check)."""
        tokenizer = getattr(self.model[0], "tokenizer", None)
        return [tokenizer] if tokenizer is not None else []

    def prepared(self, row) -> Side:
        """One side of a pair, as the CrossEncoder takes it: its image prepared (``prepare_image``), with its text,
        and its row's own instruction where the run takes them."""
        own = getattr(row, "instruction", None) if self.row_instructions else None
        # stripped as QwenLM's evaluation loads it (QT:20); empty: the run's (QR:351)
        return Side(model_input(row, self.prepare_image), (own or "").strip() or None)

    def features(self, pairs: list):
        """Prepared (query, candidate) ``Side`` pairs as the model's inputs: each fitted to the token budget, then
        the model's processor (chat template, patching, tokenising), as ``CrossEncoder.predict`` preprocesses them
        with the instruction as its prompt: the run's, or each query's own (QR:383, QR:346-351)."""
        prompts = [query.instruction or self.resolved_prompt for query, _ in pairs]
        pairs = [(query.input, candidate.input) for query, candidate in pairs]
        if self.max_length:
            pairs = [self.fit(pair, prompt) for pair, prompt in zip(pairs, prompts)]
        if len(set(prompts)) == 1:
            inputs, kwargs = pairs, {"prompt": prompts[0]}
        else:  # queries with their own instructions: each pair's conversation with its own system turn
            inputs, kwargs = self.conversations(pairs, prompts), {}
        if self.compact is not None:
            return self.compact.preprocess(self.model, inputs, **kwargs)
        return self.model.preprocess(inputs, **kwargs)

    def conversations(self, pairs: list, prompts: list) -> list:
        """Each pair as the conversation ``preprocess`` makes of it (query and document turns), its own prompt
        prepended as the system turn, as ``preprocess(pairs, prompt=...)`` prepends one prompt to all."""
        formatter = self.model[0].input_formatter
        conversations = []
        for pair, prompt in zip(pairs, prompts):
            modality, inputs, _ = formatter.parse_inputs([pair])
            if modality != "message":
                modality, inputs = formatter.batch_to_message(modality, inputs)
            messages = inputs["message"]
            conversations += formatter.prepend_prompt_to_messages(messages, prompt) if prompt else messages
        return conversations

    def fit(self, pair, prompt=None):
        """A pair whose rendered conversation fits the token budget with ``prompt`` (default: the run's): the
        candidate's text cut first, then the query's; images kept."""
        prompt = prompt or self.resolved_prompt
        texts = [item["text"] if isinstance(item, dict) else None for item in pair]
        module = self.model[0]
        images = most_image_tokens(module.processor, len(pair), self.settings.max_pixels)
        if surely_fits(module.tokenizer, [*texts, prompt], images, self.max_length):
            return pair

        def rebuilt(texts):
            return tuple(with_text(item, text) if isinstance(item, dict) else item for item, text in zip(pair, texts))

        def length_of(texts):
            return self.model.preprocess([rebuilt(texts)], prompt=prompt)["input_ids"].shape[1]

        return rebuilt(fitted(length_of, texts, module.tokenizer, self.max_length, "a (query, candidate) pair"))

    @torch.inference_mode()
    def score(self, features) -> torch.Tensor:
        """One forward pass over a prepared batch (whole pairs' features, or a ``SharedBatch`` of one query's
        suffixes), its tensors moved without waiting: float32 scores on CPU, in batch order. What
        ``CrossEncoder.predict`` does after preprocessing: upcast, then the model's activation."""
        if isinstance(features, SharedBatch):
            scores = self.shared_forward(features).float()
        else:
            scores = self.model(to_device(features, self.model.device, self.compact))["scores"].float()
        return self.model.activation_fn(scores).reshape(len(scores)).cpu()


SCORE_PRECISION = "float32: logits upcast before the activation (sigmoid)"
NO_SHARED_PREFIX = "--no-shared-prefix"
