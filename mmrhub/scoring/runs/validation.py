"""Check a run against a benchmark's judgments, vectorised, naming every problem; and a reranking against its pools."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mmrhub.scoring.runs.run import MAX_LISTED
from mmrhub.scoring.runs.run import Run
from mmrhub.scoring.runs.run import raise_problems

MISSING_QUERIES = ("refuse", "zero")  # a judged query absent from a run: the run refused, or the query scored 0


def validate(
    run: Run, truth, ignore_unknown_queries: bool = False, missing_queries: str = "refuse", missing_hint: str = ""
) -> pa.ListArray:
    """Check ``run`` against ``truth`` and return its rankings aligned with ``truth.query_ids``, their ids
    dictionary-encoded with ``truth.corpus_ids`` as the dictionary.

    Every judged query exactly once (queries without judgments may appear and are not scored), every id in the
    corpus and once per ranking, scores finite numbers. ``ignore_unknown_queries`` sets aside the entries of
    queries that are not the benchmark's (a Kaggle file holding another track's rows), with a note saying how many.
    ``missing_queries="zero"`` gives a judged query the run lacks an empty ranking, so it scores 0 on every measure
    and stays in the means, as trec_eval's ``-c`` counts it. ``missing_hint``: what to do about missing queries, for
    a command that takes no ``--missing-queries`` (rerank's candidates).
    """
    benchmark_queries = pa.concat_arrays([truth.query_ids, truth.unjudged_query_ids])
    known = pc.is_in(run.query_ids, value_set=benchmark_queries).to_numpy(zero_copy_only=False)
    if ignore_unknown_queries and not known.all():
        run.notes.append(
            f"{int((~known).sum())} entries of {run.path} are not queries of the benchmark and were set "
            "aside (--ignore-unknown-queries)."
        )
        _keep_entries(run, np.flatnonzero(known))
        known = known[known]
    found = [(len(run.problems), run.problems[:MAX_LISTED])]  # (count, messages of the first few) per kind

    def report(at, message):
        found.append((len(at), [message(int(i)) for i in at[:MAX_LISTED]]))

    report(np.flatnonzero(~known), lambda e: f"{run.where(e)}: not a query of the benchmark")
    query = pc.dictionary_encode(run.query_ids).indices.to_numpy()  # codes in order of first appearance
    first_entry = np.unique(query, return_index=True)[1][query]
    report(
        np.flatnonzero(first_entry != np.arange(len(query))),
        lambda e: f"{run.where(e)}: appears again (first at {run.origin(first_entry[e])})",
    )
    ids, offsets = run.rankings.values, run.rankings.offsets.to_numpy()
    entry_of = np.repeat(np.arange(len(run.rankings), dtype=np.int32), np.diff(offsets))

    def at(i):  # how the id at flat index i is named
        return run.where(entry_of[i], i - offsets[entry_of[i]])

    corpus_codes = pc.index_in(ids, value_set=truth.corpus_ids).fill_null(-1)  # -1: not in the corpus
    codes = corpus_codes.to_numpy()
    report(np.flatnonzero(codes < 0), lambda i: f"{at(i)}: {ids[i].as_py()!r} is not in the corpus")

    def pair_keys():  # an int64 per ranked id, equal for an id listed twice in an entry, unique if not in the corpus
        keys = entry_of.astype(np.int64)
        keys *= len(truth.corpus_ids)
        keys += codes
        keys[codes < 0] = -1 - np.flatnonzero(codes < 0)
        return keys

    keys = pair_keys()
    keys.sort()  # in place: a large run's keys are held once
    repeated = np.zeros(0, dtype=np.int64)
    if (keys[1:] == keys[:-1]).any():  # then find where, for the report
        keys = pair_keys()
        order = np.argsort(keys, kind="stable")  # each entry's ids by code, equal codes in ranking order
        repeated = np.sort(order[1:][keys[order[1:]] == keys[order[:-1]]])
    del keys

    def first_position(i):
        start = offsets[entry_of[i]]
        return int(np.argmax(codes[start:i] == codes[i])) + 1

    report(repeated, lambda i: f"{at(i)}: {ids[i].as_py()!r} already at position {first_position(i)}")
    if run.scores is not None:
        scores = run.scores.values
        not_finite = pc.and_(scores.is_valid(), pc.invert(pc.is_finite(scores))).to_numpy(zero_copy_only=False)
        report(np.flatnonzero(not_finite), lambda i: f"{at(i)}: score {scores[i].as_py()!r} is not a finite number")
    missing = missing_queries_of(run, truth).to_pylist() if missing_queries == "refuse" else []
    found.append((len(missing), [f"query {qid!r}: missing from the run" for qid in missing[:MAX_LISTED]]))
    hint = (
        missing_hint
        or f"To score the {len(missing)} missing queries as 0 (as trec_eval -c does), pass --missing-queries zero."
        if missing
        else ""
    )
    raise_problems(run.path, [m for _, messages in found for m in messages], total=sum(n for n, _ in found), hint=hint)
    # ids as codes into the corpus ids: a quarter of the strings' memory, and the metric's index needs no encoding;
    # one empty ranking after the run's entries, for the judged queries it lacks (--missing-queries zero)
    offsets = run.rankings.offsets
    coded = pa.ListArray.from_arrays(
        pa.concat_arrays([offsets, offsets[-1:]]), pa.DictionaryArray.from_arrays(corpus_codes, truth.corpus_ids)
    )
    return coded.take(pc.index_in(truth.query_ids, value_set=run.query_ids).fill_null(len(run.rankings)))


def missing_queries_of(run: Run, truth) -> pa.Array:
    """The judged queries ``run`` does not list."""
    return pc.filter(truth.query_ids, pc.invert(pc.is_in(truth.query_ids, value_set=run.query_ids)))


def _keep_entries(run: Run, keep) -> None:
    take = pa.array(keep, pa.int64())
    run.query_ids, run.rankings = run.query_ids.take(take), run.rankings.take(take)
    run.scores = run.scores.take(take) if run.scores is not None else None
    run.lines = run.lines.take(take) if run.lines is not None else None


def check_pool(run: Run, baseline: Run) -> None:
    """For reranking: each query's candidates are exactly the baseline's pool for that query."""
    pools = dict(zip(baseline.query_ids.to_pylist(), baseline.rankings.to_pylist()))
    problems = []
    for entry, (qid, ranked) in enumerate(zip(run.query_ids.to_pylist(), run.rankings.to_pylist())):
        pool, ranked = set(pools.get(qid, ())), set(ranked)
        extra, missing = sorted(ranked - pool), sorted(pool - ranked)
        if extra:
            problems.append(f"{run.where(entry)}: {len(extra)} id(s) not in the baseline pool, e.g. {extra[0]!r}")
        if missing:
            problems.append(
                f"{run.where(entry)}: {len(missing)} id(s) of the baseline pool missing, e.g. {missing[0]!r}"
            )
    raise_problems(run.path, problems, what=f"is not a reranking of {baseline.path}")
