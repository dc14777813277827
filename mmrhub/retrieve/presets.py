"""Reference presets: each model family's settings as its authors run it, with where each setting comes from.

Sources (read at these commits; line numbers refer to them):
  QE  QwenLM/Qwen3-VL-Embedding@8ce3aab src/models/qwen3_vl_embedding.py
  QR  QwenLM/Qwen3-VL-Embedding@8ce3aab src/models/qwen3_vl_reranker.py
  ER  QwenLM/Qwen3-VL-Embedding@8ce3aab src/evaluation/mmeb_v2/eval_reranker.py
  QM  QwenLM/Qwen3-VL-Embedding@8ce3aab README.md
  CC  OFA-Sys/Chinese-CLIP@31863c7 cn_clip/clip/utils.py
  CE  OFA-Sys/Chinese-CLIP@31863c7 cn_clip/eval/data.py
  QV  qwen-vl-utils 0.0.14 vision_process.py (the authors' image loading)
  QI  QwenLM/Qwen3-VL-Embedding@8ce3aab src/evaluation/mmeb_v2/data/datasets/image_i2i_vg_dataset.py
  QT  QwenLM/Qwen3-VL-Embedding@8ce3aab src/evaluation/mmeb_v2/data/datasets/image_i2t_eval.py
  FE  LinWeizheDragon/FLMR@be4b748 examples/example_use_preflmr.py
  FM  LinWeizheDragon/FLMR@be4b748 flmr/models/flmr/modeling_flmr.py

A preset follows from the model (``chosen``: a checkpoint's config.json model_type, or the model's own name, never a
parent folder's); ``--preset NAME`` picks one for any model and ``--preset none`` keeps the checkpoint's own
settings. Imports nothing heavy.
"""

import json
import re
import unicodedata
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path

NONE = "none"
# EXIF orientation (images.decoded): ``apply`` turns a tagged photo upright, as ``datasets`` does on decode
# (datasets/features/image.py:197); ``ignore`` keeps the stored pixels, as the models' authors read their files:
# qwen-vl-utils opens the file with PIL alone (QV:109), Chinese-CLIP's evaluation too (CE:91).
EXIF_APPLY, EXIF_IGNORE = "apply", "ignore"
EXIF_CHOICES = (EXIF_APPLY, EXIF_IGNORE)


@dataclass(frozen=True)
class Preset:
    """One model family's reference settings; None leaves a setting to the checkpoint."""

    name: str
    role: str  # "embedding" or "reranker": which command the family serves
    query_instruction: str | None = None  # embedding: system turn of queries; reranker: the <Instruct>: line
    # a query's system turn (reranker: its <Instruct>: line) is its row's own instruction where its table has one
    # (M2KR's); rows without one, and every row once --query-instruction / --instruction or --default-instruction
    # is given, get query_instruction
    row_instructions: bool = False
    document_instruction: str | None = None  # embedding: system turn of corpus items
    system_prompt: str | None = None  # reranker: its fixed system turn
    min_pixels: int | None = None  # image budget: resized so that min_pixels <= h * w <= max_pixels
    max_pixels: int | None = None
    max_length: int | None = None  # tokens; text is cut, image tokens never
    square_resize: bool = False  # dual encoders: resized to the vision tower's square input, no centre crop
    resample: str | None = None  # dual encoders: the resize filter
    pad_to_max_length: bool = False  # dual encoders: texts padded to max_length, as the authors' tokenizer does
    punctuate: bool = False  # instructions end in punctuation (a '.' appended otherwise)
    add_generation_prompt: bool = False  # chat models: the assistant's turn opened after the input
    exif_orientation: str | None = None  # one of EXIF_CHOICES (images.decoded); None: "apply", as datasets decodes
    pooling: str | None = None  # what the vector is: recorded, the checkpoint's modules compute it
    score: str | None = None  # what a reranker's score is: recorded, the checkpoint's modules compute it
    backend: str | None = None  # the encoder the family needs whatever --backend says (None: --backend's)
    image_processor: str | None = None  # PreFLMR: the CLIP image processor (None: the config's vision_model_version)
    dtype: str | None = None  # the model's dtype under --dtype auto (None: bfloat16 on CUDA, float32 elsewhere)
    sources: tuple = ()  # (setting, "file:line") pairs

    def settings(self) -> dict:
        """Every setting and its source, as the run's metadata records them."""
        return {**asdict(self), "sources": dict(self.sources)}

    def with_overrides(self, **overrides) -> "Preset":
        """This preset with the given settings replaced (None values ignored)."""
        given = {key: value for key, value in overrides.items() if value is not None}
        return replace(self, **given) if given else self


