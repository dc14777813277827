"""Reference scores of PreFLMR from its authors' own, unchanged code, for
``tests/retrieve/late_interaction/test_preflmr_reference.py``.

Three steps, in three environments:

1. ``export`` (this project's venv): writes the tiny PreFLMR checkpoint (``scripts/tiny_models.py``,
   ``build_preflmr`` with the seed below and the bundled M2KR sample's words) and the sample's plain inputs: each
   query's id, instruction and question, its image file's bytes as stored in the sample's split zip, and each
   passage's id and text::

       .venv/bin/python scripts/preflmr_reference.py export /tmp/preflmr-ref

2. ``score`` (the authors' environment): loads that checkpoint with LinWeizheDragon/FLMR's own classes
   (FLMRConfig, FLMRQueryEncoderTokenizer, FLMRContextEncoderTokenizer, FLMRModelForRetrieval, as
   ``examples/example_use_preflmr.py`` 237-249 does), builds the query texts and pixel values as that example does
   (261-296), encodes queries with ``model.query`` and passages with ``model.doc``, and scores every (query,
   passage) pair with ``model.score``; three variants: the queries as they are, query-only (every image replaced by
   the example's black 336 x 336 image for a query without one, 288-289) and image-only (every question empty).
   Writes the JSON fixture::

       python3 -m venv /tmp/flmr-venv
       /tmp/flmr-venv/bin/pip install torch==2.13.0          # the CPU build, first
       /tmp/flmr-venv/bin/pip install transformers==4.49.0 pillow numpy
       git clone https://github.com/LinWeizheDragon/FLMR /tmp/flmr-src   # or: git archive of the snapshot
       /tmp/flmr-venv/bin/pip install --no-deps /tmp/flmr-src
       /tmp/flmr-venv/bin/python scripts/preflmr_reference.py score /tmp/preflmr-ref \\
           tests/retrieve/data/preflmr_reference.json

   The package's top-level ``flmr/__init__.py`` imports its ColBERT search engine, whose configuration classes do
   not import on Python 3.11 (a dataclass with a mutable default); the modelling package ``flmr.models.flmr`` is
   imported without it, its files unchanged.

Only the fixture is kept; the checkpoint is rebuilt by the test from the seed.

3. ``pixels`` (a venv with transformers 4.49, Pillow and numpy alone: the image processor needs no model): the
   pixel values the authors' example gives its model for an image in every mode PIL reads (``scripts/
   image_modes.py``): ``Image.open(path).convert("RGB")`` (example_use_preflmr.py:291) through transformers 4.49's
   ``CLIPImageProcessor`` (example_use_preflmr.py:250, 293) with ViT-bigG/14's settings (the processor's defaults:
   224 shortest edge, bicubic, centre crop 224, OpenAI CLIP's mean and std). Writes each case's mode and a
   sha256 of its float32 pixel values, for ``tests/retrieve/inputs/test_image_modes.py``::

       python3 -m venv /tmp/tf449 && /tmp/tf449/bin/pip install transformers==4.49.0 pillow==12.3.0 numpy
       /tmp/tf449/bin/python scripts/preflmr_reference.py pixels tests/retrieve/data/image_modes_reference.json
"""

import argparse
import json
import sys
from pathlib import Path

SEED = 5
SIZE = "tiny"
CHECKPOINT = "checkpoint"
PROCESSOR = "clip-image-processor"
VARIANTS = ("as_is", "query_only", "image_only")
PASSAGE_BATCH = 50


