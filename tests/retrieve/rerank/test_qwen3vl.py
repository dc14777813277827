"""The Qwen3-VL-Embedding path (image + text as one input) with a tiny random Qwen3-VL.

transformers builds the Qwen3-VL processor only with torchvision installed, so this skips without it.
"""

import json

import pytest

pytest.importorskip("torchvision")
pytest.importorskip("sentence_transformers")

from _qwen3vl_reference import authors_inputs  # noqa: E402
from _retrieve_helpers import IMAGE_ONLY_QUERY  # noqa: E402
from _retrieve_helpers import SELF_QUERY  # noqa: E402
from _retrieve_helpers import retrieve  # noqa: E402
from _retrieve_helpers import top  # noqa: E402
from tiny_models import RERANKER_SYSTEM  # noqa: E402
from tiny_models import build_tiny_qwen3_vl_embedding  # noqa: E402
from tiny_models import build_tiny_qwen3_vl_reranker  # noqa: E402

from mmrhub.benchmarks import MIPR  # noqa: E402
from mmrhub.retrieve.data_loading import Row  # noqa: E402
from mmrhub.retrieve.images import RESIZE_RULE  # noqa: E402
from mmrhub.retrieve.presets import QWEN3_VL_EMBEDDING  # noqa: E402
from mmrhub.retrieve.presets import QWEN3_VL_RERANKER  # noqa: E402
from mmrhub.scoring.request import ScoringRequest  # noqa: E402
from mmrhub.scoring.score import read_valid_run  # noqa: E402


def test_fused_image_text_model(tmp_path, mipr_dir, capsys):
    model = build_tiny_qwen3_vl_embedding(tmp_path / "qwen")
    path, run, stats = retrieve(
        tmp_path,
        "mipr",
        "--data-dir",
        mipr_dir["dir"],
        "--backend",
        "sentence-transformers",
        "--model",
        model,
        "--top-k",
        10,
        "--batch-size",
        8,
        "--cache-dir",
        tmp_path / "cache",
    )
    read_valid_run(ScoringRequest(MIPR, str(mipr_dir["dir"])), MIPR.read_truth(mipr_dir["dir"]), path)
    manifest = json.loads(next((tmp_path / "cache").glob("*/entry.json")).read_text())["meta"]
    assert manifest["encoder"]["fused"] is True and manifest["num_items"] == mipr_dir["num_corpus"]
    assert top(run, SELF_QUERY)[0]["did"] == mipr_dir["self_item"]
    assert len(top(run, IMAGE_ONLY_QUERY)) == 10
    assert stats["phases"]["embed queries"]["items"] == mipr_dir["num_queries"]


def conversations(encoder) -> list:
    """The conversations the processor renders, recorded as the encoder hands them over."""
    seen = []
    processor = encoder.module.processor
    render = processor.apply_chat_template

    def recording(messages, *args, **kwargs):
        seen.extend(messages)
        return render(messages, *args, **kwargs)

    processor.apply_chat_template = recording
    return seen


def tiny_encoder(tmp_path, **overrides):
    from mmrhub.retrieve.encoders import build_encoder
    from mmrhub.retrieve.options import ModelSettings

    model = build_tiny_qwen3_vl_embedding(tmp_path / "qwen")
    settings = ModelSettings(**{"preset": "qwen3-vl-embedding", **overrides}).resolve(str(model), "embedding")
    return build_encoder("sentence-transformers", str(model), settings)


def test_embedding_conversation_is_the_authors(tmp_path):
    from PIL import Image

    from mmrhub.retrieve.encoders import CORPUS
    from mmrhub.retrieve.encoders import QUERIES

    encoder = tiny_encoder(tmp_path, document_instruction="Represent the product")
    seen = conversations(encoder)
    image = Image.new("RGB", (64, 48), "red")
    encoder.encode(encoder.prepare([Row("q", "除垢剂", image)], QUERIES), QUERIES)
    encoder.encode(encoder.prepare([Row("d", None, image)], CORPUS), CORPUS)
    query, document = seen
    assert query[0] == {"role": "system", "content": [{"type": "text", "text": QWEN3_VL_EMBEDDING.query_instruction}]}
    assert [item["type"] for item in query[1]["content"]] == ["image", "text"]
    assert query[1]["content"][1]["text"] == "除垢剂"
    # the authors' rule: an instruction not ending in punctuation gets a '.'
    assert document[0]["content"][0]["text"] == "Represent the product."
    assert [item["type"] for item in document[1]["content"]] == ["image"]


@pytest.mark.parametrize(
    ("size", "max_pixels", "grid"),
    [((640, 480), None, [1, 30, 40]), ((640, 480), 16 * 32 * 32, [1, 6, 8]), ((20, 20), None, [1, 4, 4])],
)
def test_pixel_budget_sets_the_image_grid(tmp_path, size, max_pixels, grid):
    from PIL import Image

    encoder = tiny_encoder(tmp_path, max_pixels=max_pixels)
    image = encoder.prepare_image("x", Image.new("RGB", size))
    features = encoder.module.preprocess([{"image": image, "text": "x"}])
    # (t, h, w) patches of 16 pixels: 4,096 <= pixels <= max_pixels (1,843,200 by default), rounded to 32
    assert features["image_grid_thw"].tolist() == [grid]


