"""The rerank pipeline: the candidate pairs (``pairs``), the cross-encoder that scores them (``model``), its score
cache (``cache``) and the run from candidates to reranked run (``pipeline``)."""
