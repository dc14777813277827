"""Multiple-testing corrections of a family of p-values (adjusted p-values, as statsmodels' multipletests)."""

CORRECTIONS = ("holm", "bonferroni", "none")


def holm(ps: list) -> list:
    """Holm's step-down adjustment: the i-th smallest of m times (m - i + 1), made non-decreasing, capped at 1."""
    order = sorted(range(len(ps)), key=lambda index: ps[index])
    adjusted, running = [0.0] * len(ps), 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(ps) - rank) * ps[index]))
        adjusted[index] = running
    return adjusted


def bonferroni(ps: list) -> list:
    """Each p times the family's size, capped at 1."""
    return [min(1.0, len(ps) * p) for p in ps]


def adjust(ps: list, correction: str) -> list:
    """``ps`` adjusted by ``correction`` (one of CORRECTIONS); None (no test) stays None and is not in the family."""
    if correction not in CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}: use one of {', '.join(CORRECTIONS)}")
    family = [p for p in ps if p is not None]
    adjusted = iter({"holm": holm, "bonferroni": bonferroni, "none": list}[correction](family))
    return [None if p is None else next(adjusted) for p in ps]
