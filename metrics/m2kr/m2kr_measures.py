"""M2KR measures: positives prepared once, then each run is a (queries x depth) matrix of positives found."""

import numpy as np

from . import shared

DEFAULT_K = (1, 3, 5)
# Each measure's definition, as Markdown table cells: the metric card, the repository README and the exported
# dataset cards show exactly these rows (a test holds them equal).
DEFINITIONS = {
    "Recall@k": (
        "\\|positives in top k\\| / \\|positives\\| (the challenge's \"proportion of relevant documents "
        'retrieved"): a query with several positives needs all of them in the top k to score 1'
    ),
    "Recall-mean": (
        "mean of Recall@1, Recall@3, Recall@5: the M2KR track score (the Kaggle leaderboard averaged two "
        "tracks, MMDocIR and M2KR)"
    ),
    "Hit@k (variant `hit`)": "1 if any positive is in the top k (what FLMR calls Recall@K)",
    "StrictRecall@k (variant `strict`)": "1 only if all positives are in the top k",
}
# Variant -> measure name prefix: recall is the M2KR track's measure, hit is FLMR's "Recall@K".
VARIANTS = {"recall": "Recall", "hit": "Hit", "strict": "StrictRecall"}


class Positives:
    """M2KR ground truth prepared once: the (query, positive passage) pairs."""

    def __init__(self, references, query_ids=None):
        lengths, ids = shared.string_lists(references, "references")
        self.pairs = shared.Pairs(lengths, ids, "references", query_ids)
        self.query_ids, self.num_queries, self.num_positives = self.pairs.query_ids, len(lengths), lengths
        if (lengths == 0).any():
            row = int(np.argmax(lengths == 0))
            name = f"query {self.query_ids[row]!r}" if self.query_ids is not None else f"row {row + 1}"
            raise ValueError(f"references: {name} has no positive passage")


def per_query_scores(positives, found, ks, variants):
    """Each variant's value per query at each cutoff, and its mean over the cutoffs."""
    scores = {}
    for variant in variants:
        for k in ks:
            top, total = found[:, k - 1], positives.num_positives
            value = {"recall": top / total, "hit": top > 0, "strict": top == total}[variant]
            scores[f"{VARIANTS[variant]}@{k}"] = value.astype(float)
        scores[f"{VARIANTS[variant]}-mean"] = np.mean([scores[f"{VARIANTS[variant]}@{k}"] for k in ks], axis=0)
    return scores


def evaluate_run(positives, rankings, k=DEFAULT_K, variants=("recall",), per_query=False):
    """The requested M2KR measures (rank = position in the list)."""
    ks, per_query = shared.check_cutoffs(k), shared.flag(per_query, "per_query")
    variants = shared.names_from(variants, tuple(VARIANTS), "variants")
    found = np.cumsum(positives.pairs.find(rankings, max(ks)) >= 0, axis=1)
    scores = per_query_scores(positives, found, ks, variants)
    return {**shared.summary(scores, positives.query_ids, per_query), "num_queries": positives.num_queries}
