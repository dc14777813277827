"""PreFLMR's model half: the checkpoint read by name (missing, unexpected and aliased tensors, one file or shards),
its config (bert-base-uncased offline, unsupported values), the inputs' rules on hand-made cases, and the encoder's
batches (batch-size invariance, DataLoader workers' batches equal to in-process ones)."""

import json
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from PIL import Image  # noqa: E402
from tiny_models import PREFLMR_PROCESSOR  # noqa: E402
from tiny_models import build_preflmr  # noqa: E402
from tiny_models import preflmr_config  # noqa: E402

from mmrhub.retrieve.data_loading import Row  # noqa: E402
from mmrhub.retrieve.late_interaction.preflmr import inputs  # noqa: E402
from mmrhub.retrieve.late_interaction.preflmr.checkpoint import INDEX  # noqa: E402
from mmrhub.retrieve.late_interaction.preflmr.checkpoint import SINGLE  # noqa: E402
from mmrhub.retrieve.late_interaction.preflmr.config import read_config  # noqa: E402
from mmrhub.retrieve.late_interaction.preflmr.encoder import build_preflmr_encoder  # noqa: E402

TEXTS = ["using the provided image obtain documents that address the subsequent question", "who designed this"]
INSTRUCTION = "Using the provided image, obtain documents that address the subsequent question: "


@pytest.fixture(scope="module")
def checkpoint(built):
    return built(build_preflmr, "tiny", texts=TEXTS)


def load(folder):
    return build_preflmr_encoder(str(folder), image_processor=str(folder / PREFLMR_PROCESSOR))


@pytest.fixture(scope="module")
def encoder(checkpoint):
    return load(checkpoint)


def query_rows(count: int) -> list:
    """Queries of several shapes: with and without question, image, instruction ending in ":"."""
    rows = []
    for i in range(count):
        image = None if i % 5 == 4 else Image.new("RGB", (40 + 7 * i, 30 + 3 * i), (9 * i % 255, 80, 200 - 5 * i))
        question = None if i % 3 == 0 else "who designed this " + "castle " * (i % 4)
        instruction = INSTRUCTION if i % 2 else "Identify the document that is connected to this image."
        rows.append(Row(f"q{i}", question, image, instruction))
    return rows


def passage_rows(count: int) -> list:
    return [Row(f"p{i}", "the castle, designed by " + "an architect. " * (i % 9), None) for i in range(count)]


def copy(checkpoint, tmp_path):
    return shutil.copytree(checkpoint, tmp_path / "copy")


def rewrite(folder, change) -> None:
    """Rewrite the shards and index of ``folder`` with ``change(tensors)`` applied to all tensors at once."""
    from safetensors.torch import load_file
    from safetensors.torch import save_file

    index = json.loads((folder / INDEX).read_text())
    tensors = {}
    for shard in sorted(set(index["weight_map"].values())):
        tensors.update(load_file(folder / shard))
        (folder / shard).unlink()
    tensors = change(tensors)
    save_file(tensors, folder / "model-00001-of-00001.safetensors")
    index["weight_map"] = {name: "model-00001-of-00001.safetensors" for name in tensors}
    (folder / INDEX).write_text(json.dumps(index))


def vectors(encoder, rows, role):
    return encoder.encode(encoder.collate(role)(rows), role)


# the checkpoint


def test_checkpoint_has_the_real_layout(checkpoint):
    index = json.loads((checkpoint / INDEX).read_text())
    names = set(index["weight_map"])
    assert len(set(index["weight_map"].values())) > 1  # sharded
    assert "query_text_encoder.bert_model.embeddings.word_embeddings.weight" in names
    assert not any(".text_model." in name for name in names)  # FLMRTextModel's alias stored once
    assert "context_vision_encoder.vision_model.vision_model.embeddings.class_embedding" in names
    assert not any(name.startswith(("query_vision_encoder.", "query_vision_projection.")) for name in names)
    assert "transformer_mapping_network.layer.0.crossattention.self.query.weight" in names
    config = json.loads((checkpoint / "config.json").read_text())
    assert config["model_type"] == "flmr" and config["separate_query_and_context_text_encoder"] is True
    for sub in ("query_tokenizer", "context_tokenizer"):
        vocab = (checkpoint / sub / "vocab.txt").read_text().split("\n")
        assert {"[unused0]", "[unused1]", "[MASK]", ":", ".", ","} <= set(vocab)


