"""A query's shared prefix and its candidates' suffixes, as the DataLoader workers make them.

A pair's sequence is its conversation rendered by the chat template: the system turn, ``<Instruct>:``, the query's
image and question, ``\\n<Document>:``, then the candidate's image and text and the closing template. Everything
before the candidate's part is the same for all of a query's candidates: its prefix, rendered and processed (image
patched, text tokenised) once per query. Each candidate's suffix is the rest of its pair's own rendering, processed
as today's pairs are. The cut lies just before an added special token (the candidate image's
``<|vision_start|>``), which a tokeniser splits out before anything else: prefix tokens + suffix tokens are the
whole pair's tokens, exactly (tests compare them on the real layout).

Which rerankers share (``refusal``): a Qwen3-VL CrossEncoder scored by ``LogitScore`` at the last token, whose
tokeniser adds no tokens of its own. The model's side (the prefix's keys and values, the suffixes run against them)
is ``shared_forward.py``.
"""

from typing import NamedTuple

SHARED = "shared prefix"
# Why a pair runs whole under the shared path: the token budget would cut its text (the cut pair runs as today), or
# the chat template renders its candidate's part where the prefix cannot end (no special token there).
TOKEN_BUDGET = "token budget"
TEMPLATE = "no special token where the candidate's part begins"
SHARED_MODELS = ("qwen3_vl",)  # model types whose positions and deepstack the shared forward continues
_SENTINEL = "\ue000mmrhub-candidate\ue001"  # a candidate's text that no template renders otherwise (private use)


class SharedBatch(NamedTuple):
    """A batch of one query's candidates: their suffixes, and (in its first batch only) the query's prefix. The
    DataLoader pins a named tuple's tensors field by field."""

    query: tuple  # (chunk, query row): which prefix the suffixes continue
    batches: int  # how many batches the query's shared pairs make (the prefix is freed after the last)
    prefix: dict | None  # the processor's features of the prefix, in the query's first batch; else None
    suffix: dict  # the processor's features of the candidates' suffixes, left-padded


def refusal(cross_encoder, chat: bool) -> str | None:
    """Why this CrossEncoder cannot share a query's prefix among its candidates (its pairs then run whole), or
    None when it can."""
    from sentence_transformers.cross_encoder.modules import LogitScore

    module = cross_encoder[0]
    model_type = getattr(getattr(getattr(module, "model", None), "config", None), "model_type", None)
    if not chat or model_type not in SHARED_MODELS:
        return f"{model_type or type(module).__name__} models run whole pairs (the shared prefix is Qwen3-VL's)"
    scorers = list(cross_encoder)[1:]
    if not scorers or not all(isinstance(scorer, LogitScore) for scorer in scorers):
        names = ", ".join(type(scorer).__name__ for scorer in scorers) or "none"
        return f"its score modules ({names}) are not LogitScore at the last token"
    tokenizer, processor = module.tokenizer, module.processor
    if tokenizer("x", add_special_tokens=True)["input_ids"] != tokenizer("x", add_special_tokens=False)["input_ids"]:
        return "its tokeniser adds tokens of its own to every text"
    if not getattr(processor, "image_token", None):
        return "its processor names no image token"
    return None