def test_max_length_cuts_text_never_image_tokens(tmp_path, mipr_dir):
    from PIL import Image

    from mmrhub.retrieve.encoders import QUERIES

    encoder = tiny_encoder(tmp_path, max_length=120)
    image = Image.new("RGB", (64, 64))
    long_text = "除垢剂" * 50
    fitted = encoder.fit({"image": image, "text": long_text}, encoder.prompts[QUERIES])
    features = encoder.module.preprocess([fitted], prompt=encoder.prompts[QUERIES])
    assert features["input_ids"].shape[1] <= 120 and long_text.startswith(fitted["text"])
    assert encoder.encode(encoder.prepare([Row("q", long_text, image)], QUERIES), QUERIES).shape[0] == 1
    with pytest.raises(ValueError, match="--max-length 5: an input takes"):
        tiny_encoder(tmp_path / "short", max_length=5).fit({"image": image, "text": "x"}, None)


# --- the reranker -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def qwen_reranker(tmp_path_factory):
    """A tiny Qwen3-VL reranker in a folder whose own name gives the preset, as a downloaded copy's would."""
    models = tmp_path_factory.mktemp("models")
    return build_tiny_qwen3_vl_reranker(models / "build").rename(models / "Qwen3-VL-Reranker-tiny")


def pairs_of_two_lengths():
    """Two (query, candidate) pairs as the rerank pipeline hands them over, (id, text, image) each: an image with its
    question, and an image alone, so that the batch is padded. Sides of 64 and 96 pixels: multiples of 32 inside the
    pixel budget, so neither side resizes."""
    from PIL import Image

    red, blue = Image.new("RGB", (64, 96), "red"), Image.new("RGB", (96, 64), "blue")
    return [
        (("q1", "家里水垢太多怎么办", red), ("d1", "柠檬酸除垢剂 500g", blue)),
        (("q2", "", blue), ("d2", "电水壶", red)),
    ]


def test_reranker_conversation_and_score_are_the_authors(qwen_reranker):
    import torch
    from transformers import AutoProcessor
    from transformers import Qwen3VLForConditionalGeneration

    from mmrhub.retrieve.options import ModelSettings
    from mmrhub.retrieve.rerank.model import Reranker

    settings = ModelSettings().resolve(str(qwen_reranker), "reranker")
    assert settings == QWEN3_VL_RERANKER  # the preset follows from the folder's name
    reranker = Reranker(str(qwen_reranker), settings)
    pairs = pairs_of_two_lengths()
    ours = reranker.collate()(pairs)

    processor = AutoProcessor.from_pretrained(qwen_reranker)
    theirs = authors_inputs(processor, pairs, QWEN3_VL_RERANKER.query_instruction)
    assert processor.tokenizer.padding_side == "left"
    assert ours["attention_mask"][1].tolist() != ours["attention_mask"][0].tolist()  # one of them is padded
    for key in ("input_ids", "attention_mask", "image_grid_thw"):
        assert torch.equal(ours[key], theirs[key]), key
    assert torch.allclose(ours["pixel_values"], theirs["pixel_values"])
    rendered = processor.tokenizer.decode(ours["input_ids"][1], skip_special_tokens=False)
    assert rendered.endswith(
        f"<Instruct>: {QWEN3_VL_RERANKER.query_instruction}<Query>:<|vision_start|>"
        + "<|image_pad|>" * 6
        + "<|vision_end|>\n<Document>:<|vision_start|>"
        + "<|image_pad|>" * 6
        + "<|vision_end|>电水壶<|im_end|>\n<|im_start|>assistant\n"
    )

    # Their score (:120-137): sigmoid of the last hidden state times lm_head[yes] - lm_head[no].
    model = Qwen3VLForConditionalGeneration.from_pretrained(qwen_reranker).eval()
    vocab = processor.tokenizer.get_vocab()
    with torch.no_grad():
        last = model.model(**theirs).last_hidden_state[:, -1]
        weight = model.lm_head.weight[vocab["yes"]] - model.lm_head.weight[vocab["no"]]
        expected = torch.sigmoid(last @ weight)
    assert torch.allclose(reranker.score(ours), expected, atol=1e-6)


M2KR_INSTRUCTION = "Identify the person in the image and retrieve the document that describes them."


@pytest.mark.parametrize("default_instruction", [False, True])
def test_reranker_gives_each_query_its_own_instruction_as_the_authors_evaluation(qwen_reranker, default_instruction):
    """eval_reranker.py passes each query's own instruction (:91, :131-135) as their loader strips it
    (image_i2t_eval.py:20: M2KR's rows end in a space), the default where it is empty (QR:351);
    --default-instruction gives every pair the default."""
    import torch
    from transformers import AutoProcessor

    from mmrhub.retrieve.options import ModelSettings
    from mmrhub.retrieve.rerank.model import Reranker

    asked = ModelSettings(default_instruction=default_instruction)
    settings = asked.resolve(str(qwen_reranker), "reranker")
    assert settings.row_instructions is not default_instruction
    reranker = Reranker(str(qwen_reranker), settings)
    assert reranker.identity["row_instructions"] is not default_instruction
    (query1, document1), (query2, document2) = pairs_of_two_lengths()
    own = [M2KR_INSTRUCTION + " ", ""]  # a trailing space, as M2KR's rows have; the second row has none
    rows = [(Row(*query1, own[0]), document1), (Row(*query2, own[1]), document2)]
    ours = reranker.collate()(rows)
    default = QWEN3_VL_RERANKER.query_instruction
    processor = AutoProcessor.from_pretrained(qwen_reranker)
    theirs = authors_inputs(
        processor, pairs_of_two_lengths(), [default] * 2 if default_instruction else [own[0].strip(), default]
    )
    for key in ("input_ids", "attention_mask", "image_grid_thw"):
        assert torch.equal(ours[key], theirs[key]), key
    assert torch.allclose(ours["pixel_values"], theirs["pixel_values"])
    rendered = processor.tokenizer.decode(ours["input_ids"][0], skip_special_tokens=False)
    assert f"<Instruct>: {default if default_instruction else M2KR_INSTRUCTION}<Query>:" in rendered
    # a batch of one instruction goes the one-prompt way: the same inputs
    alone = reranker.collate()(rows[:1])
    assert torch.equal(alone["input_ids"][0], ours["input_ids"][0][-alone["input_ids"].shape[1] :])