def test_missing_tensor_is_named(checkpoint, tmp_path):
    folder = copy(checkpoint, tmp_path)
    name = "transformer_mapping_output_linear.bias"
    rewrite(folder, lambda tensors: {k: v for k, v in tensors.items() if k != name})
    with pytest.raises(
        ValueError,
        match=r"1 tensor\(s\) of the model are not in the checkpoint: "
        r"mapping_output_linear\.bias \(stored as transformer_mapping_output_linear\.bias\)",
    ):
        load(folder)


def test_unexpected_tensor_is_named(checkpoint, tmp_path):
    folder = copy(checkpoint, tmp_path)
    rewrite(folder, lambda tensors: {**tensors, "query_text_encoder.extra.weight": torch.zeros(2)})
    with pytest.raises(
        ValueError,
        match=r"1 tensor\(s\) in the checkpoint have no place in the model its "
        r"config\.json describes: query_text_encoder\.extra\.weight\.",
    ):
        load(folder)


def test_shape_mismatch_is_named(checkpoint, tmp_path):
    folder = copy(checkpoint, tmp_path)
    name = "context_text_encoder_linear.weight"
    rewrite(folder, lambda tensors: {**tensors, name: torch.zeros(3, 3)})
    with pytest.raises(ValueError, match=rf"{name} has shape \(3, 3\); the model's config\.json gives \(16, 32\)"):
        load(folder)


def test_aliased_names_accepted(checkpoint, encoder, tmp_path):
    # the text encoders stored as text_model, the shared vision tower and projection under the query side's names
    def rename(tensors):
        renamed = {}
        for name, tensor in tensors.items():
            name = name.replace(".bert_model.", ".text_model.")
            name = name.replace("context_vision_", "query_vision_")
            renamed[name] = tensor
        return renamed

    folder = copy(checkpoint, tmp_path)
    rewrite(folder, rename)
    aliased = load(folder)
    rows = query_rows(3)
    for ours, theirs in zip(vectors(encoder, rows, "queries"), vectors(aliased, rows, "queries")):
        assert torch.equal(ours, theirs)


def test_single_file_checkpoint(checkpoint, encoder, tmp_path):
    from safetensors.torch import load_file
    from safetensors.torch import save_file

    folder = copy(checkpoint, tmp_path)
    index = json.loads((folder / INDEX).read_text())
    tensors = {}
    for shard in sorted(set(index["weight_map"].values())):
        tensors.update(load_file(folder / shard))
        (folder / shard).unlink()
    (folder / INDEX).unlink()
    save_file(tensors, folder / SINGLE)
    rows = passage_rows(3)
    assert torch.equal(vectors(load(folder), rows, "corpus")[0], vectors(encoder, rows, "corpus")[0])


# the config


def write_config(folder, config) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    for sub in ("query_tokenizer", "context_tokenizer"):
        (folder / sub).mkdir(exist_ok=True)
        (folder / sub / "tokenizer_config.json").write_text("{}")


def test_vit_g_config_resolves_bert_base_uncased_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    write_config(tmp_path, preflmr_config("vit-g", 30522))
    config = read_config(tmp_path)
    assert config.mapping["hidden_size"] == 768 and config.mapping["num_attention_heads"] == 12
    assert config.mapping["intermediate_size"] == 3072 and config.mapping["num_hidden_layers"] == 1
    assert config.vision["hidden_size"] == 1664 and config.vision["num_hidden_layers"] == 48
    # absent from the tokenizers' files: the authors' class defaults
    assert (config.query_maxlen, config.doc_maxlen) == (32, 512)
    assert config.vision_model_version == "laion/CLIP-ViT-bigG-14-laion2B-39B-b160k"


def test_values_come_from_the_files(checkpoint, tmp_path):
    folder = copy(checkpoint, tmp_path)
    config = json.loads((folder / "config.json").read_text())
    config.update(dim=8, mask_instruction_token=None, transformer_mapping_cross_attention_length=5)
    (folder / "config.json").write_text(json.dumps(config))
    settings = json.loads((folder / "query_tokenizer" / "tokenizer_config.json").read_text())
    (folder / "query_tokenizer" / "tokenizer_config.json").write_text(json.dumps({**settings, "query_maxlen": 20}))
    read = read_config(folder)
    assert (read.dim, read.mask_instruction_token, read.cross_attention_length, read.query_maxlen) == (8, None, 5, 20)


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("context_concat_output_from_vision_encoder", True, "false"),
        ("use_vision_encoder", False, "true"),
    ],
)
def test_unsupported_value_is_one_line(tmp_path, key, value, expected):
    write_config(tmp_path, {**preflmr_config("vit-g", 30522), key: value})
    with pytest.raises(ValueError, match=rf"config\.json: {key} is not supported here; expected {expected}"):
        read_config(tmp_path)


