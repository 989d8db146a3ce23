"""Agreement between two runs' scores of the same units (pure; scipy, and alpha by counts).

Used by ``dialeval compare``: two judges (or two systems) scored the same items; how
alike are the scores, and is the mean difference more than the units' noise (the paired
test of :mod:`dialeval.metrics.paired`, the gate's)? Every
statistic comes from a maintained library; a value that is undefined for the data (a
correlation of constant scores) is ``None``, never 0.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Sequence, cast

import numpy as np

from dialeval.metrics.alpha import ALPHA_LEVEL

def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


def is_discrete(values: Sequence[float]) -> bool:
    """Scores on an integer scale (1-5, 0-10): exact/adjacent agreement and ordinal alpha apply."""
    return bool(len(values)) and all(float(v).is_integer() for v in values)


def correlations(a: Sequence[float], b: Sequence[float]) -> dict[str, float | None]:
    """Pearson r, Spearman rho and Kendall tau-b with their p-values (None when undefined)."""
    from scipy import stats

    out: dict[str, float | None] = dict.fromkeys(
        ("pearson", "pearson_p", "spearman", "spearman_p", "kendall_tau_b", "kendall_p"), None
    )
    if len(a) < 2 or len(set(a)) < 2 or len(set(b)) < 2:
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = stats.pearsonr(a, b)
        rho = stats.spearmanr(a, b)
        tau = stats.kendalltau(a, b, variant="b")
    out.update(
        pearson=_finite(r.statistic), pearson_p=_finite(r.pvalue),
        spearman=_finite(rho.statistic), spearman_p=_finite(rho.pvalue),
        kendall_tau_b=_finite(tau.statistic), kendall_p=_finite(tau.pvalue),
    )
    return out


def krippendorff_alpha(a: Sequence[float], b: Sequence[float], level: str = ALPHA_LEVEL) -> float | None:
    """Krippendorff's alpha of two coders at the one stated level (:data:`ALPHA_LEVEL`, as
    the run report and the trust card read it), from value counts."""
    from dialeval.metrics.alpha import krippendorff_alpha as alpha

    if len(a) < 2 or len(set(a) | set(b)) < 2:
        return None  # no variation at all: alpha is undefined
    return alpha(np.column_stack([np.asarray(a, dtype=float), np.asarray(b, dtype=float)]), cast(Any, level))


def agreement(a: Sequence[float], b: Sequence[float], *, bound: float | None = None) -> dict[str, Any]:
    """Everything ``compare`` reports for one dimension and one pair of runs; the mean
    difference ``b - a`` comes from the one paired test (:mod:`dialeval.metrics.paired`,
    ``bound``: the largest possible difference, the scale's width)."""
    from dialeval.metrics.paired import paired_difference

    a, b = [float(v) for v in a], [float(v) for v in b]
    discrete = is_discrete(a + b)
    n = len(a)
    diffs = [abs(u - v) for u, v in zip(a, b)]
    out: dict[str, Any] = {
        "n": n,
        "scale": "integer" if discrete else "continuous",
        **correlations(a, b),
        "exact_agreement": (sum(d == 0 for d in diffs) / n) if n and discrete else None,
        "adjacent_agreement": (sum(d <= 1 for d in diffs) / n) if n and discrete else None,
        "krippendorff_alpha": krippendorff_alpha(a, b, ALPHA_LEVEL) if n else None,
        "alpha_level": ALPHA_LEVEL,
    }
    if n:
        test = paired_difference(a, b, bound=bound)
        out.update({k: test[k] for k in ("mean_a", "mean_b", "mean_diff", "ci_low", "ci_high", "p_value", "smallest_p", "method")})
    return out