class SharedInputs:
    """Renders a pair's conversation, cuts it where the candidate's part begins, and processes the prefix and the
    suffixes with the keywords sentence-transformers gives the processor (the preset's and ``Compact``'s)."""

    def __init__(self, reranker):
        self.reranker = reranker
        module = reranker.model[0]
        self.processor = module.processor
        self.image_token = self.processor.image_token
        own = module.processing_kwargs
        self.template = dict(own.get("chat_template") or {})
        text = {"padding": True, **(own.get("text") or {})}
        text.pop("logits_to_keep", None)
        images = dict(own.get("image") or {})
        self.compact = compact = reranker.compact
        if compact is not None and compact.processing_kwargs:
            images.update(compact.processing_kwargs["image"])
        common = {"return_tensors": "pt", **(own.get("common") or {})}
        self.kwargs = {"text_kwargs": text, "images_kwargs": images, "common_kwargs": common}
        # Added tokens the tokeniser splits out before anything else (no whitespace taken from before them): a
        # cut just before one leaves the text on both sides tokenised as in the whole pair.
        added = getattr(module.tokenizer, "added_tokens_decoder", {}).values()
        self.boundaries = tuple(token.content for token in added if token.special and not token.lstrip)

    def render(self, pair, prompt: str, candidate_content=None) -> str:
        """The pair's conversation as the chat template renders it (``candidate_content``: the candidate's
        message content replaced)."""
        (conversation,) = self.reranker.conversations([pair], [prompt])
        if candidate_content is not None:
            documents = [message for message in conversation if message.get("role") == "document"]
            if len(documents) != 1:
                return ""
            documents[0]["content"] = candidate_content
        return self.processor.apply_chat_template([conversation], tokenize=False, **self.template)[0]

    def prefix_text(self, pair, prompt: str) -> str | None:
        """What the query's pairs share: the rendering up to where the candidate's part begins (found by rendering
        a candidate of a sentinel text), None when it cannot be found."""
        rendered = self.render(pair, prompt, [{"type": "text", "text": _SENTINEL}])
        return rendered[: rendered.index(_SENTINEL)] if rendered.count(_SENTINEL) == 1 else None

    def suffix_text(self, prefix: str | None, pair, prompt: str) -> str | None:
        """The rest of the pair's own rendering after ``prefix``, or None when the pair cannot share it: its
        rendering does not begin with the prefix, the cut is not before a special token, or the images on each
        side of the cut are not its query's and its candidate's."""
        if prefix is None:
            return None
        rendered = self.render(pair, prompt)
        suffix = rendered[len(prefix) :]
        if not rendered.startswith(prefix) or not suffix.startswith(self.boundaries):
            return None
        query, candidate = pair
        if prefix.count(self.image_token) != len(images_of(query)):
            return None
        if suffix.count(self.image_token) != len(images_of(candidate)):
            return None
        return suffix

    def split(self, sides: list) -> tuple:
        """One query's (query, candidate) ``Side`` pairs: (its prefix text, {index: suffix text} of the pairs that
        share the prefix, {index: why} of those that run whole). A pair the token budget would cut runs whole, as
        today's pairs are cut (``Reranker.fit``)."""
        reranker = self.reranker
        prompt = sides[0][0].instruction or reranker.resolved_prompt
        pairs = [(query.input, candidate.input) for query, candidate in sides]
        prefix = self.prefix_text(pairs[0], prompt)
        suffixes, whole = {}, {}
        for index, pair in enumerate(pairs):
            if reranker.max_length and texts_of(reranker.fit(pair, prompt)) != texts_of(pair):
                whole[index] = TOKEN_BUDGET
                continue
            suffix = self.suffix_text(prefix, pair, prompt)
            if suffix is None:
                whole[index] = TEMPLATE
            else:
                suffixes[index] = suffix
        return prefix, suffixes, whole

    def features(self, texts: list, images: list) -> dict:
        """The processor's features of rendered ``texts`` with their ``images`` (in order), left-padded as the
        tokeniser pads, compacted as the whole pairs' are."""
        features = dict(self.processor(text=texts, images=images or None, **self.kwargs))
        return self.compact(features) if self.compact is not None else features


def images_of(item) -> list:
    """The images of one side of a pair (``model.model_input``: an image, or an image with its text)."""
    if isinstance(item, dict):
        return [item["image"]] if item.get("image") is not None else []
    return [] if item is None or isinstance(item, str) else [item]


def texts_of(pair) -> list:
    """The texts of a pair's sides (None for an image alone)."""
    return [item.get("text") if isinstance(item, dict) else None for item in pair]