@pytest.mark.slow  # two reranks of the M2KR sample
def test_rerank_of_m2kr_records_which_instruction_it_gave(tmp_path, qwen_reranker, capsys):
    from mmrhub.benchmarks import M2KR
    from mmrhub.commands.rerank import build_parser
    from mmrhub.commands.rerank import rerank_options
    from mmrhub.retrieve.rerank.pipeline import run

    candidates = M2KR.sample_dir / "baseline" / "simulated_top5.json"
    argv = ["m2kr", "--candidates", str(candidates), "--model", str(qwen_reranker), "--top-n", "1"]
    argv += ["--num-workers", "0", "--no-cache", "--no-eval"]
    assert run(rerank_options(build_parser().parse_args([*argv, "--output", str(tmp_path / "own.json")]))) == 0
    meta = json.loads((tmp_path / "own.json.meta.json").read_text())
    assert meta["settings"]["row_instructions"] is True
    assert meta["instruction"].startswith("each query's own 'instruction' (the preset's, as QwenLM's eval_reranker.py")
    assert meta["settings"]["sources"]["row_instructions"].startswith("ER:91")
    assert "[rerank] <Instruct>: each query's own 'instruction'" in capsys.readouterr().out
    argv += ["--default-instruction", "--output", str(tmp_path / "default.json")]
    assert run(rerank_options(build_parser().parse_args(argv))) == 0
    meta = json.loads((tmp_path / "default.json.meta.json").read_text())
    assert meta["settings"]["row_instructions"] is False and meta["options"]["settings"]["default_instruction"]
    assert meta["instruction"] == repr(QWEN3_VL_RERANKER.query_instruction)
    own, default = json.loads((tmp_path / "own.json").read_text()), json.loads((tmp_path / "default.json").read_text())
    assert [entry["ranked"][0]["score"] for entry in own] != [entry["ranked"][0]["score"] for entry in default]


def test_rerank_and_its_metadata_with_the_preset(tmp_path, qwen_reranker, capsys):
    from _paths import MIPR_EMBEDDING
    from _paths import MIPR_SAMPLE

    from mmrhub.commands.rerank import build_parser
    from mmrhub.commands.rerank import rerank_options
    from mmrhub.retrieve.rerank.pipeline import run

    output = tmp_path / "run.json"
    candidates = MIPR_EMBEDDING
    argv = ["mipr", "--candidates", str(candidates), "--model", str(qwen_reranker), "--top-n", "3"]
    assert run(rerank_options(build_parser().parse_args([*argv, "--output", str(output), "--num-workers", "0"]))) == 0
    read_valid_run(ScoringRequest(MIPR), MIPR.read_truth(MIPR_SAMPLE), output)
    meta = json.loads((tmp_path / "run.json.meta.json").read_text())
    assert meta["preset"] == "qwen3-vl-reranker"
    settings = meta["settings"]
    assert (settings["system_prompt"], settings["query_instruction"]) == (
        RERANKER_SYSTEM,
        "Given a search query, retrieve relevant candidates that answer the query.",
    )
    assert (settings["min_pixels"], settings["max_pixels"], settings["max_length"]) == (4096, 1843200, 10240)
    assert settings["sources"]["max_pixels"] == "QR:21" and meta["versions"]["torchvision"]
    assert meta["model"]["image"] == {"min_pixels": 4096, "max_pixels": 1843200, "resize": RESIZE_RULE}
    assert f"{qwen_reranker} (preset: qwen3-vl-reranker)" in capsys.readouterr().out


