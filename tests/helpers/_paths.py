"""Where the tests find the repository, its bundled samples and their runs, whatever folder a test lies in."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MIPR_SAMPLE = ROOT / "data" / "mipr"
M2KR_SAMPLE = ROOT / "data" / "m2kr"
MIPR_EMBEDDING = MIPR_SAMPLE / "baseline" / "simulated_embedding_top50.json"
MIPR_RERANKED = MIPR_SAMPLE / "baseline" / "simulated_reranker_top50.json"
M2KR_RUN = M2KR_SAMPLE / "baseline" / "simulated_top5.json"
