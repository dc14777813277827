"""What ``mmrhub rerun`` compares between a run's record (``RUN.json.meta.json``, ``meta.write_meta``) and now:
the sections compared and the paths that are not, one line per value that differs, the judgment tables' digests as
the record holds them, and whether the repeated run is the recorded one.
"""

from pathlib import Path

from mmrhub.records.meta import shown as shown_value
from mmrhub.records.provenance import file_digest

# What is compared between the record and the repeated run's own record; the rest (the run's name, the command
# line, where the new run is written) differs by design.
COMPARED = (
    "versions",
    "mmrhub_source",
    "device",
    "device_name",
    "dtype",
    "data",
    "candidates_sha256",
    "model_id",
    "model",
    "preset",
    "settings",
    "backend",
    "options",
)


# Paths as given are not compared (a run made again from another folder gives them absolute): what they held is, in
# data.folder and data.tables, candidates_sha256 and the model's identity.
NOT_COMPARED = (
    "options.output.path",
    "options.output.stats_json",
    "options.output.named_after_model",
    "options.model",
    "options.candidates",
    "options.data.data_dir",
    "options.data.images_dir",
    "options.runtime.cache_dir",
)


def table_digests(data) -> dict:
    """sha256 of each judgment table of ``data``'s folder, as ``provenance.data_record`` records them."""
    if "://" in data.folder:
        return {}  # tables read from a URL: data_record records none
    folder = Path(data.folder).resolve()
    digests = {}
    for path in data.benchmark.judgment_files(folder):
        path = Path(path)
        name = path.relative_to(folder).as_posix() if path.is_relative_to(folder) else str(path)
        digests[name] = file_digest(path) if path.is_file() else None
    return digests


def flattened(value, prefix: str = "") -> dict:
    """A record as {dotted name: leaf value}."""
    if isinstance(value, dict) and value:
        out = {}
        for key, item in value.items():
            out.update(flattened(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


# Each side's image digests by image name: one line a side, naming the images whose bytes differ.
IMAGES = ("data.queries.images", "data.corpus.images")


def differences(recorded: dict, now: dict, asked: set) -> list:
    """One line per value that differs between the record and ``now`` (only what ``now`` holds), in ``COMPARED``
    order (a side's images in one line); values changed as asked are marked so."""
    lines = []
    for section in COMPARED:
        if section not in now:
            continue
        then, current = flattened(recorded.get(section), section), flattened(now[section], section)
        if section == "data":
            for images in IMAGES:
                line = image_differences(images, pop_under(then, images), pop_under(current, images))
                lines += [(images, line)] if line else []
        for name in sorted(set(then) | set(current)):
            if name in NOT_COMPARED or then.get(name) == current.get(name):
                continue
            if name not in current and section == "data":
                continue  # before the run only the tables are known
            note = " (as asked)" if name in asked else ""
            lines.append((name, f"{name}: {shown(then.get(name))} recorded, {shown(current.get(name))} now{note}"))
    return lines


def pop_under(flat: dict, prefix: str):
    """{name under ``prefix``: value}, taken out of ``flat``; None when ``flat`` holds nothing there."""
    names = [name for name in flat if name == prefix or name.startswith(prefix + ".")]
    return {name[len(prefix) + 1 :]: flat.pop(name) for name in names} or None


def image_differences(prefix: str, then, now):
    """One line naming the images (up to 3) whose digests differ between the record and now, or None."""
    if now is None:
        return None  # before the run only the tables are known
    if then is None:
        return f"{prefix}: not in the record (written before runs recorded each image's bytes)"
    changed = sorted(name for name in set(then) | set(now) if then.get(name) != now.get(name))
    if not changed:
        return None
    named = ", ".join(f"{name} ({shown(then.get(name))} recorded, {shown(now.get(name))} now)" for name in changed[:3])
    more = f", and {len(changed) - 3:,} more" if len(changed) > 3 else ""
    return f"{prefix}: {len(changed):,} of {len(now):,} images differ in their bytes: {named}{more}"


def shown(value) -> str:
    """A value in a difference line, long ones cut."""
    return "absent" if value is None else shown_value(value, 90)


def same_run(recorded_bytes, repeated_bytes: bytes, recorded_run: Path, read) -> str:
    """Whether the repeated run is the recorded one, in a sentence. ``read``: a run's bytes as scoring reads a run
    file (``scoring.runs.read_run_bytes``), given by the caller so that records import no wing."""
    if recorded_bytes is None:
        return f"The recorded run {recorded_run} is not there to compare with."
    if recorded_bytes == repeated_bytes:
        return "The repeated run is identical to the recorded one, byte for byte."
    try:
        then = ranked_by_query(read(recorded_bytes, str(recorded_run)))
    except ValueError:  # a RunError: not a run file at all
        return f"The repeated run differs from {recorded_run}, which is not a run as retrieve and rerank write them."
    now = ranked_by_query(read(repeated_bytes, "the repeated run"))
    moved = largest = 0
    for qid, ranked in now.items():
        before = then.get(qid, [])
        moved += [did for did, _ in before] != [did for did, _ in ranked]
        scores = [(a, b) for (did, a), (same, b) in zip(before, ranked) if did == same]
        largest = max([largest, *(abs(a - b) for a, b in scores if a is not None and b is not None)])
    return (
        f"The repeated run differs from the recorded one: {moved:,} of {len(now):,} queries ranked differently, "
        f"scores of the same items apart by up to {largest:.3g}."
    )


def ranked_by_query(run) -> dict:
    """{qid: [(did, score), ...]} of a run as ``scoring.runs`` reads it (a scoreless format's scores None)."""
    rankings = run.rankings.to_pylist()
    scores = run.scores.to_pylist() if run.scores is not None else [[None] * len(ids) for ids in rankings]
    return {qid: list(zip(ids, values)) for qid, ids, values in zip(run.query_ids.to_pylist(), rankings, scores)}
