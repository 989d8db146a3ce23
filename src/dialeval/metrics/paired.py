"""The one paired test: the mean change ``b - a`` of scores paired unit by unit, its 95%
interval, and what the units can decide.

Why: a bootstrap interval over four identical drops is ``[-1, -1]``, which reads as
certainty four units cannot give. This test is valid at every number of units:

- Up to :data:`EXACT_UNITS` units, the exact paired sign-flip (permutation) test and its
  inverted interval (Hartigan's subset means: the 2^n - 1 means of the non-empty subsets
  of differences, whose k-th largest is the bound). Exact when the two systems' scores of
  a unit are exchangeable; 4 units can never show a change at 95% (the smallest one-sided
  p is 1/16 = 0.0625).
- At every n, a t interval whose variance starts from :data:`PRIOR_UNITS` pseudo-units at
  the largest variance the scale allows (``bound**2``: rare large drops the first units
  did not show cannot be ruled out) and whose centre is corrected for skew (Johnson 1978).
  Up to :data:`EXACT_UNITS` units the interval is the hull of both, so it is exact where
  the sign-flip test is and holds where the differences are skewed.

Every comparison uses it: the gate, ``dialeval compare``, the reports' system tables and
trust's differences, so the same pair of runs prints the same figure everywhere. False-fail
rates and coverage are measured in ``benchmarks/paired_test_validity.py`` (docs/gate.md).
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Sequence

import numpy as np

ALPHA = 0.05
EXACT_UNITS = 16  # 2^16 - 1 subset means: exact enumeration up to here
PRIOR_UNITS = 3  # pseudo-units at the scale's largest variance the t interval's variance starts from
FEW_UNITS = 10  # below this many shared units the test is marked as resting on very few


def _t_ppf(q: float, df: np.ndarray | int) -> Any:
    from scipy import stats

    return stats.t.ppf(q, np.maximum(df, 1))


def t_interval(diffs: Any, bound: float, alpha: float = ALPHA) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Low, high and two-sided p of the prior-variance, skew-corrected t interval of the mean
    of ``diffs`` (last axis; leading axes are independent comparisons)."""
    from scipy import stats

    d = np.asarray(diffs, dtype=float)
    n = d.shape[-1]
    mean = d.mean(axis=-1)
    centred = d - mean[..., None]
    var = (PRIOR_UNITS * bound**2 + (centred**2).sum(axis=-1)) / (n - 1 + PRIOR_UNITS)
    centre = mean + (centred**3).mean(axis=-1) / (6 * var * n)
    se = np.sqrt(var / n)
    half = _t_ppf(1 - alpha / 2, n - 1) * se
    p = 2 * stats.t.sf(np.abs(centre) / se, max(n - 1, 1))
    return centre - half, centre + half, np.minimum(p, 1.0)


def _subsets(n: int) -> np.ndarray:
    """(2^n - 1) x n of 0/1: each row one non-empty subset of the units."""
    return ((np.arange(1, 2**n)[:, None] >> np.arange(n)) & 1).astype(float)


def _subset_weights(n: int) -> np.ndarray:
    """(2^n - 1) x n: each row averages one non-empty subset of the units."""
    rows = _subsets(n)
    return rows / rows.sum(axis=1, keepdims=True)


def subset_means(diffs: Any) -> np.ndarray:
    """The means of every non-empty subset of the differences (last axis), sorted."""
    d = np.asarray(diffs, dtype=float)
    return np.sort(d @ _subset_weights(d.shape[-1]).T, axis=-1)


