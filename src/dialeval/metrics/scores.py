"""Score summaries shared by judged protocols: means, scaling, histograms, bunching."""

from __future__ import annotations

from collections import Counter
from statistics import fmean
from typing import Iterable, Sequence


def mean_or_none(values: Iterable[float | None]) -> float | None:
    """Mean of the values that exist; ``None`` (not 0) when there are none."""
    present = [float(v) for v in values if v is not None]
    return fmean(present) if present else None


def scale_to_unit(score: float, low: float, high: float) -> float:
    """Map a score on [low, high] to [0, 1] (1-3 -> (s-1)/2, 0-5 -> s/5)."""
    if high <= low:
        raise ValueError("scale needs high > low")
    return (score - low) / (high - low)


def histogram(values: Sequence[float]) -> dict[str, int]:
    counts = Counter(values)
    return {_label(k): counts[k] for k in sorted(counts)}


def _label(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def concentration(values: Sequence[float]) -> tuple[str | None, float]:
    """The most frequent score and its share: the score-concentration bias check."""
    if not values:
        return None, 0.0
    value, count = Counter(values).most_common(1)[0]
    return _label(value), count / len(values)