# 32 = the 16-pixel patch times the 2x2 merge: QE:25-26, QR:18-19.
_QWEN_MIN_PIXELS = 4 * 32 * 32
_QWEN_MAX_PIXELS = 1800 * 32 * 32

QWEN3_VL_EMBEDDING = Preset(
    name="qwen3-vl-embedding",
    role="embedding",
    query_instruction="Retrieve images or text relevant to the user's query.",
    row_instructions=True,
    document_instruction="Represent the user's input.",
    min_pixels=_QWEN_MIN_PIXELS,
    max_pixels=_QWEN_MAX_PIXELS,
    max_length=8192,
    punctuate=True,
    add_generation_prompt=True,
    exif_orientation=EXIF_IGNORE,
    pooling="last token, L2-normalised",
    sources=(
        ("query_instruction", "QM:173 (the instruction their example gives queries)"),
        (
            "row_instructions",
            "QI:22-28 (image-to-text retrieval: each query's own task instruction, its text after the image), "
            "QE:378 (an input's instruction becomes its system turn, QE:239)",
        ),
        ("document_instruction", "QE:170 (default_instruction), QE:239 (the system turn of every input)"),
        ("instruction punctuation", "QE:230-234 (a '.' appended unless it ends in Unicode punctuation)"),
        ("image before text", "QE:302-324"),
        ("add_generation_prompt", "QE:330-332 (the assistant's turn opened: its last token is what is pooled)"),
        ("min_pixels", "QE:27"),
        ("max_pixels", "QE:28"),
        (
            "max_length",
            "QE:24; QE:356-358: their processor cuts the rendered conversation from the right (truncation=True), "
            "end-of-turn tokens and all; QE:201-218 (_truncate_tokens) is never called. Ours cuts the text alone "
            "and keeps the template and the image tokens (token_budget.py)",
        ),
        ("exif_orientation", "QV:109 (the image file opened with PIL alone: no EXIF transpose)"),
        ("pooling", "QE:365-370 (last attended token), QE:390-391 (L2)"),
        ("padding side", "QE:188 (right)"),
    ),
)

QWEN3_VL_RERANKER = Preset(
    name="qwen3-vl-reranker",
    role="reranker",
    query_instruction="Given a search query, retrieve relevant candidates that answer the query.",
    row_instructions=True,
    system_prompt=(
        "Judge whether the Document meets the requirements based on the Query and the Instruct provided. Note that "
        'the answer can only be "yes" or "no".'
    ),
    min_pixels=_QWEN_MIN_PIXELS,
    max_pixels=_QWEN_MAX_PIXELS,
    max_length=10240,
    exif_orientation=EXIF_IGNORE,
    score='sigmoid(logit("yes") - logit("no")) at the last token',
    sources=(
        ("query_instruction", "QR:85 (default_instruction)"),
        (
            "row_instructions",
            "ER:91 (each query's own instruction taken from its sample, stripped as their loader strips it, "
            "QT:20), ER:131-135 (passed with the query), QR:383, QR:346-351 (it fills '<Instruct>: ', the default "
            "only where it is empty)",
        ),
        ("system_prompt", "QR:334-340"),
        ("conversation", "QR:349-370 ('<Instruct>: ', '<Query>:', '\\n<Document>:'; image before text QR:295-317)"),
        ("min_pixels", "QR:20"),
        ("max_pixels", "QR:21"),
        (
            "max_length",
            "QR:17; QR:139-164, QR:205-211: special (image) tokens kept, the rest cut from the end; ours cuts the "
            "candidate's text, then the query's (token_budget.py)",
        ),
        ("exif_orientation", "QV:109 (the image file opened with PIL alone: no EXIF transpose)"),
        ("score", "QR:120-137"),
        ("padding side", "QR:109 (left)"),
    ),
)

