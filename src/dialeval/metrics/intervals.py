"""A figure with its bootstrap 95% interval over units, for every headline figure and bar.

Why: a question type with four turns and one with four hundred draw bars of the same
height; the interval says which bar to believe. Resampling uses a fixed seed, so a
figure drawn twice from one run is the same figure. Units are resampled whole (a KGDS
sample, an MMDU dialogue, an MMRC question): :func:`mean_with_interval` for a mean of
per-unit values, :func:`statistic_with_interval` for a figure computed from the units
in another way (a mean of ability means).
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Sequence

SEED = 0
RESAMPLES = 2000  # enough for a figure's error bar; the compare statistics use more


def mean_with_interval(values: Sequence[float]) -> tuple[float | None, tuple[float, float] | None]:
    """``(mean, (low, high))`` by the percentile bootstrap; no interval under two values or
    when every value is the same (resampling identical units shows no spread, and a
    zero-width interval would claim a certainty the units cannot give)."""
    if not values:
        return None, None
    import numpy as np
    from scipy import stats

    data = np.asarray(values, dtype=float)
    mean = float(data.mean())
    if len(data) < 2:
        return mean, None
    if np.all(data == data[0]):
        return mean, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = stats.bootstrap((data,), np.mean, confidence_level=0.95, n_resamples=RESAMPLES, method="percentile",
                                 random_state=np.random.default_rng(SEED))
    return mean, (float(result.confidence_interval.low), float(result.confidence_interval.high))


def interval(values: Sequence[float]) -> list[float] | None:
    """The 95% interval of the mean of ``values`` as ``[low, high]`` (JSON), ``None`` under two values."""
    ci = mean_with_interval(values)[1]
    return None if ci is None else [ci[0], ci[1]]


def statistic_with_interval(units: int, statistic: Callable[[Any], float | None]) -> tuple[float | None, list[float] | None]:
    """``statistic(indices)`` over units ``0..units-1`` (a numpy array of unit indices), and its
    percentile-bootstrap 95% interval drawn by resampling the units (same seed and count as
    :func:`mean_with_interval`); no interval under two units or when a resample has no value."""
    import numpy as np
    from scipy import stats

    if units < 1:
        return None, None
    every = np.arange(units)
    value = statistic(every)
    if value is None or units < 2:
        return value, None

    def of(indices: Any) -> float:
        drawn = statistic(np.asarray(indices, dtype=int))
        return float("nan") if drawn is None else float(drawn)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = stats.bootstrap((every,), of, confidence_level=0.95, n_resamples=RESAMPLES, method="percentile",
                                 vectorized=False, random_state=np.random.default_rng(SEED))
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    if np.isnan(low) or np.isnan(high):
        return value, None
    if low == high:  # every resample gave one value: no spread to show, and never a zero-width interval
        return value, None if low == value else [min(low, value), max(high, value)]
    return value, [low, high]