def test_mapping_base_folder_is_read(checkpoint):
    config = read_config(checkpoint)  # "mapping_base", a folder beside config.json holding the tiny geometry
    assert config.mapping["hidden_size"] == 32 and config.mapping["num_attention_heads"] == 2


# the inputs


@pytest.mark.parametrize(
    ("instruction", "question", "expected"),
    [
        ("  Find the document.  ", "who?", "Find the document.:  who? "),  # stripped, ":" appended, the question
        ("Retrieve: the page:", None, "Retrieve: the page:   "),  # ends in ":" already; no question read as empty
        (None, "who?", ":  who? "),
    ],
)
def test_query_text(instruction, question, expected):
    assert inputs.query_text(instruction, question, ":") == expected


def test_query_text_replaces_every_colon_by_the_instruction_token():
    assert inputs.query_text("a: b", "q", "[SEP]") == "a[SEP] b[SEP]  q "


def test_query_tokens(encoder):
    ids, attention = inputs.query_tokens(encoder.query_tokenizer, ["who designed this"], 8)
    tokens = encoder.query_tokenizer.convert_ids_to_tokens(ids[0])
    assert tokens == ["[CLS]", "[unused0]", "who", "designed", "this", "[SEP]", "[MASK]", "[MASK]"]
    assert attention[0].tolist() == [1, 1, 1, 1, 1, 1, 0, 0]


def test_query_mask_masks_the_instruction_keeps_mask_padding():
    # [CLS]=2, [unused0]=5, words 10-12, ":"=7, words 13-14, [SEP]=3, [MASK]=4 padding
    ids = torch.tensor([[2, 5, 10, 11, 7, 13, 7, 14, 3, 4, 4]])
    kept = inputs.query_mask(ids, instruction_id=7, skip_ids=())
    assert kept[0].int().tolist() == [1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1]  # after the FIRST ":" all kept
    assert inputs.query_mask(ids, 7, skip_ids=(13, 4))[0].int().tolist() == [1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0]


def test_query_mask_without_instruction_token_keeps_all_but_pad():
    ids = torch.tensor([[2, 5, 10, 11, 3, 0], [2, 5, 7, 3, 4, 4]])
    assert inputs.query_mask(ids, 7, ())[0].int().tolist() == [1, 1, 1, 1, 1, 0]  # no ":" found: kept (MF:713-716)
    assert inputs.query_mask(ids, None, ())[1].int().tolist() == [1, 1, 1, 1, 1, 1]


def test_passage_tokens_and_mask(encoder):
    tokenizer = encoder.context_tokenizer
    ids, attention = inputs.passage_tokens(tokenizer, ["who designed, this.", "who"], 512)
    assert tokenizer.convert_ids_to_tokens(ids[0]) == [
        "[CLS]",
        "[unused1]",
        "who",
        "designed",
        ",",
        "this",
        ".",
        "[SEP]",
    ]
    assert attention[1].tolist() == [1, 1, 1, 1, 0, 0, 0, 0]  # padded to the batch's longest
    kept = inputs.passage_mask(torch.from_numpy(ids), inputs.punctuation_ids(tokenizer))
    assert kept[0].int().tolist() == [1, 1, 1, 1, 0, 1, 0, 1]
    assert kept[1].int().tolist() == [1, 1, 1, 1, 0, 0, 0, 0]
    ids, _ = inputs.passage_tokens(tokenizer, ["who designed this " * 20], 10)
    assert ids.shape == (1, 10)


def test_missing_image_is_the_authors_black_square():
    image = inputs.query_image(None)
    assert image.size == (336, 336) and image.getextrema() == ((0, 0), (0, 0), (0, 0))


# the encoder


def test_vectors_unit_where_kept_zero_where_masked(encoder):
    for role, rows in (("queries", query_rows(6)), ("corpus", passage_rows(6))):
        found, kept = vectors(encoder, rows, role)
        norms = found.norm(dim=-1)
        assert found.dtype == torch.float32 and kept.dtype == torch.bool
        assert torch.allclose(norms[kept], torch.ones(int(kept.sum())), atol=1e-5)
        assert torch.all(norms[~kept] == 0)
    queries, kept = vectors(encoder, query_rows(2), "queries")
    assert queries.shape == (2, 32 + 32 + 4, 16)  # query_maxlen, the MLP's 32, one per patch (28/14)^2
    assert kept[:, 32:].all()


