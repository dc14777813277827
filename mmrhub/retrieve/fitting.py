"""A token budget for chat-template models: text is cut, image tokens never (cutting into them makes the
processor fail on a mismatched image token count). The Qwen3-VL authors keep every special token and cut the rest
from the end (qwen3_vl_embedding.py:201-218, qwen3_vl_reranker.py:139-164); cutting the text from its end does
the same for one text per input."""


def cut_text(tokenizer, text: str, tokens: int) -> str:
    """``text`` less its last ``tokens`` tokens."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    return tokenizer.decode(ids[: max(0, len(ids) - tokens)])


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