def test_paper_baseline_end_to_end(tmp_path, qwen_reranker, capsys):
    """``baseline mipr --paper`` with tiny checkpoints of the paper's two models: the presets come from --paper (the
    folders' names say nothing), both runs are written apart, and our rows print beside the paper's."""
    import shutil

    from mmrhub.cli import main

    embedding = build_tiny_qwen3_vl_embedding(tmp_path / "embedding")
    reranker = shutil.copytree(qwen_reranker, tmp_path / "reranker" / "model")
    assert embedding.name == reranker.name == "model"
    runs, cache = tmp_path / "runs", tmp_path / "cache"
    argv = ["baseline", "mipr", "--paper", "--embedding-model", str(embedding), "--reranker-model", str(reranker)]
    assert main([*argv, "--num-workers", "0", "--output-dir", str(runs), "--cache-dir", str(cache)]) == 0
    out = capsys.readouterr().out.splitlines()

    # two folders called "model": the runs are told apart by role, and each says which preset made it
    names = ("mipr_model-embedding_top50.json", "mipr_model-reranked_top50.json")
    metas = [json.loads((runs / f"{name}.meta.json").read_text()) for name in names]
    assert [meta["preset"] for meta in metas] == ["qwen3-vl-embedding", "qwen3-vl-reranker"]
    assert metas[1]["candidates"] == str(runs / names[0])
    pools = [{e["qid"]: len(e["ranked"]) for e in json.loads((runs / name).read_text())} for name in names]
    assert set(pools[0].values()) == {50} and pools[1] == pools[0]
    assert f"{embedding} (preset: qwen3-vl-embedding); {reranker} (preset: qwen3-vl-reranker)" in out

    # the scores table, then the same rows beside the paper's: ours, the paper's, and ours minus theirs
    header = out.index("| System | nDCG@10 | R-L1@10 | Hit-L1@1 | Hit-L1@10 | SC-R-L1@10 | SC-R-L1@10* |")
    table = [line.split(" | ") for line in out[header + 2 : header + 5]]
    beside = out.index("Beside the MIPR paper's table:")
    assert out[beside + 1] == out[header]
    rows = [line.strip("|").split(" | ") for line in out[beside + 3 : beside + 12]]
    for system, published in enumerate(MIPR.published_table):
        ours, paper, difference = rows[3 * system : 3 * system + 3]
        name = table[system][0].lstrip("| ")
        assert (ours[0].strip(), paper[0].strip(), difference[0].strip()) == (
            f"{name} (ours)",
            f"{name} (paper)",
            "difference",
        )
        assert [float(value) for value in paper[1:]] == list(published.values())
        for mine, theirs, delta in zip(ours[1:], paper[1:], difference[1:]):
            assert float(delta) == pytest.approx(float(mine) - float(theirs), abs=0.011)
    assert len(out) == beside + 12


# --- images as the authors resize them ---------------------------------------------------------------------------


def varied_images():
    """Images whose resizing can go wrong: noise (every pixel counts), a screenshot's shape, a thin banner, the
    sample's 48-pixel products, transparency."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)

    def noise(width, height, channels=3):
        return Image.fromarray(rng.integers(0, 256, (height, width, channels), dtype=np.uint8))

    return {
        "screenshot 4000x1280": noise(4000, 1280),
        "banner 1000x10": noise(1000, 10),
        "product 48x48": noise(48, 48),
        "photo 701x499": noise(701, 499),
        "transparent 300x200": noise(300, 200, 4),
        "palette 90x60": noise(90, 60).convert("P"),
    }


def test_images_are_resized_as_the_authors_qwen_vl_utils_resizes_them(tmp_path):
    """Our pixels are the authors' pixels: their fetch_image (qwen-vl-utils, to_rgb + smart_resize + PIL resize)
    then the processor with do_resize=False, against our preparation and the model's preprocessing."""
    import torch

    vision_process = pytest.importorskip("qwen_vl_utils.vision_process")
    encoder = tiny_encoder(tmp_path)
    processor = encoder.module.processor
    for name, image in varied_images().items():
        element = {"image": image, "min_pixels": 4 * 32 * 32, "max_pixels": 1800 * 32 * 32}
        theirs = processor.image_processor(
            images=[vision_process.fetch_image(element, image_patch_size=16)], do_resize=False, return_tensors="pt"
        )
        ours = encoder.module.preprocess([{"image": encoder.prepare_image(name, image), "text": "x"}])
        assert ours["image_grid_thw"].tolist() == theirs["image_grid_thw"].tolist(), name
        assert torch.equal(ours["pixel_values"], theirs["pixel_values"]), name


def test_every_image_mode_reaches_the_processor_as_qwen_vl_utils_prepares_it(tmp_path):
    """Every mode PIL reads (scripts/image_modes.py, palettes and greys with a transparency index among them): the
    authors' qwen-vl-utils opens the file with PIL (vision_process.py:109), lays RGBA on white and converts any
    other mode with PIL's convert("RGB") (84-90), then resizes; their transformers 4.57 takes that RGB image's
    pixels as they are (image_transforms.py:794-795), where transformers 5 would lay a transparent colour that PIL
    keeps in ``info`` on white. Theirs: the processor given those pixels as an array; ours: our preparation of the
    image as the pipeline decodes it, through the model's preprocessing."""
    import numpy as np
    import torch
    from image_modes import cases
    from image_modes import opened

    from mmrhub.retrieve.images import decoded
    from mmrhub.retrieve.presets import EXIF_IGNORE

    vision_process = pytest.importorskip("qwen_vl_utils.vision_process")
    encoder = tiny_encoder(tmp_path)
    processor = encoder.module.processor
    transparent = 0
    for name, case in cases().items():
        theirs_image = vision_process.fetch_image(
            {"image": opened(case), "min_pixels": 4 * 32 * 32, "max_pixels": 1800 * 32 * 32}, image_patch_size=16
        )
        theirs = processor.image_processor(images=[np.array(theirs_image)], do_resize=False, return_tensors="pt")
        if theirs_image.info.get("transparency") is not None:  # transformers 5 given their image lays it on white
            transparent += 1
            on_white = processor.image_processor(images=[theirs_image], do_resize=False, return_tensors="pt")
            assert not torch.equal(on_white["pixel_values"], theirs["pixel_values"]), name
        mine = decoded({"path": None, "bytes": case}, EXIF_IGNORE) if isinstance(case, bytes) else case
        ours = encoder.module.preprocess([{"image": encoder.prepare_image(name, mine), "text": "x"}])
        assert ours["image_grid_thw"].tolist() == theirs["image_grid_thw"].tolist(), name
        assert torch.equal(ours["pixel_values"], theirs["pixel_values"]), name
    assert transparent == 4  # the cases whose transparent colour transformers 5 would have laid on white


