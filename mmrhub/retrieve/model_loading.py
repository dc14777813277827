"""Loading that fails loudly: a Hub that cannot be reached, a reranker without its scoring modules, a chat template
that cannot be read, a damaged model file, each one line naming the file or option and the fix."""

import logging
import os
import re
import socket
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

HUB_TIMEOUT = 3.0  # seconds to wait for the Hub before saying it cannot be reached
CHAT_TEMPLATE_CONFLICT = "conflicting files"  # transformers' words for chat_template.json beside additional_*
# transformers 5 logs a "LOAD REPORT" table whose rows are "key | MISSING | ..." for weights the checkpoint lacks,
# which it then initialises at random.
_MISSING_ROW = re.compile(r"^\s*(\S+)\s*\|\s*MISSING\b", re.MULTILINE)
_STYLE = re.compile(r"\x1b\[[0-9;]*m")
_HUB_ID = re.compile(
    r"(?!.*\.\.)(?:\w[\w.-]*/)?\w[\w.-]*"
)  # name or org/name, as huggingface_hub's validate_repo_id allows


def hub_reachable(timeout: float = HUB_TIMEOUT) -> bool:
    """Whether a connection to the Hub (``HF_ENDPOINT``) opens within ``timeout``."""
    endpoint = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
    try:
        socket.create_connection((endpoint.hostname, port), timeout=timeout).close()
    except OSError:
        return False
    return True


def cached_file(model_id: str, filename: str, revision=None):
    """A Hub model's file as cached here: a path, False when the Hub said it has no such file, None if unknown."""
    from huggingface_hub import try_to_load_from_cache

    path = try_to_load_from_cache(model_id, filename, revision=revision)
    return path if isinstance(path, str) else (False if path is not None else None)


def hub_file(model_id: str, filename: str, what: str) -> str:
    """One file of a Hub repository (downloaded or from the cache); one line naming ``what`` when unavailable."""
    from huggingface_hub import hf_hub_download

    try:
        return hf_hub_download(model_id, filename)
    except Exception as error:  # offline, unknown repository, no such file: all one line
        raise FileNotFoundError(
            f"{what} {model_id!r}: its {filename} could not be read ({type(error).__name__}); "
            "give a folder holding it, or download it where the Hub can be reached."
        ) from None


def check_reachable(model_id: str, flag: str, revision=None) -> None:
    """Before loading a Hub id: an error with the hint at once when the Hub cannot be reached and the model is not
    cached, rather than minutes of retries. A path that is no folder is named as such, not as a bad Hub id."""
    if not os.path.isdir(model_id) and not _HUB_ID.fullmatch(model_id):
        raise FileNotFoundError(
            f"{flag} {model_id}: no such folder; give the folder of a downloaded model, or a Hub id (org/name)."
        )
    if os.path.isdir(model_id) or os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        return
    if hub_reachable():
        return
    if cached_file(model_id, "config.json", revision):
        raise ConnectionError(
            f"{flag} {model_id}: the Hub cannot be reached; it is cached here, so set HF_HUB_OFFLINE=1 to use it."
        )
    raise ConnectionError(
        f"{flag} {model_id}: the Hub cannot be reached and the model is not cached; download it where the Hub can "
        "be reached, then give --model PATH (its folder) or set HF_HUB_OFFLINE=1 with HF_HOME pointing at that cache."
    )


def check_modules(model_id: str, revision=None) -> None:
    """A CrossEncoder checkpoint needs modules.json: without it sentence-transformers adds a newly initialised
    classification head, whose random scores would pass for a ranking."""
    if os.path.isdir(model_id):
        present = (Path(model_id) / "modules.json").is_file()
    else:
        present = cached_file(model_id, "modules.json", revision) is not False
    if not present:
        raise ValueError(
            f"--model {model_id}: no modules.json, so its scoring head would be newly initialised (random); use a "
            "sentence-transformers CrossEncoder checkpoint (e.g. Qwen/Qwen3-VL-Reranker-2B) or add its modules.json."
        )


def load_cross_encoder(model_id: str, revision, device, dtype):
    """A CrossEncoder, after the checks above; a chat template transformers cannot read is named with its fix."""
    from sentence_transformers import CrossEncoder

    check_reachable(model_id, "--model", revision)
    check_modules(model_id, revision)
    try:
        with newly_initialised() as missing, damaged_files(model_id):
            model = CrossEncoder(model_id, revision=revision, device=str(device), model_kwargs={"dtype": dtype})
    except ValueError as err:
        if CHAT_TEMPLATE_CONFLICT not in str(err):
            raise
        raise ValueError(
            f"--model {model_id}: chat_template.json cannot be read beside additional_chat_templates/ "
            "(transformers 5); rename its template to chat_template.jinja (the JSON file's chat_template value) "
            "and remove chat_template.json."
        ) from err
    if missing:
        raise ValueError(
            f"--model {model_id}: its checkpoint lacks {', '.join(missing)}, so they would be newly initialised "
            "(random) and every score meaningless; use a CrossEncoder checkpoint that holds its scoring head "
            "(e.g. Qwen/Qwen3-VL-Reranker-2B)."
        )
    if getattr(model[0], "processor", None) is not None and "message" in getattr(model[0], "modality_config", {}):
        if getattr(model[0].processor, "chat_template", None) is None:
            raise ValueError(
                f"--model {model_id}: its processor has no chat template; add chat_template.jinja to the checkpoint."
            )
    return model


@contextmanager
def damaged_files(model_id: str, flag: str = "--model"):
    """Loading a model's files: what the libraries raise on a damaged one (a tokenizer.json without a field, a
    config.json whose sizes do not fit the weights, a value its config class refuses) is said in one line naming
    the model and what to do, not as the library's bare KeyError or report pointer. What they already say in words
    (ValueError, OSError: a missing file, a wrong option) passes through."""
    try:
        yield
    except (ValueError, OSError, ImportError):
        raise
    except Exception as err:
        lines = [line.strip() for line in str(err).splitlines() if line.strip()]
        said = f"a field missing: {err}" if isinstance(err, KeyError) else (lines[-1] if lines else "")
        raise ValueError(
            f"{flag} {model_id}: its files cannot be loaded ({type(err).__name__}: {said}); one of them "
            "(config.json, tokenizer.json, the weights) is damaged or of another model: download the model again."
        ) from err


def build_model(factory, model_id: str, settings, **options):
    """``factory(model_id, settings, **options)``, a local folder given by its absolute path, and a damaged file said
    in one line (``damaged_files``): how every encoder of the pipeline is built."""
    if os.path.isdir(model_id):
        model_id = os.path.abspath(model_id)
    with damaged_files(model_id):
        return factory(model_id, settings, **options)


@contextmanager
def newly_initialised():
    """The weights transformers initialises at random while loading in this block (its load report's MISSING
    rows), as a list filled when the block ends. The report is a warning: the library's level is lowered to it
    for the block, so a quieter TRANSFORMERS_VERBOSITY does not hide it from this check."""
    library = logging.getLogger("transformers")
    missing, records = [], []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    level = library.level
    library.addHandler(handler)
    if not library.isEnabledFor(logging.WARNING):
        library.setLevel(logging.WARNING)
    try:
        yield missing
    finally:
        library.removeHandler(handler)
        library.setLevel(level)
    for record in records:
        message = _STYLE.sub("", record.getMessage())
        if "LOAD REPORT" in message:
            missing.extend(_MISSING_ROW.findall(message))
