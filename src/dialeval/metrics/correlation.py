"""Meta-evaluation: how well a metric ranks answers like humans do.

Kendall tau-b between a metric and human scores, and a paired permutation test for
the difference between two metrics' correlations with the same human scores. Samples
where the annotators all disagree are removed by the caller (see
:func:`dialeval.protocols.vdact.metrics.majority_vote`), as the paper does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dialeval.metrics.intervals import SEED, generator


@dataclass(frozen=True)
class Correlation:
    """Kendall tau-b with its p-value; ``tau`` is ``None`` when it is undefined."""

    tau: float | None
    p_value: float | None
    n: int
    reason: str | None = None


def _pairs(metric: Sequence[float | None], human: Sequence[float | None]) -> tuple[np.ndarray, np.ndarray]:
    if len(metric) != len(human):
        raise ValueError(f"{len(metric)} metric scores but {len(human)} human scores")
    keep = [(m, h) for m, h in zip(metric, human) if m is not None and h is not None]
    if not keep:
        return np.array([], dtype=float), np.array([], dtype=float)
    a, b = zip(*keep)
    return np.asarray(a, dtype=float), np.asarray(b, dtype=float)


def kendall_tau_b(metric: Sequence[float | None], human: Sequence[float | None]) -> Correlation:
    """Kendall tau-b over the samples where both scores exist.

    Undefined (``tau=None`` with a reason) with fewer than 2 samples or when either
    side is constant: tau-b divides by the number of untied pairs of each side.
    """
    from scipy.stats import kendalltau

    x, y = _pairs(metric, human)
    n = len(x)
    if n < 2:
        return Correlation(None, None, n, reason="fewer than 2 scored samples")
    if np.all(x == x[0]) or np.all(y == y[0]):
        return Correlation(None, None, n, reason="one side is constant (tau-b is 0/0)")
    result = kendalltau(x, y, variant="b")
    return Correlation(float(result.statistic), float(result.pvalue), n)


@dataclass(frozen=True)
class PermutationTest:
    """Observed tau(a) - tau(b) and its permutation p-value."""

    tau_a: float | None
    tau_b: float | None
    difference: float | None
    p_value: float | None
    n: int
    permutations: int
    alternative: str
    reason: str | None = None


def _normalised_ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks scaled to (0, 1]: keeps each metric's tau, puts both on one scale."""
    from scipy.stats import rankdata

    return rankdata(values) / len(values)


def permutation_test(
    metric_a: Sequence[float | None],
    metric_b: Sequence[float | None],
    human: Sequence[float | None],
    *,
    permutations: int = 10_000,
    seed: int = SEED,
    alternative: Literal["two-sided", "greater"] = "two-sided",
) -> PermutationTest:
    """Paired permutation test for tau(a, human) - tau(b, human).

    Under the null hypothesis the two metrics are exchangeable, so each permutation
    swaps a's and b's score of every sample with probability 1/2 and recomputes the
    difference. Scores are first turned into normalised ranks, which leaves each
    metric's Kendall tau unchanged and lets scores of different scales be swapped.
    Only samples scored by both metrics and the humans are used. ``greater`` tests
    whether a correlates better than b. The p-value is (k + 1) / (permutations + 1),
    k being the permutations at least as extreme as the observed difference.
    """
    if not len(metric_a) == len(metric_b) == len(human):
        raise ValueError("metric_a, metric_b and human need one score per sample each")
    if permutations < 1:
        raise ValueError("permutations must be at least 1")
    rows = [(a, b, h) for a, b, h in zip(metric_a, metric_b, human) if a is not None and b is not None and h is not None]
    n = len(rows)
    ta, tb = kendall_tau_b([r[0] for r in rows], [r[2] for r in rows]), kendall_tau_b([r[1] for r in rows], [r[2] for r in rows])
    if ta.tau is None or tb.tau is None:
        reason = ta.reason or tb.reason
        return PermutationTest(ta.tau, tb.tau, None, None, n, permutations, alternative, reason=reason)
    a = _normalised_ranks(np.array([r[0] for r in rows], dtype=float))
    b = _normalised_ranks(np.array([r[1] for r in rows], dtype=float))
    h = np.array([r[2] for r in rows], dtype=float)
    observed = ta.tau - tb.tau
    tau = _tau_function(h)
    rng = generator(seed)
    extreme = 0
    tolerance = 1e-12
    for _ in range(permutations):
        swap = rng.random(n) < 0.5
        pa = np.where(swap, b, a)
        pb = np.where(swap, a, b)
        d = tau(pa) - tau(pb)
        if alternative == "greater":
            extreme += d >= observed - tolerance
        else:
            extreme += abs(d) >= abs(observed) - tolerance
    p = (extreme + 1) / (permutations + 1)
    return PermutationTest(ta.tau, tb.tau, observed, p, n, permutations, alternative)


def _tau_function(human: np.ndarray):
    """tau-b against fixed human scores, fast when they take few values (1-3 ratings).

    Numerator: for each pair of human levels l < l', the metric's concordant minus
    discordant pairs, counted with binary search. A permuted side that is constant
    counts as 0 (no ordering). Many distinct human values fall back to scipy.
    """
    from scipy.stats import kendalltau

    levels = np.unique(human)
    if len(levels) > 10:
        def slow(x: np.ndarray) -> float:
            value = kendalltau(x, human, variant="b").statistic
            return 0.0 if math.isnan(value) else float(value)

        return slow
    groups = [human == level for level in levels]
    n = len(human)
    n0 = n * (n - 1) / 2
    n2 = sum(c * (c - 1) / 2 for c in (g.sum() for g in groups))

    def fast(x: np.ndarray) -> float:
        s = 0.0
        ordered = [np.sort(x[g]) for g in groups]
        for low in range(len(groups)):
            below = ordered[low]
            for high in range(low + 1, len(groups)):
                above = x[groups[high]]
                less = np.searchsorted(below, above, side="left")
                greater = len(below) - np.searchsorted(below, above, side="right")
                s += float((less - greater).sum())
        _, counts = np.unique(x, return_counts=True)
        n1 = float((counts * (counts - 1) / 2).sum())
        denominator = math.sqrt((n0 - n1) * (n0 - n2))
        return 0.0 if denominator == 0 else s / denominator

    return fast
