"""A token budget for chat-template models: text is cut, image tokens never (cutting into them makes the
processor fail on a mismatched image token count). The Qwen3-VL authors keep every special token and cut the rest
from the end (qwen3_vl_embedding.py:201-218, qwen3_vl_reranker.py:139-164); cutting the text from its end does
the same for one text per input."""

TEMPLATE_TOKENS = 64  # more than the chat template's own tokens (roles, vision markers) in one input


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
