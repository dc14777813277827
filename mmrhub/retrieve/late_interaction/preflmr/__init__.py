"""PreFLMR (LinWeizheDragon/FLMR) built from transformers' own parts: ``config`` reads a checkpoint's settings,
``model`` is the network, ``checkpoint`` loads its files by name, ``inputs`` makes its inputs as the authors do,
``encoder`` serves the retrieval pipeline (``build_preflmr_encoder``)."""