def test_the_size_rule_is_qwen_vl_utils_smart_resize():
    import random

    from mmrhub.retrieve.images import budget_size

    vision_process = pytest.importorskip("qwen_vl_utils.vision_process")
    draw = random.Random(0)
    for _ in range(20_000):
        height = draw.choice([draw.randint(1, 64), draw.randint(1, 5000), draw.randint(1, 40_000)])
        width = min(max(1, int(height * 10 ** draw.uniform(-2.3, 2.3))), 200 * height)
        if max(height, width) / min(height, width) > 200:
            continue
        low, high = draw.choice([(4096, 1843200), (4096, 16384), (65536, 16777216)])
        assert budget_size(height, width, low, high) == vision_process.smart_resize(height, width, 32, low, high), (
            height,
            width,
        )


def test_one_bound_given_takes_the_other_from_the_checkpoint(tmp_path):
    """--preset none --max-pixels N: the lower bound is the checkpoint's processor's (32 x 32 in the tiny one)."""
    from PIL import Image

    encoder = tiny_encoder(tmp_path, preset="none", max_pixels=16384)
    assert encoder.identity["image"] == {"min_pixels": 1024, "max_pixels": 16384, "resize": RESIZE_RULE}
    assert encoder.prepare_image("x", Image.new("RGB", (20, 20))).size == (32, 32)


# --- M2KR: each query's own instruction in its system turn, as the authors evaluate image-to-text retrieval -------


def authors_conversation(text, image, instruction):
    """Their Qwen3VLEmbedder.format_model_input (qwen3_vl_embedding.py:220-326) for one image and one text at most,
    as their image-to-text evaluation calls it (image_i2i_vg_dataset.py:22-28: the query's text, image and task
    instruction): the instruction punctuated in the system turn, the image, then the text."""
    import unicodedata

    if instruction:
        instruction = instruction.strip()
        if instruction and not unicodedata.category(instruction[-1]).startswith("P"):
            instruction = instruction + "."
    content = [{"type": "image", "image": image, "min_pixels": 4 * 32 * 32, "max_pixels": 1800 * 32 * 32}]
    if text is not None:
        content.append({"type": "text", "text": text})
    return [
        {"role": "system", "content": [{"type": "text", "text": instruction or "Represent the user's input."}]},
        {"role": "user", "content": content},
    ]


def without_images(conversation):
    """A conversation with each image item reduced to its type (the pixels are compared apart)."""
    return [
        {**turn, "content": [{"type": "image"} if item["type"] == "image" else item for item in turn["content"]]}
        for turn in conversation
    ]


@pytest.fixture(scope="module")
def m2kr_queries():
    from mmrhub.benchmarks import M2KR
    from mmrhub.retrieve.data_loading import Items
    from mmrhub.retrieve.data_loading import load_side
    from mmrhub.retrieve.options import DataOptions

    side = load_side(DataOptions(M2KR), "queries")
    items = Items(side.dataset, side.table, "ignore", instructions=True)
    assert items.instruction_column == "instruction"
    rows = items.__getitems__(list(range(len(side.ids))))
    with_question = [row for row in rows if row.text][:3]
    image_only = [row for row in rows if not row.text][:3]
    assert with_question and image_only and len({row.instruction for row in with_question + image_only}) > 1
    return with_question + image_only


def test_m2kr_queries_get_their_own_instruction_as_the_authors_give_it(tmp_path, m2kr_queries):
    import torch

    from mmrhub.retrieve.encoders import QUERIES

    vision_process = pytest.importorskip("qwen_vl_utils.vision_process")
    encoder = tiny_encoder(tmp_path)
    assert encoder.row_instructions and encoder.identity["row_instructions"]
    seen = conversations(encoder)
    batch = encoder.prepare(m2kr_queries, QUERIES)
    processor = encoder.module.processor
    by_row = {}
    for part, start in zip(batch["parts"], (0, len(batch["parts"][0]["rows"]))):
        for offset, row in enumerate(part["rows"]):
            by_row[row] = (seen[start + offset], part["features"], offset)
    for position, row in enumerate(m2kr_queries):
        theirs = authors_conversation(row.text, row.image, row.instruction)
        ours, features, offset = by_row[position]
        assert without_images(ours) == without_images(theirs), row.id
        # the same text rendered, the same tokens, the same pixels
        rendered = [
            processor.apply_chat_template([c], add_generation_prompt=True, tokenize=False) for c in (ours, theirs)
        ]
        assert rendered[0] == rendered[1]
        image = vision_process.fetch_image(theirs[1]["content"][0], image_patch_size=16)
        alone = processor(text=rendered[1], images=[image], padding=True, do_resize=False, return_tensors="pt")
        length = int(alone["attention_mask"].sum())
        assert torch.equal(features["input_ids"][offset, :length], alone["input_ids"][0]), row.id
    # a question, when present, is the user text after the image; the instruction is the system turn
    asked = next(row for row in m2kr_queries if row.text)
    ours = by_row[m2kr_queries.index(asked)][0]
    assert ours[1]["content"][1] == {"type": "text", "text": asked.text}
    assert ours[0]["content"][0]["text"] == asked.instruction.strip()  # ':' or '.' already ends PreFLMR's


