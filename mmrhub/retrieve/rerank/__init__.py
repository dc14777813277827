"""The rerank pipeline: the candidate pairs (``pairs``), the cross-encoder that scores them (``model``), its score
cache (``score_cache``) and the run from candidates to reranked run (``pipeline``)."""
