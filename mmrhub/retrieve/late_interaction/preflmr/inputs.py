"""PreFLMR's inputs exactly as the authors' code makes them (LinWeizheDragon/FLMR; "EX" is
``examples/example_use_preflmr.py``, "TK" ``flmr/models/flmr/tokenization_flmr.py``, "MF"
``flmr/models/flmr/modeling_flmr.py``). Plain functions of token ids and strings, run in the DataLoader workers
(the passages' kept-mask where the model runs, from the ids).

Queries:
  - text: the row's instruction stripped, ":" appended when it does not end in one, every ":" replaced by
    ``mask_instruction_token``, then " " + "" + " " + the question + " " + "" (EX:261-271: the QuestionInput
    module's empty separation tokens joined by spaces; a missing question is read as empty);
  - tokens: ". " + text, BERT wordpiece, truncated and padded to ``query_maxlen`` (TK:211-226), position 1 (the
    "." token) overwritten by ``[unused0]`` (TK:195, 232), padding ids replaced by ``[MASK]`` (TK:233) while the
    attention mask stays 0 there (``attend_to_mask_tokens`` false, TK:181, 235-238);
  - kept tokens (MF:704-724): not in ``query_mask_input_ids_skip_list``, not id 0, and either one of the first two
    ([CLS], [unused0]) or after the first ``mask_instruction_token`` (the instruction and its ":" are masked; the
    [MASK] padding is kept); without a ``mask_instruction_token``, every token not skipped and not id 0 (MF:705-706,
    1389-1391). Where no ``mask_instruction_token`` is found, the authors log an error and keep every such token
    (MF:713-716): so does this.
  - image: the row's image in RGB (EX:291: ``Image.open(path).convert("RGB")``, then the processor of transformers
    4.49, which takes an RGB image as it is: ``images.as_rgb``), or a black 336 x 336 image when the row has none
    (EX:288-289), through the CLIP image processor (EX:293).
Passages (text only, ``passage_content``, EX:226):
  - tokens: ". " + text, truncated to ``doc_maxlen`` (TK:124-137; 512, EX:68), position 1 overwritten by
    ``[unused1]`` (TK:112, 142);
  - kept tokens: not id 0 and not the first token of any ASCII punctuation character as the context tokenizer
    encodes it (``mask_punctuation``, MF:654-659, 1300, 1389-1391).
"""

import string

import torch
from PIL import Image

from mmrhub.retrieve.images import as_rgb

QUERY_MARKER = "[unused0]"  # TK:195
PASSAGE_MARKER = "[unused1]"  # TK:112
PREFIX = ". "  # TK:124, 211
MISSING_IMAGE_SIDE = 336  # EX:289
PAD_ID = 0  # the authors' masks test ``x != 0`` literally (MF:719, 1390)


def query_text(instruction, question, instruction_token) -> str:
    """The query's text (EX:261-271). Without a ``mask_instruction_token`` the ":" is kept as it is."""
    instruction = (instruction or "").strip()
    if not instruction.endswith(":"):  # EX:262 tests instruction[-1], an error on an empty one; ":" alone here
        instruction += ":"
    if instruction_token is not None:
        instruction = instruction.replace(":", instruction_token)
    return " ".join([instruction, "", question or "", ""])


def query_tokens(tokenizer, texts: list, maxlen: int) -> tuple:
    """(input ids, attention mask) of queries: ColBERT's query tokenisation (TK:197-240)."""
    encoding = tokenizer(
        [PREFIX + text for text in texts], padding="max_length", truncation=True, max_length=maxlen, return_tensors="pt"
    )
    ids, attention = encoding["input_ids"], encoding["attention_mask"]
    ids[:, 1] = tokenizer.convert_tokens_to_ids(QUERY_MARKER)
    ids[ids == tokenizer.pad_token_id] = tokenizer.mask_token_id
    return ids, attention


def query_mask(ids: torch.Tensor, instruction_id, skip_ids) -> torch.Tensor:
    """Which query tokens count (MF:704-724), as a bool tensor like ``ids``."""
    kept = (ids != PAD_ID) & ~torch.isin(ids, torch.tensor(list(skip_ids), dtype=ids.dtype))
    if instruction_id is None:
        return kept
    found = ids == instruction_id
    # argmax of the first occurrence; 1 where there is none, as the authors clamp it (MF:711-716)
    first = torch.where(found.any(dim=1), found.int().argmax(dim=1), torch.ones(len(ids), dtype=torch.long))
    first = first.clamp(min=1)
    positions = torch.arange(ids.shape[1])
    return kept & ((positions[None, :] > first[:, None]) | (positions[None, :] < 2))


def instruction_id(tokenizer, instruction_token):
    """The id whose first occurrence ends the instruction (MF:661-666), or None."""
    if instruction_token is None:
        return None
    return tokenizer.encode(instruction_token, add_special_tokens=False)[0]


def passage_tokens(tokenizer, texts: list, maxlen: int) -> tuple:
    """(input ids, attention mask) of passages as numpy arrays (TK:114-158), padded to the batch's longest rather
    than to ``doc_maxlen``: a padding token is masked out of attention and of the score, so the kept tokens' vectors
    are the same (docs/presets.md, PreFLMR)."""
    encoding = tokenizer(
        [PREFIX + text for text in texts], padding="longest", truncation=True, max_length=maxlen, return_tensors="np"
    )
    ids = encoding["input_ids"]
    ids[:, 1] = tokenizer.convert_tokens_to_ids(PASSAGE_MARKER)
    return ids, encoding["attention_mask"]


def punctuation_ids(tokenizer) -> list:
    """The ids the passages' mask skips: the first token of each ASCII punctuation character (MF:655-659)."""
    return sorted({tokenizer.encode(symbol, add_special_tokens=False)[0] for symbol in string.punctuation})


def passage_mask(ids: torch.Tensor, skip_ids) -> torch.Tensor:
    """Which passage tokens count (MF:1389-1391), computed where ``ids`` are."""
    skipped = torch.tensor(list(skip_ids), dtype=ids.dtype, device=ids.device)
    return (ids != PAD_ID) & ~torch.isin(ids, skipped)


def query_image(image):
    """The image the authors' example gives the processor (EX:288-291)."""
    if image is None:
        return Image.new("RGB", (MISSING_IMAGE_SIDE, MISSING_IMAGE_SIDE), color="black")
    return as_rgb(image)
