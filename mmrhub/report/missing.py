"""The page's one line (and the one ``note:``) on the images that could not be shown, counted by reason."""

from mmrhub.report.thumbnails import MISSING
from mmrhub.report.thumbnails import NOT_FOUND
from mmrhub.report.thumbnails import NOT_READ

# What to do, for the reasons that have a remedy besides replacing the files named.
HINTS = {
    MISSING: "the image files belong under DATA_DIR/images/ (README: MIPR builder)",
    NOT_READ: "pass --images-dir (the archives' folder) and drop --no-check-images (README: M2KR builder)",
}


def missing_line(failures: dict) -> str:
    """``failures``: {shown id: Failure}; '' when every image was shown."""
    if not failures:
        return ""
    by_kind = {}
    for shown_id, failure in failures.items():
        by_kind.setdefault(failure.kind, []).append(shown_id)
    reasons = "; ".join(f"{len(ids)} {kind} (e.g. {ids[0]})" for kind, ids in by_kind.items())
    hints = "".join(f"; {HINTS[kind]}" for kind in by_kind if kind in HINTS)
    # the builder's own words on what it could not find, once each
    found = dict.fromkeys(failure.detail.rstrip(".") for failure in failures.values() if failure.kind == NOT_FOUND)
    hints += "".join(f"; {detail}" for detail in found)
    return f"{len(failures)} image(s) could not be shown: {reasons}{hints}."