CHINESE_CLIP = Preset(
    name="chinese-clip",
    role="embedding",
    max_length=52,
    square_resize=True,
    resample="bicubic",
    pad_to_max_length=True,
    exif_orientation=EXIF_IGNORE,
    sources=(
        ("max_length", "CC:145 (context_length=52; 'all baseline models use 52', CC:153)"),
        ("pad_to_max_length", "CC:166-170"),
        (
            "square_resize",
            "CC:181-182 (Resize((224, 224)) in the image's own mode, then convert('RGB'): square, no centre crop; "
            "224 = ViT-L-14's input, CC:32-34)",
        ),
        ("resample", "CC:181 (InterpolationMode.BICUBIC)"),
        ("exif_orientation", "CE:91 (images opened with PIL alone: no EXIF transpose)"),
    ),
)

PREFLMR = Preset(
    name="preflmr",
    role="embedding",
    row_instructions=True,
    exif_orientation=EXIF_IGNORE,
    pooling="none: every kept token's vector, L2-normalised (late interaction)",
    score="exact MaxSim: the sum over the query's kept tokens of the best inner product with the passage's kept tokens",
    backend="preflmr",
    dtype="float32",
    sources=(
        (
            "dtype",
            "FE:245-249 (from_pretrained without a dtype: float32); at ViT-G's widths bfloat16 moved scores by up to "
            "1.9% of a query's largest and changed the top-10 set of 19 of 30 queries (bench/preflmr_dtype.py)",
        ),
        (
            "row_instructions",
            "FE:261-264 (each query's own instruction, stripped, ending in ':', ':' replaced by the config's "
            "mask_instruction_token), FE:266-271 (then the question)",
        ),
        ("lengths", "FE:68 (doc_maxlen=512: passages' tokens); queries: the checkpoint config's query_maxlen"),
        (
            "image_processor",
            "FE:250 (the query image processor: AutoImageProcessor of the name the example is given); by default "
            "the config's vision_model_version, the CLIP its vision tower is",
        ),
        ("exif_orientation", "FE:291 (Image.open(path).convert('RGB'): no EXIF transpose of the files they read)"),
        ("query without image", "FE:288-289 (a black 336 x 336 image)"),
        ("passage_dtype", "FM:1338-1339 (passage vectors cast to half on a GPU; float32 on CPU)"),
        (
            "search",
            "FE:78-89, FE:361 (a PLAID index, nbits=8: approximate); ours scores every passage exactly (maxsim.py)",
        ),
    ),
)

PRESETS = {preset.name: preset for preset in (QWEN3_VL_EMBEDDING, QWEN3_VL_RERANKER, CHINESE_CLIP, PREFLMR)}
PRESET_CHOICES = (*PRESETS, NONE)

# A model's own name (a folder's, or a Hub repo's) -> its family, matched case-insensitively; never a parent
# folder's name: a Chinese-CLIP folder kept under runs/preflmr/ is no PreFLMR.
_FAMILIES = (
    (re.compile(r"qwen3-vl-embedding", re.IGNORECASE), QWEN3_VL_EMBEDDING),
    (re.compile(r"qwen3-vl-reranker", re.IGNORECASE), QWEN3_VL_RERANKER),
    (re.compile(r"chinese-clip", re.IGNORECASE), CHINESE_CLIP),
    (re.compile(r"preflmr", re.IGNORECASE), PREFLMR),
)
# A checkpoint's config.json model_type -> its family, where the type names one family alone (Qwen3-VL's type is
# both the embedder's and the reranker's, and a plain chat model's: their names decide).
_MODEL_TYPES = {"chinese_clip": CHINESE_CLIP, "flmr": PREFLMR}


