"""A judge's agreement with a reference per unit, each figure with a 95% bootstrap CI (pure).

Spearman, Kendall tau-b and Krippendorff's alpha of paired scores, and a percentile
bootstrap over units drawn by the one resampler (:mod:`dialeval.metrics.intervals`: its
seed, count and interval method; a draw where either side is constant is left out of
the percentiles).
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
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:
    from scipy import sparse

from dialeval.metrics.alpha import ALPHA_LEVEL, Level, Reliability
from dialeval.metrics.intervals import RESAMPLES, SEED, percentile_interval, step_for, unit_weights

TABLE_CELLS = 40_000  # Kendall from contingency tables up to 200 x 200 distinct values, else scipy per resample
STATISTICS = ("spearman", "kendall_tau_b", "krippendorff_alpha")
Interval = dict[str, float | None]


def _finite(x: Any) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


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


class Paired:
    """Two sides' scores of the same units, prepared once so that the three statistics of
    many unit weightings (bootstrap resamples) are cheap: :meth:`values`, :meth:`draws`."""

    def __init__(self, a: Sequence[float], b: Sequence[float], level: Level = ALPHA_LEVEL) -> None:
        from scipy import sparse

        self.x, self.y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        n = self.n = len(self.x)
        self.hot = (_one_hot(self.x), _one_hot(self.y))
        self.reliability = Reliability(np.column_stack([self.x, self.y]), level)
        self.shape = (self.hot[0][0].shape[1], self.hot[1][0].shape[1])
        self.tabled = self.shape[0] * self.shape[1] <= TABLE_CELLS  # few distinct values: Kendall from tables
        self.pairs = sparse.csr_matrix((np.ones(n), (np.arange(n), self.hot[0][1] * self.shape[1] + self.hot[1][1])),
                                       shape=(n, self.shape[0] * self.shape[1]))
        # tau depends on order and ties only: small integer ranks sort faster than the values
        self.rx, self.ry = (h[1].astype(np.min_scalar_type(h[0].shape[1])) for h in self.hot)

    @property
    def defined(self) -> bool:
        """At least 3 units and both sides vary: the statistics exist."""
        return self.n >= 3 and len(set(self.x)) > 1 and len(set(self.y)) > 1

    @property
    def step(self) -> int:
        """Resamples per batch: at most the resampler's batch of weights (or table cells) at once."""
        return step_for(max(self.n, self.shape[0] * self.shape[1] if self.tabled else 0))

    def values(self) -> dict[str, float]:
        from scipy import stats

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return {"spearman": stats.spearmanr(self.x, self.y).statistic,
                    "kendall_tau_b": stats.kendalltau(self.x, self.y, variant="b").statistic,
                    "krippendorff_alpha": self.reliability.alpha()[0]}

    def draws(self, weights: np.ndarray) -> dict[str, np.ndarray]:
        """Each statistic for each row of ``weights`` (resamples x units: how often each unit
        was drawn); NaN where a side is constant among the drawn units."""
        from scipy import stats

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ok = _varies(weights, self.hot)
            if self.tabled:
                kendall = np.where(ok, _weighted_kendall(weights, self.pairs, self.shape), np.nan)
            else:
                picks = (np.repeat(np.arange(self.n), w.astype(int)) for w in weights)
                kendall = np.array([stats.kendalltau(self.rx[p], self.ry[p], variant="b").statistic if good else np.nan
                                    for p, good in zip(picks, ok)])
            return {"spearman": np.where(ok, _weighted_spearman(weights, self.hot), np.nan),
                    "kendall_tau_b": kendall,
                    "krippendorff_alpha": np.where(ok, self.reliability.alpha(weights), np.nan)}


def paired_agreement(a: Sequence[float], b: Sequence[float], *, level: Level = ALPHA_LEVEL, seed: int = SEED,
                     resamples: int = RESAMPLES) -> dict[str, Interval]:
    """Spearman, Kendall tau-b and alpha of ``a`` against ``b`` (same units, same order),
    each ``{"value", "ci_low", "ci_high"}``; ``None`` where undefined (under 3 units, or
    one side constant)."""
    empty: Interval = {"value": None, "ci_low": None, "ci_high": None}
    paired = Paired(a, b, level) if len(a) >= 3 else None
    if paired is None or not paired.defined:
        return {name: dict(empty) for name in STATISTICS}
    draws: dict[str, list[np.ndarray]] = {name: [] for name in STATISTICS}
    for weights in unit_weights(paired.n, resamples, seed, paired.step):
        for name, drawn in paired.draws(weights).items():
            draws[name].append(drawn)
    values = paired.values()
    return {name: interval(values[name], np.concatenate(draws[name])) for name in STATISTICS}


def alpha_with_ci(data: np.ndarray, level: Level = ALPHA_LEVEL, *, seed: int = SEED, resamples: int = RESAMPLES) -> Interval:
    """Krippendorff's alpha of ``data`` (units x coders, NaN: no value) with a 95%
    percentile bootstrap CI over units (the annotators' own agreement)."""
    reliability = Reliability(data, level)
    step = step_for(int(np.size(data)))
    draws = [reliability.alpha(weights) for weights in unit_weights(reliability.units, resamples, seed, step)]
    return interval(reliability.alpha()[0], np.concatenate(draws))


def interval(value: float, draws: np.ndarray) -> Interval:
    """``{"value", "ci_low", "ci_high"}`` by the resampler's interval method."""
    low, high = percentile_interval(draws) or (None, None)
    return {"value": _finite(value), "ci_low": low, "ci_high": high}
