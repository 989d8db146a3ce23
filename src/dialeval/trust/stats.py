"""The probes' shares and gaps over bootstrap resamples, computed for all resamples at once (pure).

Agreement statistics (Spearman, Kendall, alpha, the ceiling) come from
:mod:`dialeval.metrics` like every other report's; here are the card's own figures: a
share of units with its interval, a mean difference, a gap between two groups of units.
"""

from __future__ import annotations

import math

import numpy as np

from dialeval.metrics.intervals import RESAMPLES, SEED, percentile_interval, resampled  # the one resampler


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def summary(point: float, draws: np.ndarray) -> dict[str, float | None]:
    """The figure and its 95% percentile interval; resamples where it is undefined (all
    scores alike) are left out; ``None`` where the figure itself is undefined."""
    ci = percentile_interval(draws) if math.isfinite(point) else None
    if ci is None:
        return {"value": _finite(point), "ci_low": None, "ci_high": None}
    return {"value": float(point), "ci_low": ci[0], "ci_high": ci[1]}


def share(hits: list[float], weights: list[float] | None = None, resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, float | None]:
    """A share (hits over weights, per unit) with its bootstrap interval over units."""
    if not hits:
        return {"value": None, "ci_low": None, "ci_high": None}
    h = np.asarray(hits, dtype=float)
    w = np.ones_like(h) if weights is None else np.asarray(weights, dtype=float)

    def of(pick: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return h[pick].sum(axis=1) / w[pick].sum(axis=1)

    return summary(float(h.sum() / w.sum()), resampled(len(h), of, cells_per_unit=2, resamples=resamples, seed=seed))


def group_gap(values: list[float], inside: list[bool], resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, float | None]:
    """mean(values inside) - mean(values outside), units resampled together; ``None``
    unless both groups have at least two units."""
    v, g = np.asarray(values, dtype=float), np.asarray(inside, dtype=bool)
    if g.sum() < 2 or (~g).sum() < 2:
        return {"value": None, "ci_low": None, "ci_high": None}

    def of(pick: np.ndarray) -> np.ndarray:
        vs, gs = v[pick], g[pick]
        with np.errstate(divide="ignore", invalid="ignore"):
            return (vs * gs).sum(axis=1) / gs.sum(axis=1) - (vs * ~gs).sum(axis=1) / (~gs).sum(axis=1)

    return summary(float(v[g].mean() - v[~g].mean()), resampled(len(v), of, cells_per_unit=3, resamples=resamples, seed=seed))
