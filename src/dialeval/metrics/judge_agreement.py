"""A judge's agreement with a reference per unit, each figure with a 95% bootstrap CI (pure).

Spearman, Kendall tau-b and Krippendorff's alpha of paired scores, and a percentile
bootstrap over units (fixed seed, :data:`RESAMPLES` draws; a draw where either side is
constant is left out of the percentiles, which ``scipy.stats.bootstrap`` cannot do).
Why not recompute each statistic on each resample: alpha's package builds a units x
values x values array per call (minutes and gigabytes at 10,000 units on a 0-100 scale).
A resample here is a vector of unit counts; Spearman (weighted mid-ranks) and alpha
(:mod:`dialeval.metrics.alpha`) follow from it in O(units + values), in batches, so time
and memory stay flat. Kendall's tau-b comes from each resample's contingency table where
there are few distinct values (a 0-100 scale), else from scipy on the drawn units.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

if TYPE_CHECKING:
    from scipy import sparse

from dialeval.metrics.alpha import Level, Reliability

SEED = 0
RESAMPLES = 999
BATCH_CELLS = 2_000_000  # resample x unit counts held at once (float64: 16 MB)
TABLE_CELLS = 40_000  # Kendall from contingency tables up to 200 x 200 distinct values, else scipy per resample
STATISTICS = ("spearman", "kendall_tau_b", "krippendorff_alpha")
Interval = dict[str, float | None]


def _finite(x: Any) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


def _draws(n: int, seed: int) -> Iterator[np.ndarray]:
    """The bootstrap's resamples as unit indices, one at a time (the same stream as
    ``rng.integers(0, n, n)`` per resample, so the figures do not depend on batching)."""
    rng = np.random.default_rng(seed)
    for _ in range(RESAMPLES):
        yield rng.integers(0, n, n)


def _one_hot(values: np.ndarray) -> tuple[sparse.csr_matrix, np.ndarray]:
    """units x distinct values (1 where the unit has the value), and each unit's value index."""
    from scipy import sparse  # lazy: scipy takes half a second to import (dialeval list, --help)

    domain, index = np.unique(values, return_inverse=True)
    return sparse.csr_matrix((np.ones(len(values)), (np.arange(len(values)), index)), shape=(len(values), len(domain))), index


def _weighted_spearman(weights: np.ndarray, hot: tuple[Any, ...]) -> np.ndarray:
    """Spearman's rho of units drawn ``weights`` times (rows: resamples): Pearson's r of
    the mid-ranks, as scipy ranks ties (average rank)."""
    (ha, ia), (hb, ib) = hot
    ranks = []
    for h, i in ((ha, ia), (hb, ib)):
        counts = np.asarray(h.T @ weights.T).T
        ranks.append((np.cumsum(counts, axis=1) - counts / 2)[:, i])
    total = weights.sum(axis=1, keepdims=True)
    ra, rb = (r - (weights * r).sum(axis=1, keepdims=True) / total for r in ranks)
    cov = (weights * ra * rb).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return cov / np.sqrt((weights * ra**2).sum(axis=1) * (weights * rb**2).sum(axis=1))


def _weighted_kendall(weights: np.ndarray, pairs: sparse.csr_matrix, shape: tuple[int, int]) -> np.ndarray:
    """Kendall's tau-b of units drawn ``weights`` times, from each resample's contingency
    table (``pairs``: units x value pairs): concordant and discordant pairs are sums of
    the table against its corner sums, ties its row and column sums (as scipy counts them)."""
    table = np.asarray(pairs.T @ weights.T).T.reshape(len(weights), *shape)
    below_right = table[:, ::-1, ::-1].cumsum(1).cumsum(2)[:, ::-1, ::-1]  # k >= i, l >= j
    below_left = table[:, ::-1, :].cumsum(1)[:, ::-1, :].cumsum(2)  # k >= i, l <= j
    concordant = (table[:, :-1, :-1] * below_right[:, 1:, 1:]).sum(axis=(1, 2))
    discordant = (table[:, :-1, 1:] * below_left[:, 1:, :-1]).sum(axis=(1, 2))
    total = weights.sum(axis=1)
    rows, cols = table.sum(axis=2), table.sum(axis=1)
    pairs_all = total * (total - 1) / 2
    x_ties, y_ties = (rows * (rows - 1)).sum(axis=1) / 2, (cols * (cols - 1)).sum(axis=1) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return (concordant - discordant) / np.sqrt((pairs_all - x_ties) * (pairs_all - y_ties))


