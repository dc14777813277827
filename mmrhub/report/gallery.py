"""The gallery's content: for each chosen query, its image and text, each run's top k and the relevant items it
missed, with grades. Only the rows shown are decoded (``Dataset.select``), through the benchmark's builder."""

from dataclasses import dataclass
from typing import Optional
from typing import Union

import pyarrow as pa
import pyarrow.compute as pc

from mmr_remote import RemoteReadError
from mmrhub.declaration import Benchmark
from mmrhub.declaration import Side
from mmrhub.declaration import View
from mmrhub.report.thumbnail_cache import ThumbnailCache
from mmrhub.report.thumbnails import NOT_FOUND
from mmrhub.report.thumbnails import Failure
from mmrhub.report.thumbnails import thumbnails
from mmrhub.report.views import IMAGE_COLUMN


@dataclass
class Item:
    """One thumbnail of the gallery: an item with its grade and text."""

    item_id: str
    grade: str
    text: str = ""
    thumbnail: Union[str, Failure] = ""  # a data URI, or the Failure saying why the image cannot be shown


@dataclass
class RunRanking:
    """A run's line in a query's gallery entry."""

    name: str
    value: Optional[float]  # the main measure on this query (None where undefined)
    ranked: list  # Item, the run's top k
    missed: list  # Item, relevant items outside the top k, at most k shown
    missed_total: int


@dataclass
class Decoded:
    """What decoding the gallery's images gave: distinct images, how many the cache held, those not shown."""

    images: int
    cached: int
    failures: dict  # {shown id (an item id, or "query <id>"): Failure}


@dataclass
class Query:
    """One query of the gallery with every run's line."""

    query_id: str
    text: str
    thumbnail: Union[str, Failure]  # as Item.thumbnail
    runs: list  # RunRanking


def _arrow(dataset) -> pa.Table:
    return dataset.with_format("arrow")[:]


def _shown(dataset, side: Side, ids: list) -> dict:
    """{id: (text, image reference)} for ``ids``: only those rows are read, their images as references (Arrow format
    does not decode; None where the builder read no image)."""
    column = dataset.select_columns([side.id_column]).with_format("arrow")[:][side.id_column]
    rows = pc.index_in(pa.array(ids, pa.string()), value_set=column)
    records = dataset.select(rows.to_pylist()).with_format("arrow")[:].to_pylist()
    return {record[side.id_column]: (record[side.text_column] or "", record[IMAGE_COLUMN]) for record in records}


def _top(run, query_id: str, k: int) -> list:
    row = pc.index(run.query_ids, query_id).as_py()
    if row < 0:  # a query the run lacks (--missing-queries zero): it ranked nothing
        return []
    return run.rankings[row].values[:k].to_pylist()


def build_gallery(
    benchmark: Benchmark, view: View, data_dir: str, runs: list, measure: str, query_ids: list, builder_options=None
) -> tuple:
    """(the Query rows, Decoded). ``runs``: scored rows with a run (not the oracle); ``query_ids`` in the order
    shown."""
    load = Loader(benchmark, data_dir, builder_options or {})
    grades = view.read_grades(_arrow(load(view.judgments_config)), query_ids)
    k = view.top_k
    gallery = []
    for qid in query_ids:
        judged = grades.get(qid, {})
        relevant = [item_id for item_id, grade in judged.items() if grade == view.relevant]
        shown = []
        for row in runs:
            top = _top(row.run, qid, k)
            missed = [item_id for item_id in relevant if item_id not in top]
            value = row.result["per_query"][measure][row.result["per_query"]["query_id"].index(qid)]
            shown.append(
                RunRanking(
                    row.name,
                    value,
                    [Item(i, judged.get(i, view.unjudged)) for i in top],
                    [Item(i, judged[i]) for i in missed[:k]],
                    len(missed),
                )
            )
        gallery.append(Query(qid, "", "", shown))
    return gallery, _decode(benchmark, load, gallery)


class Loader:
    """A config's rows through the builder. Where the builder refuses a config for its images (an image folder or
    archive missing), its rows are read without them, and ``unread`` keeps the builder's reason, so the page shows
    what exists and names why the rest is not there. Where a server cannot serve them (no Range support, a stall,
    a part changed), the command stops with the reader's one line."""

    def __init__(self, benchmark: Benchmark, data_dir: str, options: dict):
        self.builder, self.data_dir, self.split, self.options = benchmark.builder(), data_dir, benchmark.split, options
        self.unread = {}  # {config: the builder's reason for reading it without images}

    def __call__(self, config: str):
        """The config's rows, with images where the builder finds them."""
        try:
            return self._load(config, self.options)
        except (ValueError, OSError) as error:
            if not self.options.get("check_images", True) or isinstance(error, RemoteReadError):
                raise  # a server that cannot serve the images in place: its one line, not a page without them
            try:  # the tables were checked when the runs were scored: what fails is the images
                rows = self._load(config, {**self.options, "check_images": False})
            except (ValueError, OSError):
                raise error from None
            self.unread[config] = str(error)
            return rows

    def _load(self, config: str, options: dict):
        return self.builder.load(config, data_dir=self.data_dir, split=self.split, **options)


def _decode(benchmark: Benchmark, load: Loader, gallery: list) -> Decoded:
    """Fill in texts and thumbnails, each image shown decoded once."""
    items = [item for query in gallery for run in query.runs for item in run.ranked + run.missed]
    corpus = _shown(load(benchmark.corpus.config), benchmark.corpus, list(dict.fromkeys(i.item_id for i in items)))
    queries = _shown(load(benchmark.queries.config), benchmark.queries, [query.query_id for query in gallery])
    shown = {item_id: reference for item_id, (_, reference) in corpus.items()}
    shown.update({f"query {query_id}": reference for query_id, (_, reference) in queries.items()})
    # Items sharing a file (MIPR's shared query images) are decoded once.
    distinct = list({_image_key(reference): reference for reference in shown.values()}.values())
    made, hits = thumbnails(distinct, ThumbnailCache())
    uri_of = {_image_key(reference): uri for reference, uri in zip(distinct, made)}
    thumbnail = {shown_id: uri_of[_image_key(reference)] for shown_id, reference in shown.items()}
    for config, ids in ((benchmark.corpus.config, corpus), (benchmark.queries.config, queries)):
        if config in load.unread:  # no image was read for these rows: the builder's reason, not --no-check-images
            failure = Failure(NOT_FOUND, load.unread[config])
            prefix = "" if config == benchmark.corpus.config else "query "
            thumbnail.update({f"{prefix}{i}": failure for i, (_, ref) in ids.items() if ref is None})
    for item in items:
        item.text, item.thumbnail = corpus[item.item_id][0], thumbnail[item.item_id]
    for query in gallery:
        query.text, query.thumbnail = queries[query.query_id][0], thumbnail[f"query {query.query_id}"]
    failures = {shown_id: uri for shown_id, uri in thumbnail.items() if not isinstance(uri, str)}
    return Decoded(sum(reference is not None for reference in distinct), hits, failures)


def _image_key(reference):
    """What identifies an image before it is read: its path, else its bytes."""
    if reference is None:
        return None
    return reference["path"] or reference["bytes"]