def export(work: Path) -> None:
    """The tiny checkpoint and the sample's plain inputs under ``work`` (this project's venv)."""
    root = Path(__file__).resolve().parents[1]
    sys.path[:0] = [str(root), str(root / "scripts")]
    from datasets import Image
    from tiny_models import build_preflmr
    from tiny_models import m2kr_sample_texts

    import m2kr

    work.mkdir(parents=True, exist_ok=True)
    build_preflmr(work / CHECKPOINT, SIZE, seed=SEED, texts=m2kr_sample_texts(root / "data" / "m2kr"))
    queries = m2kr.load("challenge_data").cast_column("image", Image(decode=False))
    passages = m2kr.load("challenge_passage")
    (work / "images").mkdir(exist_ok=True)
    rows = []
    for row in queries:
        path = None
        if row["image"] is not None:
            path = work / "images" / f"{row['question_id']}{Path(row['img_path']).suffix}"
            path.write_bytes(row["image"]["bytes"] or read_member(row["image"]["path"]))
        rows.append(
            {
                "id": row["question_id"],
                "instruction": row["instruction"],
                "question": row["question"],
                "image": path.name if path else None,
            }
        )
    inputs = {
        "queries": rows,
        "passages": [{"id": p, "text": t} for p, t in zip(passages["passage_id"], passages["passage_content"])],
    }
    (work / "inputs.json").write_text(json.dumps(inputs, ensure_ascii=False, indent=1), encoding="utf-8")


def read_member(path: str) -> bytes:
    """An image file's bytes as stored in the sample's split zip (read as datasets reads it)."""
    from datasets.utils.file_utils import xopen

    with xopen(path, "rb") as f:
        return f.read()


def authors_package():
    """LinWeizheDragon/FLMR's modelling package, imported from the installed ``flmr`` without its top-level
    ``__init__`` (see above)."""
    import importlib.machinery
    import types

    spec = importlib.machinery.PathFinder.find_spec("flmr")
    if spec is None:
        raise SystemExit("the authors' flmr package is not installed in this environment (see the docstring).")
    package = types.ModuleType("flmr")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules["flmr"] = package
    import flmr.models.flmr as modelling

    return modelling, package.__path__[0]


def score(work: Path, fixture: Path) -> None:
    """Every (query, passage) score of the three variants from the authors' code, into ``fixture``."""
    import os

    import torch
    import transformers
    from PIL import Image
    from transformers import AutoImageProcessor

    flmr, location = authors_package()
    checkpoint = str((work / CHECKPOINT).resolve())
    os.chdir(checkpoint)  # BertConfig.from_pretrained(transformer_mapping_config_base) reads it from here
    config = flmr.FLMRConfig.from_pretrained(checkpoint)
    query_tokenizer = flmr.FLMRQueryEncoderTokenizer.from_pretrained(
        checkpoint, text_config=config.text_config, subfolder="query_tokenizer"
    )
    context_tokenizer = flmr.FLMRContextEncoderTokenizer.from_pretrained(
        checkpoint, text_config=config.text_config, subfolder="context_tokenizer"
    )
    model, info = flmr.FLMRModelForRetrieval.from_pretrained(
        checkpoint, query_tokenizer=query_tokenizer, context_tokenizer=context_tokenizer, output_loading_info=True
    )
    model.eval()
    check_loaded(model, checkpoint, info)
    image_processor = AutoImageProcessor.from_pretrained(str(Path(checkpoint) / PROCESSOR))
    inputs = json.loads((work / "inputs.json").read_text(encoding="utf-8"))
    with torch.no_grad():
        passages = [p["text"] for p in inputs["passages"]]
        D, D_mask = [], []
        for start in range(0, len(passages), PASSAGE_BATCH):
            encoding = context_tokenizer(passages[start : start + PASSAGE_BATCH])
            out = model.doc(input_ids=encoding["input_ids"], attention_mask=encoding["attention_mask"])
            D.append(out.late_interaction_output)
            D_mask.append(out.context_mask)
        D, D_mask = torch.cat(D), torch.cat(D_mask)
        variants = {}
        for variant in VARIANTS:
            texts, pixel_values = [], []
            for query in inputs["queries"]:
                instruction = query["instruction"].strip()  # example_use_preflmr.py:261-271
                if instruction[-1] != ":":
                    instruction = instruction + ":"
                instruction = instruction.replace(":", config.mask_instruction_token)
                question = "" if variant == "image_only" else query["question"]
                texts.append(" ".join([instruction] + [""] + [question] + [""]))
                if variant == "query_only" or query["image"] is None:  # example_use_preflmr.py:288-291
                    image = Image.new("RGB", (336, 336), color="black")
                else:
                    image = Image.open(work / "images" / query["image"]).convert("RGB")
                pixel_values.append(image_processor(image, return_tensors="pt").pixel_values)
            encoding = query_tokenizer(texts)
            Q = model.query(
                input_ids=encoding["input_ids"],
                attention_mask=encoding["attention_mask"],
                pixel_values=torch.stack(pixel_values, dim=0),
            ).late_interaction_output
            variants[variant] = [model.score(Q[i : i + 1], D, D_mask).tolist() for i in range(len(Q))]
    result = {
        "what": "PreFLMR scores of every (query, passage) pair of the bundled M2KR sample from the authors' code",
        "made_by": "scripts/preflmr_reference.py",
        "checkpoint": {"builder": "scripts/tiny_models.py build_preflmr", "size": SIZE, "seed": SEED},
        "authors_code": {"package": location, "transformers": transformers.__version__, "torch": torch.__version__},
        "query_ids": [q["id"] for q in inputs["queries"]],
        "passage_ids": [p["id"] for p in inputs["passages"]],
        "scores": {variant: [[float(f"{s:.7g}") for s in row] for row in rows] for variant, rows in variants.items()},
    }
    fixture.parent.mkdir(parents=True, exist_ok=True)
    fixture.write_text(json.dumps(result, separators=(",", ":")) + "\n", encoding="utf-8")


