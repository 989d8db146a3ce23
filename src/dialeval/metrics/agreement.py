"""Agreement between two runs' scores of the same units (pure; scipy, and alpha by counts).

Used by ``dialeval compare``: two judges (or two systems) scored the same items; how
alike are the scores, and is the mean difference more than resampling noise? Every
statistic comes from a maintained library; a value that is undefined for the data (a
correlation of constant scores) is ``None``, never 0.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Sequence, cast

import numpy as np

from dialeval.metrics import SEED
from dialeval.metrics.alpha import ALPHA_LEVEL

RESAMPLES = 9999
# resampled values held at once (float64: 8 bytes each); scipy draws the same resamples
# in batches, so the figures are identical and memory stays flat however many units
BATCH_CELLS = 500_000


def _batch(n: int) -> int:
    """Resamples per batch for ``n`` units: at most :data:`BATCH_CELLS` values at once."""
    return max(1, min(RESAMPLES, BATCH_CELLS // max(n, 1)))


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


def mean_difference(a: Sequence[float], b: Sequence[float], *, seed: int = SEED) -> dict[str, Any]:
    """Mean of ``b - a`` with a paired bootstrap 95% CI and a paired permutation p-value.

    The bootstrap resamples units (pairs stay together, BCa interval); the permutation
    test swaps the two scores within random pairs (two-sided).
    """
    from scipy import stats

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    diff = y - x
    out: dict[str, Any] = {"mean_a": float(x.mean()), "mean_b": float(y.mean()), "mean_diff": float(diff.mean()),
                           "ci_low": None, "ci_high": None, "p_value": None}
    if len(diff) < 2:
        return out
    out["p_value"] = _permutation_p(x, y, seed)
    if np.all(diff == diff[0]):  # no spread: every resample gives the same mean
        out.update(ci_low=float(diff[0]), ci_high=float(diff[0]))
        return out
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        method = "BCa" if len(diff) <= 5000 else "percentile"  # BCa's jackknife grows as n^2
        ci = stats.bootstrap((diff,), np.mean, confidence_level=0.95, n_resamples=RESAMPLES, method=method, random_state=rng,
                             batch=_batch(len(diff)))
    out.update(ci_low=_finite(ci.confidence_interval.low), ci_high=_finite(ci.confidence_interval.high))
    return out


def _permutation_p(x: np.ndarray, y: np.ndarray, seed: int) -> float | None:
    from scipy import stats

    def statistic(u: np.ndarray, v: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(v - u, axis=axis)

    result = stats.permutation_test(
        (x, y), statistic, permutation_type="samples", vectorized=True, n_resamples=RESAMPLES,
        alternative="two-sided", random_state=np.random.default_rng(seed), batch=_batch(len(x)),
    )
    return _finite(result.pvalue)


def agreement(a: Sequence[float], b: Sequence[float], *, seed: int = SEED) -> dict[str, Any]:
    """Everything ``compare`` reports for one dimension and one pair of runs."""
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
        out.update(mean_difference(a, b, seed=seed))
    return out
