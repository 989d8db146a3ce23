"""A mean with its bootstrap 95% interval, for bars that show how sure a mean is.

Why: a question type with four turns and one with four hundred draw bars of the same
height; the interval says which bar to believe. Resampling uses a fixed seed, so a
figure drawn twice from one run is the same figure.
"""

from __future__ import annotations

import warnings
from typing import Sequence

SEED = 0
RESAMPLES = 2000  # enough for a figure's error bar; the compare statistics use more


def mean_with_interval(values: Sequence[float]) -> tuple[float | None, tuple[float, float] | None]:
    """``(mean, (low, high))`` by the percentile bootstrap; no interval under two values,
    and a zero-width one when every value is the same."""
    if not values:
        return None, None
    import numpy as np
    from scipy import stats

    data = np.asarray(values, dtype=float)
    mean = float(data.mean())
    if len(data) < 2:
        return mean, None
    if np.all(data == data[0]):
        return mean, (mean, mean)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = stats.bootstrap((data,), np.mean, confidence_level=0.95, n_resamples=RESAMPLES, method="percentile",
                                 random_state=np.random.default_rng(SEED))
    return mean, (float(result.confidence_interval.low), float(result.confidence_interval.high))