def test_a_query_instruction_given_overrides_the_rows_own(tmp_path, m2kr_queries):
    from mmrhub.retrieve.encoders import QUERIES

    encoder = tiny_encoder(tmp_path, query_instruction="Find the page")
    assert not encoder.row_instructions
    assert {encoder.row_prompt(row, QUERIES) for row in m2kr_queries} == {"Find the page."}
    mipr = tiny_encoder(tmp_path / "mipr")  # rows without an instruction: the preset's
    assert mipr.row_prompt(Row("q", "x", None), QUERIES) == QWEN3_VL_EMBEDDING.query_instruction


def test_own_conversations_are_sentence_transformers_own(tmp_path, m2kr_queries):
    """The per-row path builds the very conversations sentence-transformers builds from a prompt: with one
    instruction for all, both give the same tensors."""
    import torch

    encoder = tiny_encoder(tmp_path)
    items = [
        {"image": encoder.prepare_image(row.id, row.image), "text": row.text} if row.text else row.image
        for row in m2kr_queries[:3]
    ]
    prompt = "Retrieve the page."
    theirs = encoder.model.preprocess(items, prompt=prompt, task="query")
    ours = encoder.model.preprocess(encoder._conversations(items, [prompt] * len(items)), task="query")
    assert set(ours) == set(theirs)
    for key, value in theirs.items():
        assert torch.equal(ours[key], value) if isinstance(value, torch.Tensor) else ours[key] == value, key