def _varies(weights: np.ndarray, hot: tuple[Any, ...]) -> np.ndarray:
    """Resamples in which both sides take at least two distinct values."""
    return np.all([(np.asarray(h.T @ weights.T).T > 0).sum(axis=1) > 1 for h, _ in hot], axis=0)


def paired_agreement(a: Sequence[float], b: Sequence[float], *, level: Level = "ordinal", seed: int = SEED) -> dict[str, Interval]:
    """Spearman, Kendall tau-b and alpha of ``a`` against ``b`` (same units, same order),
    each ``{"value", "ci_low", "ci_high"}``; ``None`` where undefined (under 3 units, or
    one side constant)."""
    empty: Interval = {"value": None, "ci_low": None, "ci_high": None}
    if len(a) < 3 or len(set(a)) < 2 or len(set(b)) < 2:
        return {name: dict(empty) for name in STATISTICS}
    from scipy import sparse, stats

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = len(x)
    hot = (_one_hot(x), _one_hot(y))
    reliability = Reliability(np.column_stack([x, y]), level)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = {
            "spearman": stats.spearmanr(x, y).statistic,
            "kendall_tau_b": stats.kendalltau(x, y, variant="b").statistic,
            "krippendorff_alpha": reliability.alpha()[0],
        }
        draws: dict[str, list[np.ndarray]] = {name: [] for name in STATISTICS}
        shape = (hot[0][0].shape[1], hot[1][0].shape[1])
        tabled = shape[0] * shape[1] <= TABLE_CELLS  # few distinct values: Kendall from tables
        pairs = sparse.csr_matrix((np.ones(n), (np.arange(n), hot[0][1] * shape[1] + hot[1][1])), shape=(n, shape[0] * shape[1]))
        step = max(1, BATCH_CELLS // max(n, shape[0] * shape[1] if tabled else 0))
        # tau depends on order and ties only: small integer ranks sort faster than the values
        rx, ry = (h[1].astype(np.min_scalar_type(h[0].shape[1])) for h in hot)
        stream = _draws(n, seed)
        for start in range(0, RESAMPLES, step):
            batch = [next(stream) for _ in range(min(step, RESAMPLES - start))]
            weights = np.stack([np.bincount(p, minlength=n) for p in batch]).astype(float)
            ok = _varies(weights, hot)
            draws["spearman"].append(np.where(ok, _weighted_spearman(weights, hot), np.nan))
            draws["krippendorff_alpha"].append(np.where(ok, reliability.alpha(weights), np.nan))
            draws["kendall_tau_b"].append(np.where(ok, _weighted_kendall(weights, pairs, shape), np.nan) if tabled else np.array([
                stats.kendalltau(rx[p], ry[p], variant="b").statistic if good else np.nan for p, good in zip(batch, ok)
            ]))
    return {name: _interval(values[name], np.concatenate(draws[name])) for name in STATISTICS}


def alpha_with_ci(data: np.ndarray, level: Level = "ordinal", *, seed: int = SEED) -> Interval:
    """Krippendorff's alpha of ``data`` (units x coders, NaN: no value) with a 95%
    percentile bootstrap CI over units (the annotators' own agreement)."""
    reliability = Reliability(data, level)
    n = reliability.units
    step = max(1, BATCH_CELLS // max(np.size(data), 1))
    stream = _draws(n, seed)
    draws = [reliability.alpha(np.stack([np.bincount(next(stream), minlength=n) for _ in range(min(step, RESAMPLES - start))]).astype(float))
             for start in range(0, RESAMPLES, step)]
    return _interval(reliability.alpha()[0], np.concatenate(draws))


def _interval(value: float, draws: np.ndarray) -> Interval:
    if not np.isfinite(draws).any():
        return {"value": _finite(value), "ci_low": None, "ci_high": None}
    low, high = np.nanpercentile(draws, [2.5, 97.5])
    return {"value": _finite(value), "ci_low": _finite(low), "ci_high": _finite(high)}
