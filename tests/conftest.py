import os
import tempfile

# Tests never reach the Hub and never touch the user's cache: set before datasets is imported.
_HF_HOME = tempfile.mkdtemp(prefix="mmrhub-test-hf-")
os.environ["HF_HOME"] = _HF_HOME
os.environ["HF_DATASETS_CACHE"] = os.path.join(_HF_HOME, "datasets")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_EVALUATE_OFFLINE"] = "1"
