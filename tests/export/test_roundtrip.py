"""An exported repo loads with plain ``load_dataset`` (latest datasets) as exactly the builder's rows and features."""

import datasets
import pyarrow.parquet as pq
import pytest
import yaml
from _export_helpers import DEFAULTS
from _export_helpers import SPLITS
from _export_helpers import builder_table
from _export_helpers import embedded_expected
from datasets import get_dataset_config_names
from datasets import get_dataset_split_names
from datasets import load_dataset
from datasets.info import DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.export.atomic import MARKER

CASES = [
    (benchmark, config) for benchmark in ("mipr", "m2kr") for config in BENCHMARKS[benchmark].builder().CONFIG_NAMES
]


@pytest.mark.parametrize("benchmark,config", CASES)
def test_load_dataset_returns_the_builders_rows_and_features(exported, benchmark, config):
    out = exported(benchmark)
    loaded = load_dataset(str(out), config, split=SPLITS[benchmark])
    builder = BENCHMARKS[benchmark].builder().load(config)
    assert loaded.features == builder.features
    expected = embedded_expected(builder_table(benchmark, config))
    got = loaded.with_format("arrow")[:]
    assert got.schema.remove_metadata() == expected.schema.remove_metadata()
    assert got.num_rows == expected.num_rows > 0
    assert got.to_pylist() == expected.to_pylist()  # every column, image bytes included


def test_images_are_embedded_and_named(exported):
    corpus = load_dataset(str(exported("mipr")), "corpus", split="test").cast_column(
        "image", datasets.Image(decode=False)
    )
    first, last = corpus[0], corpus[-1]
    assert first["image"]["path"] == first["pict_url"] and last["image"]["path"] == last["pict_url"]
    assert (
        first["image"]["bytes"]
        == (BENCHMARKS["mipr"].builder().SAMPLE_DIR / "images/product_images" / first["pict_url"]).read_bytes()
    )
    assert corpus.cast_column("image", datasets.Image())[len(corpus) // 2]["image"].size[0] > 0


@pytest.mark.parametrize("benchmark", ["mipr", "m2kr"])
def test_what_the_viewer_does_works(exported, benchmark):
    out, module, split = str(exported(benchmark)), BENCHMARKS[benchmark].builder(), SPLITS[benchmark]
    assert get_dataset_config_names(out) == sorted(module.CONFIG_NAMES)
    for config in module.CONFIG_NAMES:
        assert get_dataset_split_names(out, config) == [split]
        streamed = load_dataset(out, config, split=split, streaming=True).with_format("arrow")
        first = next(iter(streamed.iter(batch_size=3)))
        assert first.to_pylist() == embedded_expected(builder_table(benchmark, config).slice(0, 3)).to_pylist()
    default = load_dataset(out, split=split)
    assert default.column_names == BENCHMARKS[benchmark].builder().load(DEFAULTS[benchmark]).column_names


@pytest.mark.parametrize("benchmark", ["mipr", "m2kr"])
def test_repo_holds_parquet_and_card_only(exported, benchmark):
    out, module, split = exported(benchmark), BENCHMARKS[benchmark].builder(), SPLITS[benchmark]
    files = sorted(path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file())
    assert files == [MARKER, "README.md"] + sorted(f"{c}/{split}-00000-of-00001.parquet" for c in module.CONFIG_NAMES)
    assert not (out / f"{benchmark}.py").exists()
    assert not list(out.parent.glob(f".{out.name}.partial-*"))


def test_parquet_metadata_is_readable_by_datasets_3(exported):
    # datasets 3.x has no List type: the features in the file must use plain lists, which every version reads.
    schema = pq.read_schema(exported("mipr") / "qrels" / "test-00000-of-00001.parquet")
    assert b'"_type": "List"' not in schema.metadata[b"huggingface"]
    assert datasets.Features.from_arrow_schema(schema) == BENCHMARKS["mipr"].builder().FEATURES["qrels"]


@pytest.mark.parametrize("benchmark", ["mipr", "m2kr"])
def test_card_yaml_validates_and_describes_the_files(exported, benchmark):
    out, module, split = exported(benchmark), BENCHMARKS[benchmark].builder(), SPLITS[benchmark]
    card = DatasetCard.load(out / "README.md", ignore_metadata_errors=False)
    data = card.data
    assert data.license == module._LICENSE
    assert data.pretty_name and data.language and data.task_categories and data.size_categories == ["n<1K"]
    configs = MetadataConfigs.from_dataset_card_data(data)
    assert sorted(configs) == sorted(module.CONFIG_NAMES)
    assert [name for name, config in configs.items() if config.get("default")] == [DEFAULTS[benchmark]]
    assert configs[DEFAULTS[benchmark]]["data_files"] == [{"split": split, "path": f"{DEFAULTS[benchmark]}/{split}-*"}]
    infos = DatasetInfosDict.from_dataset_card_data(data)
    for config in module.CONFIG_NAMES:
        assert infos[config].features == module.FEATURES[config]
        assert infos[config].splits[split].num_examples == len(module.load(config))
        assert infos[config].download_size == sum(p.stat().st_size for p in (out / config).glob("*.parquet"))
    header = yaml.safe_load(card.content.split("---")[1])
    assert header == data.to_dict()
    headings = [line for line in card.text.splitlines() if line.startswith("#")]
    for heading in [
        "## Dataset Details",
        "## Uses",
        "### How to load",
        "### How to evaluate",
        "## Dataset Structure",
        "## Metrics",
        "## Dataset Creation",
        "## Bias, Risks, and Limitations",
        "## Citation",
        "## License",
    ]:
        assert heading in headings
    assert module._CITATION.strip() in card.text


def test_mipr_card_defines_grades_and_gains(exported):
    text = (exported("mipr") / "README.md").read_text(encoding="utf-8")
    module = BENCHMARKS["mipr"].builder()
    for grade, meaning in module.GRADES.items():
        assert f"| {grade} | {meaning} | {module.GAINS.get(grade, 0)} |" in text
