"""QwenLM's Qwen3VLReranker as the tests compare ours with: the conversation it builds for a pair and the inputs its
processor makes of it (QwenLM/Qwen3-VL-Embedding@8ce3aab src/models/qwen3_vl_reranker.py)."""

from tiny_models import RERANKER_SYSTEM


def authors_messages(instruction, query, document) -> list:
    """The conversation the authors' Qwen3VLReranker builds for one pair (qwen3_vl_reranker.py:333-376, the
    content of each side :225-319): their system turn, then one user turn of "<Instruct>: ", "<Query>:" and
    "\n<Document>:", each side's image before its text. ``query`` and ``document`` are (text, image)."""

    def side(prefix, text, image):
        return [{"type": "text", "text": prefix}, {"type": "image", "image": image}, {"type": "text", "text": text}]

    user = [{"type": "text", "text": "<Instruct>: " + instruction}, *side("<Query>:", *query)]
    return [
        {"role": "system", "content": [{"type": "text", "text": RERANKER_SYSTEM}]},
        {"role": "user", "content": user + side("\n<Document>:", *document)},
    ]


def authors_inputs(processor, pairs, instruction):
    """The authors' model inputs for ``pairs``: the conversation rendered by the checkpoint's default (Qwen3-VL) chat
    template with the assistant's turn opened (:168), images as given (do_resize=False, :201), left padding (:109).
    ``instruction``: one for all, or each pair's (their eval_reranker.py passes each query's own)."""
    instructions = [instruction] * len(pairs) if isinstance(instruction, str) else instruction
    conversations = [
        authors_messages(own, (query[1], query[2]), (document[1], document[2]))
        for own, (query, document) in zip(instructions, pairs)
    ]
    texts = processor.apply_chat_template(conversations, tokenize=False, add_generation_prompt=True)
    images = [image for query, document in pairs for image in (query[2], document[2])]
    return processor(text=texts, images=images, padding=True, do_resize=False, return_tensors="pt")
