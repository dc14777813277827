"""The README.md dataset card of an exported repo: YAML (``configs:``, ``dataset_info:``, license, ...) + the
sections of the Hugging Face dataset card template, filled from the builder and what was written."""

from dataclasses import dataclass
from pathlib import Path

import datasets
from datasets.info import DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard
from huggingface_hub import DatasetCardData

from mmrhub.declaration import Benchmark
from mmrhub.export.parquet import WrittenSplit

DEFAULT_LICENSE = "apache-2.0"

# The card's body, sections as in Hugging Face's dataset card template, with "{field}"s that render fills in (a
# Markdown file, shipped as package data, as mteb and sentence-transformers keep their card templates).
TEMPLATE = Path(__file__).with_name("dataset_card_template.md")


@dataclass
class ExportedConfig:
    """One config of the exported repo: its features and what was written for its split."""

    name: str
    split: str
    features: datasets.Features
    written: WrittenSplit


def size_category(num_rows: int) -> str:
    """The Hub's size category of a row count."""
    for bound, label in [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")]:
        if num_rows < bound:
            return label
    return "1M<n<10M" if num_rows < 10_000_000 else "10M<n<100M"


def card_data(
    text: dict, configs: list, default_config: str, license: str, mteb: bool, sample: bool = False
) -> DatasetCardData:
    """The card's YAML: ``configs:`` and ``dataset_info:`` written by ``datasets``' own serializers."""
    data = DatasetCardData(
        license=license,
        language=text["language"],
        task_categories=text["task_categories"],
        size_categories=[size_category(max(c.written.num_examples for c in configs))],
        pretty_name=text["pretty_name"] + (" sample" if sample else "") + (" (MTEB format)" if mteb else ""),
        tags=text["tags"] + (["mteb"] if mteb else []) + (["sample"] if sample else []),
    )
    MetadataConfigs(
        {
            c.name: {
                "data_files": [{"split": c.split, "path": f"{c.name}/{c.split}-*"}],
                **({"default": True} if c.name == default_config else {}),
            }
            for c in configs
        }
    ).to_dataset_card_data(data)
    infos = {}
    for c in configs:
        split = datasets.SplitInfo(name=c.split, num_bytes=c.written.num_bytes, num_examples=c.written.num_examples)
        infos[c.name] = datasets.DatasetInfo(
            features=c.features,
            splits=datasets.SplitDict({c.split: split}),
            download_size=c.written.download_size,
            dataset_size=c.written.num_bytes,
        )
    DatasetInfosDict(infos).to_dataset_card_data(data)
    return data


def describe_feature(feature) -> str:
    """A feature in a few words for the card's table."""
    if isinstance(feature, datasets.Image):
        return "image"
    if isinstance(feature, datasets.Value):
        return feature.dtype
    if isinstance(feature, dict):
        return "{" + ", ".join(f"{key}: {describe_feature(value)}" for key, value in feature.items()) + "}"
    if isinstance(feature, (list, tuple)):
        return f"list of {describe_feature(feature[0])}"
    inner = getattr(feature, "feature", None)
    return f"list of {describe_feature(inner)}" if inner is not None else type(feature).__name__


def configs_table(configs: list, default_config: str) -> str:
    """The card's table of configs, splits, rows and columns."""
    lines = ["| config | split | rows | columns |", "|---|---|---:|---|"]
    for c in configs:
        name = f"`{c.name}` (default)" if c.name == default_config else f"`{c.name}`"
        columns = ", ".join(f"`{key}` ({describe_feature(value)})" for key, value in c.features.items())
        lines.append(f"| {name} | {c.split} | {c.written.num_examples:,} | {columns} |")
    return "\n".join(lines)


def grades_section(module, mteb: bool) -> str:
    """The card's section on the grades, when the benchmark has any."""
    grades = getattr(module, "GRADES", None)
    if not grades:
        return ""
    gains = getattr(module, "GAINS", {})
    lines = ["## Relevance grades", ""]
    if mteb:
        lines += [
            "The `qrels` config's `score` is the grade's nDCG gain, so N1, N2 and N3 judgments all score 0; "
            "`qrels-l1` holds the L1 rows only.",
            "",
        ]
    lines += ["| grade | meaning | gain |", "|---|---|---:|"]
    lines += [f"| {grade} | {meaning} | {gains.get(grade, 0)} |" for grade, meaning in grades.items()]
    return "\n".join(lines) + "\n\n"


def summary(text: dict, configs: list, sample: bool) -> str:
    """The card's opening: the benchmark's size, or for the bundled sample its own rows and a plain warning."""
    if not sample:
        return f"{text['summary']} The benchmark has {text['full_counts']}."
    rows = ", ".join(f"{c.written.num_examples:,} `{c.name}` rows" for c in configs)
    return (
        f"**This is a small sample, not the benchmark**: {rows}, from the sample bundled with mmrhub. Use it "
        f"to try the loading and evaluation code; scores on it say nothing about the benchmark, which has "
        f"{text['full_counts']}.\n\n{text['summary']}"
    )


def snippet(path, **fields) -> str:
    """A card snippet's file (real Python, linted) as a fenced code block, its ``"{field}"`` placeholders filled
    in (``repo_id``, ``metric_space``, ``mteb_task``)."""
    code = Path(path).read_text(encoding="utf-8")
    for name, value in fields.items():
        code = code.replace("{" + name + "}", value)
    return f"```python\n{code}```"


def measure_table(definitions: dict) -> str:
    """The measures as the metric card and the repository README show them: a Markdown table, a row each."""
    rows = "".join(f"| {name} | {definition} |\n" for name, definition in definitions.items())
    return "| Measure | Definition |\n| --- | --- |\n" + rows


def render(
    benchmark: Benchmark,
    module,
    configs: list,
    default_config: str,
    repo_id: str,
    metric_space: str,
    mteb: bool = False,
    sample: bool = False,
) -> str:
    """The full README.md text; parsing it with ``huggingface_hub.DatasetCard`` gives back ``card_data``."""
    text = benchmark.card
    fields = {"repo_id": repo_id, "metric_space": metric_space, "mteb_task": module.MTEB_TASK}
    license = getattr(module, "_LICENSE", DEFAULT_LICENSE)
    data = card_data(text, configs, default_config, license, mteb, sample)
    load_lines = "\n".join(
        f'{c.name.replace("-", "_")} = load_dataset("{repo_id}", "{c.name}", split="{c.split}")' for c in configs
    )
    if mteb:
        format_note = (
            "the MTEB (MIEB) retrieval layout: `corpus` (split `corpus`) and `query` (`id`, `modality`, `text`, "
            "`image`) and `qrels` (`query-id`, `Q0`, `corpus-id`, integer `score`)."
        )
        structure = (
            "The layout both mteb 1.x (`AbsTaskAny2AnyRetrieval`) and mteb 2 (`mteb.abstasks.retrieval_dataset_"
            f'loaders.RetrievalDatasetLoader("{repo_id}", revision="main", split="{configs[-1].split}")`) '
            "read.\n\n" + text["mteb_metrics"]
        )
        evaluate = text["mteb_evaluate"].format(**fields) + "\n\n" + snippet(text["mteb_snippet"], **fields)
    else:
        format_note = "one Parquet folder per config, images embedded as bytes."
        structure = "One config per table, each with a single split; the default config is marked below."
        evaluate = snippet(text["evaluate_snippet"], **fields)
    body = TEMPLATE.read_text(encoding="utf-8").format(
        pretty_name=data.pretty_name,
        summary=summary(text, configs, sample),
        languages=", ".join(text["language"]),
        license=license,
        license_name="Apache License 2.0" if license == "apache-2.0" else f"{license} license",
        format_note=format_note,
        sources=text.get("sources", "- **Source data:** the official release of the benchmark."),
        load_lines=load_lines,
        evaluate=evaluate,
        structure=structure,
        configs_table=configs_table(configs, default_config),
        grades=grades_section(module, mteb),
        metrics=measure_table(benchmark.measures.DEFINITIONS),
        creation=text["creation"],
        limitations=text["limitations"],
        citation=module._CITATION.strip(),
    )
    return str(DatasetCard(f"---\n{data.to_yaml()}\n---\n\n{body}"))