@pytest.mark.parametrize("role", [pytest.param("queries", marks=pytest.mark.slow), "corpus"])
def test_batch_size_does_not_change_vectors(encoder, role):
    rows = query_rows(32) if role == "queries" else passage_rows(32)

    def batched(size, count=32):
        found = []
        for start in range(0, count, size):
            part, kept = vectors(encoder, rows[start : min(start + size, count)], role)
            found += [row[mask] for row, mask in zip(part, kept)]  # kept tokens: passages pad per batch
        return found

    whole = batched(32)
    for size, count in ((7, 32), (1, 8)):  # batches of one for the first 8 rows (each a forward pass)
        for one, other in zip(whole[:count], batched(size, count), strict=True):
            assert one.shape == other.shape
            assert torch.allclose(one, other, atol=1e-5)


@pytest.mark.parametrize("role", ["queries", "corpus"])
def test_worker_batches_equal_in_process_ones(encoder, role):
    rows = query_rows(8) if role == "queries" else passage_rows(8)
    collate = encoder.collate(role)
    loader = torch.utils.data.DataLoader(rows, batch_size=4, num_workers=2, collate_fn=collate)
    from_workers = list(loader)
    for start, batch in zip((0, 4), from_workers):
        here = collate(rows[start : start + 4])
        assert batch["ids"] == here["ids"]
        compared = [
            key for key in ("input_ids", "attention_mask", "token_mask", "pixel_values", "tokens") if key in here
        ]
        assert compared == (
            ["input_ids", "attention_mask", "token_mask", "pixel_values"] if role == "queries" else ["tokens"]
        )
        for key in compared:
            if key == "tokens":
                assert np.array_equal(batch[key].array, here[key].array)
            elif here[key] is not None:
                assert torch.equal(batch[key], here[key]), key


def test_passages_cross_as_one_packed_array_and_encode_as_the_tokenizer_gives_them(encoder, monkeypatch):
    """A passage batch is one (2, B, T) int32 array of ids and attention (batches.TokenBatch), pinned once by the
    DataLoader's pin-memory thread; encoded, it gives the vectors of the tokenizer's own int64 tensors with the
    kept-mask the authors compute from the ids (MF:1389-1391)."""
    from torch.utils.data._utils.pin_memory import pin_memory

    rows = passage_rows(5)
    batch = encoder.collate("corpus")(rows)
    assert sorted(batch) == ["ids", "tokens"] and batch["tokens"].array.dtype == np.int32
    assert batch["tokens"].array.shape[:2] == (2, 5) and len(batch["tokens"]) == 5
    ids, attention = inputs.passage_tokens(encoder.context_tokenizer, [row.text for row in rows], 512)
    assert np.array_equal(batch["tokens"].array, np.stack([ids, attention]))
    ids, attention = torch.from_numpy(ids).long(), torch.from_numpy(attention).long()
    mask = inputs.passage_mask(ids, encoder.passage_skip_ids)
    with torch.inference_mode():
        direct = encoder.model.passages(ids, attention, mask)
    vectors, kept = encoder.encode(batch, "corpus")
    assert torch.equal(kept, mask) and torch.equal(vectors, direct[0])
    pinned = []
    monkeypatch.setattr(torch.Tensor, "pin_memory", lambda self, *a: pinned.append(self.shape) or self.clone())
    moved = pin_memory(batch)  # what the pin-memory thread does to every batch of a CUDA run
    assert pinned == [(2, 5, ids.shape[1])] and moved["tokens"].pinned is not None
    assert torch.equal(encoder.encode(moved, "corpus")[0], direct[0])


def test_vit_g_geometry(tmp_path, monkeypatch):
    # the GPU check's checkpoint: PreFLMR_ViT-G's parts, counted without allocating them (meta device)
    from mmrhub.retrieve.late_interaction.preflmr.model import PreFLMRModel

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    write_config(tmp_path, preflmr_config("vit-g", 30522))
    with torch.device("meta"):
        model = PreFLMRModel(read_config(tmp_path))

    def millions(module):
        return round(sum(p.numel() for p in module.parameters()) / 1e6, 1)

    assert millions(model.vision) == 1842.8  # CLIP ViT-bigG/14's vision tower
    assert millions(model.context_text) == millions(model.query_text) == 109.5  # BERT-base, one per side
    assert millions(model.vision_projection) == 11.8  # 1664 -> 2048 -> 4096 (32 tokens of 128)
    assert len(model.mapping_network.layer) == 1
    assert millions(model) == 2084.6