def check_loaded(model, checkpoint: str, info: dict) -> None:
    """Every tensor of the authors' model equals the checkpoint's (under its name or an alias): none left random."""
    from safetensors import safe_open

    index = json.loads((Path(checkpoint) / "model.safetensors.index.json").read_text(encoding="utf-8"))
    stored = {}
    for name, shard in index["weight_map"].items():
        with safe_open(str(Path(checkpoint) / shard), "pt") as f:
            stored[name] = f.get_tensor(name)
    state = model.state_dict()
    unmatched = [
        name
        for name, tensor in state.items()
        if not any(name_ in stored and stored[name_].equal(tensor) for name_ in aliases(name))
    ]
    if unmatched or info["unexpected_keys"]:
        raise SystemExit(f"the authors' model did not load every tensor: {unmatched[:5]} {info['unexpected_keys'][:5]}")


def aliases(name: str) -> list:
    """The names one tensor of the authors' model may be stored under (their shared modules)."""
    names = {name}
    for a, b in (("bert_model.", "text_model."), ("query_vision", "context_vision")):
        for x, y in ((a, b), (b, a)):
            names |= {n.replace(x, y) for n in list(names)}
    return sorted(names)


def pixels(fixture: Path) -> None:
    """Each image mode's pixel values as the authors' example makes them, under transformers 4.49 (see above)."""
    import hashlib

    import numpy as np
    import PIL
    import transformers
    from image_modes import cases
    from image_modes import opened
    from transformers import CLIPImageProcessor

    processor = CLIPImageProcessor()  # laion/CLIP-ViT-bigG-14-laion2B-39B-b160k's preprocessor_config.json
    result = {
        "what": "PreFLMR's query pixel values of an image in each mode, as the authors' example makes them",
        "made_by": "scripts/preflmr_reference.py pixels",
        "versions": {"transformers": transformers.__version__, "pillow": PIL.__version__, "numpy": np.__version__},
        "cases": {},
    }
    for name, case in cases().items():
        image = opened(case)
        values = processor(image.convert("RGB"), return_tensors="np")["pixel_values"][0].astype(np.float32)
        result["cases"][name] = {
            "mode": image.mode,
            "shape": list(values.shape),
            "sha256": hashlib.sha256(np.ascontiguousarray(values).tobytes()).hexdigest(),
            "sum": float(values.sum(dtype=np.float64)),
        }
    fixture.parent.mkdir(parents=True, exist_ok=True)
    fixture.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    """``export WORK``, ``score WORK FIXTURE`` or ``pixels FIXTURE``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    sub.add_parser("export").add_argument("work", type=Path)
    scoring = sub.add_parser("score")
    scoring.add_argument("work", type=Path)
    scoring.add_argument("fixture", type=Path)
    sub.add_parser("pixels").add_argument("fixture", type=Path)
    args = parser.parse_args(argv)
    if args.step == "export":
        export(args.work)
    elif args.step == "pixels":
        pixels(args.fixture.resolve())
    else:
        score(args.work.resolve(), args.fixture.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
