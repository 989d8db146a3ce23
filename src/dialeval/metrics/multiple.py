"""Holm's step-down correction of p-values for several tests read together (pure).

Why: a leaderboard of k models tests k(k-1)/2 pairs; at 0.05 each, ten pairs would
separate some pair by chance one time in three. Holm keeps the chance of any false
separation at 0.05 and is never less powerful than Bonferroni.
"""

from __future__ import annotations

from typing import Sequence


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted p-values in the order given; ``None`` (a test that could not be made)
    stays ``None`` and does not count among the tests."""
    known = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(known):
        running = max(running, min(1.0, (len(known) - rank) * p))  # step-down: never below an earlier one
        out[i] = running
    return out