def test_tiny_models_script_writes_a_qwen3_vl_pair_that_baseline_runs_on(tmp_path, capsys):
    """With torchvision, scripts/make_tiny_models.py writes a Qwen3-VL embedder and reranker named so that their
    presets follow; ``baseline`` (retrieve, rerank, one table) runs on them offline."""
    import subprocess
    import sys

    from _paths import ROOT

    from mmrhub.cli import main

    script = ROOT / "scripts" / "make_tiny_models.py"
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "tiny")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    made = json.loads((tmp_path / "tiny" / "tiny-models.json").read_text())
    assert made["backend"] == "sentence-transformers"
    argv = ["baseline", "mipr", "--embedding-model", made["embedding"], "--reranker-model", made["reranker"]]
    assert main([*argv, "--top-k", "10", "--num-workers", "0", "--output-dir", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert "(preset: qwen3-vl-embedding)" in out and "(preset: qwen3-vl-reranker)" in out
    assert "| Candidate-pool Oracle |" in out


def test_pixel_values_sent_compact_reach_the_model_unchanged(tmp_path):
    """On CUDA the workers send one frame of the processor's two identical ones, in the model's dtype; the device
    gets the very values back, and a bfloat16 model the very vectors."""
    import torch
    from PIL import Image

    from mmrhub.retrieve.encoders import QUERIES
    from mmrhub.retrieve.encoders import build_encoder
    from mmrhub.retrieve.model_inputs import FRAMES_KEY
    from mmrhub.retrieve.model_inputs import Compact
    from mmrhub.retrieve.model_inputs import to_device
    from mmrhub.retrieve.options import ModelSettings

    model = str(build_tiny_qwen3_vl_embedding(tmp_path / "qwen"))
    settings = ModelSettings(preset="qwen3-vl-embedding").resolve(model, "embedding")
    encoder = build_encoder("sentence-transformers", model, settings, dtype=torch.bfloat16)
    assert encoder.compact is None  # on CPU: nothing to save
    rows = [Row("a", "除垢剂", Image.new("RGB", (96, 64), "red")), Row("b", None, Image.new("RGB", (64, 64)))]
    whole = encoder.prepare(rows, QUERIES)
    encoder.compact = Compact.for_model(encoder.module, "cuda", torch.bfloat16)
    compact = encoder.prepare(rows, QUERIES)
    for part, sent in zip(whole["parts"], compact["parts"]):
        pixels, small = part["features"]["pixel_values"], sent["features"]["pixel_values"]
        assert small.dtype == torch.uint8 and small.numel() * 2 == pixels.numel() and FRAMES_KEY in sent["features"]
        restored = to_device(sent["features"], "cpu", encoder.compact)["pixel_values"]
        assert restored.dtype == torch.bfloat16 and torch.equal(restored, pixels.to(torch.bfloat16))
    assert torch.equal(encoder.encode(compact, QUERIES), encoder.encode(whole, QUERIES))


def test_one_frame_of_bytes_asked_of_the_processor_reaches_the_model_as_its_values(tmp_path, qwen_reranker):
    """Where sentence-transformers takes per-call processor keywords, the workers ask for one frame (temporal patch
    size 1) of the image's bytes (neither rescaled nor normalised) instead of making two frames of float32 values
    and comparing them; the device gets the very values the two-frame path gives, for a batch of two image sizes,
    rows with their own instructions, and the reranker's pairs."""
    import torch
    from PIL import Image

    from mmrhub.retrieve.encoders import QUERIES
    from mmrhub.retrieve.model_inputs import Compact
    from mmrhub.retrieve.model_inputs import to_device
    from mmrhub.retrieve.options import ModelSettings
    from mmrhub.retrieve.rerank.model import Reranker

    made = []  # (dtype, width) of the pixel values each processor call made

    class Seen(Compact):
        def __call__(self, features):
            made.append((features["pixel_values"].dtype, features["pixel_values"].shape[1]))
            return super().__call__(features)

    def device_values(prepare, compact, holder):
        holder.compact = compact
        batch = prepare()
        parts = [part["features"] for part in batch["parts"]] if "parts" in batch else [batch]
        return [to_device(features, "cpu", compact) for features in parts]

    def same(ways):
        first, *others = ways
        for other in others:
            for a, b in zip(first, other, strict=True):
                assert set(a) == set(b) and a["pixel_values"].dtype == torch.bfloat16
                for key in a:
                    assert torch.equal(a[key], b[key]) if isinstance(a[key], torch.Tensor) else a[key] == b[key], key

    def three_ways(module, prepare, holder):
        asked = Compact.for_model(module, "cuda", torch.bfloat16)
        assert asked.processing_kwargs == {
            "image": {"temporal_patch_size": 1, "do_rescale": False, "do_normalize": False}
        }
        asked.__class__ = Seen
        floats = Compact(torch.bfloat16, 2, asked.frame_size)  # one frame of float32 values, cast in the worker
        compared = Compact(torch.bfloat16, 2)  # two frames made and compared
        same([device_values(prepare, way, holder) for way in (asked, floats, compared)])

    encoder = tiny_encoder(tmp_path)  # the preset takes rows' own instructions
    assert encoder.row_instructions
    rows = [
        Row("a", "除垢剂", Image.new("RGB", (96, 64), "red"), "Find the product."),
        Row("b", "水垢", Image.effect_noise((64, 64), 40).convert("RGB"), "Retrieve a passage."),
        Row("c", None, Image.new("RGB", (64, 64), "blue")),
    ]
    three_ways(encoder.module, lambda: encoder.prepare(rows, QUERIES), encoder)

    reranker = Reranker(str(qwen_reranker), ModelSettings().resolve(str(qwen_reranker), "reranker"))
    pairs = reranker.collate()
    three_ways(reranker.model[0], lambda: pairs(pairs_of_two_lengths()), reranker)
    # bytes, one frame: two parts of the embedder's batch, one of the reranker's
    assert made == [(torch.uint8, 768)] * 3


@pytest.mark.slow
def test_the_gpu_check_runs_its_plumbing_on_cpu(tmp_path):
    """``SMOKE=1 bench/gpu_check.sh``: every step of the GPU check (random models of the real layout built and
    saved, embed MIPR and M2KR-shaped items, PreFLMR's encoders, rerank both ways, the feed bench, the later sizes,
    the table beside the FLOP model) on CPU with the tiny size; only the log and summary.json under $OUT."""
    import os
    import subprocess
    import sys

    from _paths import ROOT

    places = {name: str(tmp_path / name.lower()) for name in ("OUT", "WORK", "SITE")}
    env = dict(os.environ, SMOKE="1", PYTHON=sys.executable, **places)
    done = subprocess.run(
        ["bash", str(ROOT / "bench" / "gpu_check.sh")], env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "| what | measured | FLOP model | measured / model |" in done.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert {step["status"] for step in summary["steps"]} == {"ok"}
    measured = {row["label"].split(" (")[0] for row in summary["measured"]}
    assert {
        "embed tiny mipr, embed corpus",
        "embed tiny m2kr, embed queries",
        "rerank tiny m2kr whole, rerank",
    } <= measured
    assert {"preflmr tiny passages", "preflmr tiny queries", "preflmr tiny m2kr, embed corpus"} <= measured
    assert any(label.startswith("maxsim exact top-100 over 512 passages") for label in measured)
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["gpu_check.log", "summary.json"]


@pytest.mark.slow
def test_the_gpu_check_runs_only_the_parts_named(tmp_path):
    """``PARTS=rerank`` runs the data and the reranker's steps alone (a lent GPU's time spent on what is not measured
    yet): both paths on MIPR- and M2KR-shaped pairs, whose scores agree (float32 on CPU); a part it does not know
    ends the check at once, naming it."""
    import os
    import subprocess
    import sys

    from _paths import ROOT

    places = {name: str(tmp_path / name.lower()) for name in ("OUT", "WORK", "SITE")}
    script = ["bash", str(ROOT / "bench" / "gpu_check.sh")]
    env = dict(os.environ, SMOKE="1", PYTHON=sys.executable, **places)
    done = subprocess.run(script, env={**env, "PARTS": "rerank"}, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    runs = [f"{kind} {path}" for kind in ("mipr", "m2kr") for path in ("shared", "whole")]
    assert [(step["step"], step["status"]) for step in summary["steps"]] == [
        ("data", "ok"),
        ("build tiny reranker", "ok"),
        *[(f"{what} tiny {run}", "ok") for run in runs[:2] for what in ("rerank", "scores rerank")],
        ("agree tiny mipr", "ok"),
        *[(f"{what} tiny {run}", "ok") for run in runs[2:] for what in ("rerank", "scores rerank")],
        ("agree tiny m2kr", "ok"),
    ]
    assert [row["label"] for row in summary["measured"]] == [f"rerank tiny {run}, rerank" for run in runs]
    agreement = summary["agreement"]
    assert [row["runs"] for row in agreement] == [
        [f"rerank-tiny-{kind}-shared.json", f"rerank-tiny-{kind}-whole.json"] for kind in ("mipr", "m2kr")
    ]
    assert all(row["largest_score_difference"] < 1e-5 and row["pairs"] == 50 for row in agreement)
    assert all(row["queries_ranked_alike"] == row["queries"] == 1 for row in agreement)
    done = subprocess.run(script, env={**env, "PARTS": "rerank 8b"}, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.splitlines()[-1]) == (
        2,
        "gpu_check: PARTS names 8b; expected some of: pixels embed preflmr rerank feed embed8b rerank8b topk "
        "preflmr-full",
    )


@pytest.mark.slow
def test_the_gpu_check_runs_preflmr_at_full_size_in_a_call_of_its_own(tmp_path):
    """``PARTS=preflmr-full``: the checkpoint and M2KR data, PreFLMR end to end as ``baseline m2kr --paper`` runs it,
    its scores checked (tiny and few on CPU); no other step. With too little budget its steps are skipped, and the
    check exits 1 naming them."""
    import os
    import subprocess
    import sys

    from _paths import ROOT

    places = {name: str(tmp_path / name.lower()) for name in ("OUT", "WORK", "SITE")}
    script = ["bash", str(ROOT / "bench" / "gpu_check.sh")]
    env = dict(os.environ, SMOKE="1", PYTHON=sys.executable, PARTS="preflmr-full", **places)
    done = subprocess.run(script, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert [(step["step"], step["status"]) for step in summary["steps"]] == [
        ("build preflmr tiny + full m2kr data", "ok"),
        ("preflmr tiny full m2kr float32", "ok"),
        ("scores preflmr full", "ok"),
    ]
    assert [row["label"] for row in summary["measured"]] == [
        "preflmr tiny full m2kr float32, embed corpus",
        "preflmr tiny full m2kr float32, embed queries",
        "preflmr tiny full m2kr float32, search",
    ]
    assert [row["items"] for row in summary["measured"]] == [48, 8, 8]
    done = subprocess.run(script, env={**env, "BUDGET": "30"}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "== build preflmr tiny + full m2kr data: skipped (" in done.stdout
    assert (
        "did not run to their end: build preflmr tiny + full m2kr data (skipped: the budget was spent)"
        in (done.stdout.splitlines()[-1])
    )


@pytest.mark.parametrize("damage", ["one NaN weight", "an infinite tensor", "image_std of 0"])
@pytest.mark.parametrize("role", ["embedding", "reranker"])
def test_a_qwen3_vl_model_giving_nan_writes_nothing(tmp_path, role, damage, capsys):
    """Qwen3-VL-Embedding and Qwen3-VL-Reranker (their presets, by their folders' names) damaged as
    tests/helpers/_damaged_models.py damages a checkpoint: one line naming the model and the item, nothing written."""
    from _damaged_models import damaged_copy
    from _paths import MIPR_EMBEDDING

    from mmrhub.cli import main

    if role == "embedding":
        built, tensor, name = (
            build_tiny_qwen3_vl_embedding(tmp_path / "build"),
            "language_model.norm.weight",
            "Embedding",
        )
    else:
        built, tensor, name = (
            build_tiny_qwen3_vl_reranker(tmp_path / "build"),
            "model.language_model.norm.weight",
            "Reranker",
        )
    folder = damaged_copy(built, tmp_path / "models" / f"Qwen3-VL-{name}-tiny", damage, tensor)
    run = tmp_path / "runs" / "run.json"
    common = [
        "--model",
        str(folder),
        "--output",
        str(run),
        "--num-workers",
        "0",
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    if role == "embedding":
        argv = ["retrieve", "mipr", "--backend", "sentence-transformers", *common]
        item = "the corpus item '"
    else:
        argv = ["rerank", "mipr", "--candidates", str(MIPR_EMBEDDING), "--top-n", "3", *common]
        item = "the pair of query '"
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert f"[load model] preset qwen3-vl-{role}, chosen by the folder's name 'Qwen3-VL-{name}-tiny'" in captured.out
    (line,) = [line for line in captured.err.splitlines() if line.startswith("mmrhub ")]
    assert line.startswith(f"mmrhub {argv[0]}: error: {folder} gave NaN or infinite values for {item}")
    assert line.endswith("Nothing was written or cached. Check the model's files, or download them again.")
    assert [p for p in tmp_path.rglob("*") if p.is_file() and ("runs" in p.parts or "cache" in p.parts)] == []


@pytest.mark.slow
def test_the_gpu_check_fails_when_its_budget_skips_a_step(tmp_path):
    """A budget too short for the reranker's steps: they are skipped, and the check exits 1 naming them, rather
    than a summary without their figures passing for a whole one."""
    import os
    import subprocess
    import sys

    from _paths import ROOT

    places = {name: str(tmp_path / name.lower()) for name in ("OUT", "WORK", "SITE")}
    env = dict(os.environ, SMOKE="1", PYTHON=sys.executable, PARTS="rerank", BUDGET="36", **places)
    done = subprocess.run(
        ["bash", str(ROOT / "bench" / "gpu_check.sh")], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    statuses = {step["step"]: step["status"] for step in summary["steps"]}
    assert statuses["build tiny reranker"] == "skipped" and summary["measured"] == []
    assert "(skipped: the budget was spent)" in done.stdout
    assert "did not run to their end: " in done.stdout.splitlines()[-1]