def test_hub_download_takes_what_the_checkpoint_needs(checkpoint):
    # huggingface_hub's own filter, as snapshot_download applies allow_patterns: every file of the real layout,
    # nothing else of the repository (the authors' custom code, their C++ extension)
    from huggingface_hub.utils import filter_repo_objects

    from mmrhub.retrieve.late_interaction.preflmr.checkpoint import HUB_FILES

    layout = [p.relative_to(checkpoint).as_posix() for p in checkpoint.rglob("*") if p.is_file()]
    needed = [f for f in layout if not f.startswith(("clip-image-processor/", "mapping_base/", "random-weights"))]
    repository = [*needed, "model.safetensors", "modeling_flmr.py", "segmented_maxsim.cpp", "README.md"]
    taken = sorted(filter_repo_objects(repository, allow_patterns=HUB_FILES))
    assert taken == sorted([*needed, "model.safetensors"])
    assert any(f.startswith("model-00001-of-") for f in taken) and "model.safetensors.index.json" in taken


def test_query_skip_list_masks_tokens_and_cross_attention(checkpoint, encoder, tmp_path):
    # query_mask_input_ids_skip_list: those ids leave the query's tokens (MF:1107) and the mapping network's
    # cross-attention (MF:1143-1144)
    folder = copy(checkpoint, tmp_path)
    config = json.loads((folder / "config.json").read_text())
    who = encoder.query_tokenizer.convert_tokens_to_ids("who")
    (folder / "config.json").write_text(json.dumps({**config, "query_mask_input_ids_skip_list": [who]}))
    skipping = load(folder)
    rows = [Row("a", "who designed this", query_rows(1)[0].image, INSTRUCTION)]
    batch = skipping.collate("queries")(rows)
    assert not batch["token_mask"][batch["input_ids"] == who].any()
    (plain, plain_kept), (skipped, skipped_kept) = vectors(encoder, rows, "queries"), skipping.encode(batch, "queries")
    assert int(plain_kept.sum()) - int(skipped_kept.sum()) == 1
    image = slice(32 + 32, None)  # the mapping network's tokens
    assert not torch.allclose(plain[:, image], skipped[:, image], atol=1e-4)
    assert torch.allclose(plain[:, 32 : 32 + 32], skipped[:, 32 : 32 + 32])  # the CLS MLP's: no text involved


def test_the_config_chooses_which_tensors_are_read(checkpoint, encoder, tmp_path):
    # one text encoder for both sides (the query side reads the passages'); the query side's own vision tower and
    # projection (the passages' are stored but unused: passages are text)
    folder = copy(checkpoint, tmp_path)
    config = json.loads((folder / "config.json").read_text())
    config.update(separate_query_and_context_text_encoder=False, separate_query_and_context_vision_encoder=True)
    (folder / "config.json").write_text(json.dumps(config))

    def relayout(tensors):
        kept = {k: v for k, v in tensors.items() if not k.startswith("query_text_encoder")}
        for name, tensor in tensors.items():
            if name.startswith("context_vision_"):
                kept[name.replace("context_vision_", "query_vision_")] = tensor
                kept[name] = torch.zeros_like(tensor)  # never read
        return kept

    rewrite(folder, relayout)
    shared = load(folder)
    assert not hasattr(shared.model, "query_text")
    rows = query_rows(2)
    ours, theirs = vectors(encoder, rows, "queries")[0], vectors(shared, rows, "queries")[0]
    assert torch.equal(ours[:, 32:64], theirs[:, 32:64])  # the same (query-side) vision tower and projection
    assert not torch.allclose(ours[:, :32], theirs[:, :32])  # the passages' BERT now encodes the queries


def test_stored_position_ids_are_accepted(checkpoint, encoder, tmp_path):
    # checkpoints saved by older transformers keep BERT's and CLIP's position ids; the model makes its own
    extra = {
        "context_text_encoder.bert_model.embeddings.position_ids": torch.arange(512)[None],
        "context_vision_encoder.vision_model.vision_model.embeddings.position_ids": torch.arange(5)[None],
    }
    folder = copy(checkpoint, tmp_path)
    rewrite(folder, lambda tensors: {**tensors, **extra})
    rows = passage_rows(2)
    assert torch.equal(vectors(load(folder), rows, "corpus")[0], vectors(encoder, rows, "corpus")[0])


def test_the_configs_image_processor_is_checked_before_loading_when_the_hub_is_unreachable(checkpoint, monkeypatch):
    # With no --image-processor the config's vision_model_version is loaded: unreachable and not cached, that is one
    # line naming it at once, not huggingface_hub's retries (about 50 s offline) and its own error.
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr("mmrhub.retrieve.model_loading.hub_reachable", lambda: False)
    with pytest.raises(
        ConnectionError,
        match=r"^--image-processor \(the config's vision_model_version\) laion/CLIP-ViT-bigG-14-laion2B-39B-b160k: "
        r"the Hub cannot be reached and the model is not cached",
    ):
        build_preflmr_encoder(str(checkpoint))