def resolve(model_id: str, name: str | None, role: str, default_instruction: bool = False, **overrides) -> Preset:
    """The settings a run uses: the preset (``preset_for``) with the given overrides; without a preset, a
    ``none`` one holding the overrides alone (the checkpoint decides the rest). A query instruction given
    overrides the rows' own ones too, and ``default_instruction`` gives every query the preset's."""
    preset = preset_for(model_id, name, role) or Preset(name=NONE, role=role)
    if overrides.get("query_instruction") is not None or default_instruction:
        preset = replace(preset, row_instructions=False)
    if overrides.get("image_processor") is not None and preset.backend != PREFLMR.backend:
        raise ValueError(
            f"--image-processor is for PreFLMR models (--preset {PREFLMR.name}); {model_id} runs with the "
            f"{preset.name} preset, whose processor comes with the checkpoint."
        )
    return preset.with_overrides(**overrides)


def instruction(preset: Preset, text: str | None) -> str | None:
    """An instruction as the preset's model receives it (Qwen3-VL-Embedding's punctuation rule applied)."""
    return punctuated(text) if preset.punctuate else text


def preset_for(model_id: str, name: str | None, role: str) -> Preset | None:
    """The preset ``name`` (``none``: no preset), else the one the model names (``chosen``), else None; an error
    when it serves the other command."""
    found = chosen(model_id, name, role)
    return found[0] if found else None


def chosen(model_id: str, name: str | None, role: str):
    """(preset, what decided it) or None: ``--preset NAME``; else a local checkpoint's config.json ``model_type``
    where it names one family; else the model's own name (a folder's name, or a Hub repo's), never a parent
    folder's. An error, saying what decided, when the preset serves the other command."""
    if name == NONE:
        return None
    found = (PRESETS[name], f"--preset {name}") if name is not None else guessed(str(model_id))
    if found is None:
        return None
    preset, why = found
    if preset.role != role:
        chose = f" (chosen by {why})" if name is None else ""
        raise ValueError(
            f"--preset {preset.name}{chose} is for {preset.role} models, not {role} models ({model_id}); "
            f"give --preset {NONE} or one of {', '.join(p for p, v in PRESETS.items() if v.role == role)}."
        )
    return preset, why


def guessed(model_id: str):
    """(preset, what decided it) from the checkpoint's config.json model_type or the model's own name; or None."""
    folder = Path(model_id)
    if folder.is_dir():
        model_type = _model_type(folder / "config.json")
        if model_type in _MODEL_TYPES:
            return _MODEL_TYPES[model_type], f"{folder / 'config.json'}'s model_type {model_type!r}"
    own, where = model_id.rstrip("/").rsplit("/", 1)[-1], "the model's name"
    if folder.is_dir():
        resolved = folder.resolve()
        own, where = resolved.name, "the folder's name"
        repo = resolved.parent.parent.name  # huggingface_hub's cache: models--<org>--<name>/snapshots/<commit>
        if resolved.parent.name == "snapshots" and repo.startswith("models--"):
            own, where = repo.removeprefix("models--").replace("--", "/"), "the repo id of the cached snapshot"
    return next(((preset, f"{where} {own!r}") for pattern, preset in _FAMILIES if pattern.search(own)), None)


def _model_type(path: Path):
    """A config.json's model_type, or None when it cannot be read."""
    try:
        found = json.loads(path.read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None


def punctuated(instruction: str | None) -> str | None:
    """The instruction stripped, with a '.' appended unless it ends in punctuation: Qwen3-VL-Embedding's rule
    (QE:230-234)."""
    if instruction is None:
        return None
    instruction = instruction.strip()
    if instruction and not unicodedata.category(instruction[-1]).startswith("P"):
        instruction += "."
    return instruction