def sign_flip_interval(diffs: Any, alpha: float = ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """The inverted exact sign-flip interval (n <= :data:`EXACT_UNITS`): the set of centres no
    one-sided test at ``alpha / 2`` rejects; infinite where n units cannot reject any."""
    d = np.asarray(diffs, dtype=float)
    n = d.shape[-1]
    k = math.floor(alpha / 2 * 2**n) - 1  # rejected: at most k subset means beyond the centre
    lead = d.shape[:-1]
    if k < 0:
        return np.full(lead, -np.inf), np.full(lead, np.inf)
    means = subset_means(d)
    return means[..., k], means[..., -(k + 1)]


def sign_flip_p(diffs: Sequence[float], centre: float = 0.0) -> float:
    """Two-sided exact sign-flip p-value of ``centre``: twice the smaller one-sided share of
    sign flips at least as extreme (the flips that change nothing included)."""
    d = np.asarray(diffs, dtype=float)
    rows = _subsets(len(d))
    excess = rows @ (d - centre)  # a subset's sum beyond the centre: flipping it moves the sum by twice this
    tol = 1e-9 * max(1.0, float(np.abs(d - centre).sum()))  # equal sums stay equal in floating point
    total = 2 ** len(d)
    low = (1 + int((excess >= -tol).sum())) / total  # flips that leave the sum this low or lower
    high = (1 + int((excess <= tol).sum())) / total
    return min(1.0, 2 * min(low, high))


def interval(diffs: Any, bound: float, alpha: float = ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """The test's interval of the mean of ``diffs`` (last axis), bounded by ``±bound``."""
    d = np.asarray(diffs, dtype=float)
    low, high, _ = t_interval(d, bound, alpha)
    if d.shape[-1] <= EXACT_UNITS:
        exact_low, exact_high = sign_flip_interval(d, alpha)
        low, high = np.minimum(low, exact_low), np.maximum(high, exact_high)
    return np.maximum(low, -bound), np.minimum(high, bound)


def units_needed(alpha: float = ALPHA) -> int:
    """The fewest units whose exact test can show a change at all (one-sided p <= alpha / 2)."""
    return math.ceil(math.log2(2 / alpha))


def paired_difference(a: Sequence[float], b: Sequence[float], *, bound: float | None = None, alpha: float = ALPHA) -> dict[str, Any]:
    """``b - a`` over paired scores: ``n``, both means, ``mean_diff``, ``ci_low``/``ci_high``
    (``None`` under two units), a two-sided ``p_value`` of no change, ``smallest_p`` (the
    smallest one-sided p these many units can give), ``method`` and the ``bound`` used
    (default: the widest difference seen, at least 1)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = y - x
    n = len(d)
    out: dict[str, Any] = {"n": n, "mean_a": float(x.mean()) if n else None, "mean_b": float(y.mean()) if n else None,
                           "mean_diff": float(d.mean()) if n else None, "ci_low": None, "ci_high": None, "p_value": None,
                           "smallest_p": 0.5**n if n else None, "few_units": n < FEW_UNITS, "alpha": alpha,
                           "method": "exact sign-flip and t" if n <= EXACT_UNITS else "t"}
    if bound is None:
        bound = max(1.0, float(np.abs(d).max()) if n else 1.0)
    out["bound"] = bound
    if n < 2:
        return out
    low, high = interval(d, bound, alpha)
    _, _, p = t_interval(d, bound, alpha)
    p_value = float(p)
    if n <= EXACT_UNITS:
        p_value = max(p_value, sign_flip_p(d))
    out.update(ci_low=float(low), ci_high=float(high), p_value=p_value)
    return out


def regression_verdict(test: dict[str, Any], margin: float) -> dict[str, Any]:
    """What a paired test of ``run - baseline`` says of a drop beyond ``margin``: ``status``
    ``fail`` (the interval lies below ``-margin``), ``pass`` (it lies at or above), or
    ``undecided`` with the ``reason`` and ``smallest_drop``, the drop these units could show
    at this spread (``None`` when no drop could be shown at all)."""
    n, low, high = test["n"], test["ci_low"], test["ci_high"]
    alpha = test.get("alpha", ALPHA)
    if low is None or high is None:
        return {"status": "undecided", "reason": f"{n} unit(s) judged in both runs: no interval", "smallest_drop": None}
    if high < -margin:
        return {"status": "fail", "reason": None, "smallest_drop": None}
    if low >= -margin:
        return {"status": "pass", "reason": None, "smallest_drop": None}
    if test["smallest_p"] > alpha / 2:
        reason = (f"{n} units: the smallest possible p is {test['smallest_p']:.4g} (one-sided), above {alpha / 2:g}; "
                  f"no drop can be shown with fewer than {units_needed(alpha)} units")
        return {"status": "undecided", "reason": reason, "smallest_drop": None}
    half = (high - low) / 2
    smallest = margin + half
    reason = (f"the 95% CI [{low:+.3f}, {high:+.3f}] holds both a drop beyond {margin:g} and none; "
              f"at this spread {n} units show only drops larger than {smallest:.3f}")
    return {"status": "undecided", "reason": reason, "smallest_drop": smallest}


def paired_test(a: dict[str, float | None], b: dict[str, float | None], *, bound: float | None = None,
                alpha: float = ALPHA) -> dict[str, Any]:
    """:func:`paired_difference` of two systems' scores ``{unit: score}`` over the units both
    have a score for, with ``only_a`` / ``only_b`` (units one side lacks)."""
    units = sorted(u for u in set(a) & set(b) if a[u] is not None and b[u] is not None)
    x = [float(a[u]) for u in units]  # type: ignore[arg-type]
    y = [float(b[u]) for u in units]  # type: ignore[arg-type]
    only = {"only_a": sum(1 for u in a if a[u] is not None and u not in units),
            "only_b": sum(1 for u in b if b[u] is not None and u not in units)}
    return {**paired_difference(x, y, bound=bound, alpha=alpha), **only}


def system_tests(scores: dict[str, dict[str, dict[str, float | None]]], *,
                 scales: dict[str, tuple[float, float]] | None = None) -> list[dict[str, Any]]:
    """Every pair of systems, per dimension: ``scores`` is system -> dimension -> {unit: score};
    ``scales`` give a dimension's range (its bound). Empty with fewer than two systems."""
    from dialeval.metrics.sequential import score_bound

    out = []
    for (name_a, sa), (name_b, sb) in itertools.combinations(sorted(scores.items()), 2):
        for dim in [d for d in sa if d in sb]:
            seen = [float(v) for side in (sa[dim], sb[dim]) for v in side.values() if v is not None]
            bound = score_bound(dim, scales or {}, seen)
            out.append({"dimension": dim, "a": name_a, "b": name_b, **paired_test(sa[dim], sb[dim], bound=bound)})
    return out
