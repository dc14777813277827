"""A token budget for chat-template models: text is cut, image tokens never (cutting into them makes the
processor fail on a mismatched image token count), and the chat template's own tokens are kept.

This is where we differ from the Qwen3-VL authors' embedder on purpose: it hands the budget to its processor
(qwen3_vl_embedding.py:356-358, ``truncation=True, max_length``), which cuts the rendered conversation from the
right, end-of-turn and assistant tokens first, and fails outright once the cut reaches an image's tokens (its
``_truncate_tokens``, qwen3_vl_embedding.py:201-218, which would keep special tokens, is never called). Its
reranker keeps every special token and cuts the rest from the end (qwen3_vl_reranker.py:139-164, 205-211), which
for one text per side is what cutting the texts from their ends does (the candidate's first, then the query's).
Both only matter for inputs over 8,192 / 10,240 tokens.

Also here: the check that a tokenizer does not turn a run's texts into unknown tokens (``unknown_tokens``).
"""

TEMPLATE_TOKENS = 64  # more than the chat template's own tokens (roles, vision markers) in one input
UNKNOWN_WARNING_SHARE = 0.02  # warn when more than this share of the texts' tokens are the unknown token
UNKNOWN_SAMPLE = 2000  # texts looked at (the first ones of each side)


def surely_fits(tokenizer, texts: list, image_tokens: int, max_length: int) -> bool:
    """Whether the input fits whatever its images' sizes: text tokens plus the most image tokens the pixel
    budget allows plus the template's, without rendering it; False when the image tokens cannot be told."""
    if image_tokens is None:
        return False
    text_tokens = sum(len(tokenizer(text, add_special_tokens=False)["input_ids"]) for text in texts if text)
    return text_tokens + image_tokens + TEMPLATE_TOKENS <= max_length


def most_image_tokens(processor, images: int, max_pixels=None) -> int:
    """The most tokens ``images`` images can take under ``max_pixels`` (else the processor's own budget), one
    per merged patch (32x32 pixels for Qwen3-VL); None for processors without one (inputs are then rendered)."""
    image_processor = processor.image_processor
    patch, merge = getattr(image_processor, "patch_size", None), getattr(image_processor, "merge_size", None)
    longest = max_pixels or (getattr(image_processor, "size", None) or {}).get("longest_edge")
    if not (patch and merge and longest):
        return None
    return images * (longest // (patch * merge) ** 2 + 2)


def cut_text(tokenizer, text: str, tokens: int) -> str:
    """``text`` less its last ``tokens`` tokens, and always shorter: a cut inside a character (byte-level
    tokenizers) decodes to a replacement character, dropped here, which would otherwise re-encode longer."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    cut = tokenizer.decode(ids[: max(0, len(ids) - tokens)]).rstrip("\ufffd")
    return cut if len(cut) < len(text) else text[:-1]


def fitted(length_of, texts: list, tokenizer, max_length: int, what: str) -> list:
    """``texts`` (a list of str or None, cut last first) shortened until ``length_of(texts)`` (the rendered
    input's token count) is at most ``max_length``; an error naming ``what`` when images alone exceed it."""
    texts = list(texts)
    length = length_of(texts)
    while length > max_length:
        cuttable = [i for i, text in enumerate(texts) if text]
        if not cuttable:
            raise ValueError(
                f"--max-length {max_length}: {what} takes {length} tokens without its text (images and template); "
                "raise --max-length or lower --max-pixels."
            )
        last = cuttable[-1]
        texts[last] = cut_text(tokenizer, texts[last], length - max_length) or None
        length = length_of(texts)
    return texts


def unknown_tokens(tokenizer, texts: list) -> tuple:
    """(share of the texts' tokens that are the tokenizer's unknown token, up to five words that became it, token
    count); (0.0, [], count) for a tokenizer without one (byte-level ones never need it)."""
    texts = [text for text in texts if text]
    unknown = getattr(tokenizer, "unk_token_id", None)
    if unknown is None or not texts:
        return 0.0, [], 0
    try:
        encoded = tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True)
        offsets = encoded["offset_mapping"]
    except (NotImplementedError, ValueError, TypeError):  # slow tokenizers have no offsets
        encoded, offsets = tokenizer(texts, add_special_tokens=False), None
    total = found = 0
    examples = []
    for row, ids in enumerate(encoded["input_ids"]):
        total += len(ids)
        for position, token in enumerate(ids):
            if token != unknown:
                continue
            found += 1
            if offsets is not None and len(examples) < 5:
                start, end = offsets[row][position]
                word = texts[row][start:end]
                if word and word not in examples:
                    examples.append(word)
    return (found / total if total else 0.0), examples, total


def unknown_tokens_warning(tokenizer, texts: list, what: str, model_id: str):
    """A warning line when the tokenizer turns more than ``UNKNOWN_WARNING_SHARE`` of the first ``UNKNOWN_SAMPLE``
    texts' tokens into its unknown token, else None."""
    share, examples, total = unknown_tokens(tokenizer, texts[:UNKNOWN_SAMPLE])
    if share <= UNKNOWN_WARNING_SHARE:
        return None
    shown = f" (e.g. {', '.join(repr(word) for word in examples)})" if examples else ""
    looked_at = min(len(texts), UNKNOWN_SAMPLE)
    return (
        f"warning: {model_id}'s tokenizer turns {share:.1%} of the tokens of {what} into {tokenizer.unk_token}"
        f"{shown} ({total:,} tokens in the first {looked_at:,} texts): the model reads each such word as one "
        "unknown token. A tokenizer that should lower-case and does not (do_lower_case) does this to Latin words."
    )
