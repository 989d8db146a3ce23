"""Agreement statistics over bootstrap resamples, computed for all resamples at once (pure).

Why not scipy in a loop: a card holds a statistic per candidate, criterion and figure,
each with 999 resamples; ranking every resample row at once (``rankdata(axis=1)``) and
counting concordant pairs with one array operation keeps a card to seconds. The values
equal scipy's (``spearmanr``, ``kendalltau`` variant b) and the ``krippendorff``
package's (two coders, ordinal), which the tests check.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

SEED = 0
RESAMPLES = 999
PAIR_CELLS = 4_000_000  # resample x unit x unit cells held at once by Kendall's tau (many distinct scores)
MAX_LEVELS = 1000  # up to this many distinct scores, ranks come from counts per level
TABLE_CELLS = 400  # up to this many (x level, y level) cells, tau counts pairs from a table of counts


def indices(n: int, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """``resamples`` x ``n`` unit indices drawn with replacement (row 0 is not special)."""
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks along the last axis, as ``scipy.stats.rankdata`` gives them; scores on
    a few levels (a rubric's scale) are ranked by counting each row's levels, not sorting."""
    levels, codes = np.unique(x, return_inverse=True)
    if len(levels) > MAX_LEVELS or x.ndim != 2:
        from scipy.stats import rankdata

        return rankdata(x, axis=-1)
    rows, k = x.shape[0], len(levels)
    codes = codes.reshape(x.shape)
    counts = np.bincount((np.arange(rows)[:, None] * k + codes).ravel(), minlength=rows * k).reshape(rows, k)
    mid = np.cumsum(counts, axis=1) - (counts - 1) / 2  # the average rank of each level in its row
    return np.take_along_axis(mid, codes, axis=1)


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    dx = x - x.mean(axis=-1, keepdims=True)
    dy = y - y.mean(axis=-1, keepdims=True)
    denominator = np.sqrt((dx**2).sum(axis=-1) * (dy**2).sum(axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, (dx * dy).sum(axis=-1) / denominator, np.nan)


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row pair (NaN where a row is constant)."""
    return _pearson_rows(_ranks(x), _ranks(y))


def kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row pair (NaN where a row is constant)."""
    x, y = np.atleast_2d(x).astype(float), np.atleast_2d(y).astype(float)
    levels_x, codes_x = np.unique(x, return_inverse=True)
    levels_y, codes_y = np.unique(y, return_inverse=True)
    if len(levels_x) * len(levels_y) <= TABLE_CELLS:
        return _kendall_table(codes_x.reshape(x.shape), codes_y.reshape(y.shape), len(levels_x), len(levels_y))
    rows, n = x.shape
    out = np.empty(rows)
    step = max(1, PAIR_CELLS // max(n * n, 1))
    for start in range(0, rows, step):
        a, b = x[start:start + step], y[start:start + step]
        sx = np.sign(a[:, :, None] - a[:, None, :])
        sy = np.sign(b[:, :, None] - b[:, None, :])
        out[start:start + step] = _tau_b((sx * sy).sum(axis=(1, 2)), np.abs(sx).sum(axis=(1, 2)), np.abs(sy).sum(axis=(1, 2)))
    return out


def _tau_b(concordance: np.ndarray, untied_x: np.ndarray, untied_y: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((untied_x > 0) & (untied_y > 0), concordance / np.sqrt(untied_x * untied_y), np.nan)


def _kendall_table(cx: np.ndarray, cy: np.ndarray, kx: int, ky: int) -> np.ndarray:
    """tau-b from each row's kx x ky table of counts (scores on a few levels: a rubric's
    scale): concordant pairs are a cell times every cell above and to the right of it."""
    rows = cx.shape[0]
    flat = (np.arange(rows)[:, None] * (kx * ky) + cx * ky + cy).ravel()
    table = np.bincount(flat, minlength=rows * kx * ky).reshape(rows, kx, ky).astype(float)
    # above[i, j]: cells with x level > i and y level > j; below_left: x level > i, y level < j
    tail = table[:, ::-1, ::-1].cumsum(axis=1).cumsum(axis=2)[:, ::-1, ::-1]
    above = np.zeros_like(table)
    above[:, :-1, :-1] = tail[:, 1:, 1:]
    left = table[:, ::-1, :].cumsum(axis=1)[:, ::-1, :].cumsum(axis=2)
    below_left = np.zeros_like(table)
    below_left[:, :-1, 1:] = left[:, 1:, :-1]
    concordance = 2 * ((table * above).sum(axis=(1, 2)) - (table * below_left).sum(axis=(1, 2)))
    n = table.sum(axis=(1, 2))
    pairs = n * (n - 1)
    untied_x = pairs - (table.sum(axis=2) * (table.sum(axis=2) - 1)).sum(axis=1)
    untied_y = pairs - (table.sum(axis=1) * (table.sum(axis=1) - 1)).sum(axis=1)
    return _tau_b(concordance, untied_x, untied_y)


def alpha_rows(x: np.ndarray, y: np.ndarray, level: str = "ordinal") -> np.ndarray:
    """Krippendorff's alpha of two coders per row (every unit coded by both).

    The ordinal distance between two values is the squared distance between their
    mid-ranks among all values, so ordinal alpha is interval alpha on those ranks:
    ``1 - (N - 1) * sum 2 (a - b)^2 / (2 (N sum v^2 - (sum v)^2))`` over ``N = 2n`` values."""
    x, y = np.atleast_2d(x).astype(float), np.atleast_2d(y).astype(float)
    pooled = np.concatenate([x, y], axis=1)
    values = _ranks(pooled) if level == "ordinal" else pooled
    n = x.shape[1]
    a, b = values[:, :n], values[:, n:]
    total = 2 * n
    observed = 2 * ((a - b) ** 2).sum(axis=1)
    expected = 2 * (total * (values**2).sum(axis=1) - values.sum(axis=1) ** 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1 - (total - 1) * observed / expected, np.nan)


Statistic = Callable[[np.ndarray, np.ndarray], np.ndarray]
STATISTICS: dict[str, Statistic] = {"spearman": spearman_rows, "kendall_tau_b": kendall_rows, "krippendorff_alpha": alpha_rows}


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def summary(point: float, draws: np.ndarray) -> dict[str, float | None]:
    """The figure and its 95% percentile interval; resamples where it is undefined (all
    scores alike) are left out; ``None`` where the figure itself is undefined."""
    kept = draws[np.isfinite(draws)]
    if not math.isfinite(point) or not len(kept):
        return {"value": _finite(point), "ci_low": None, "ci_high": None}
    low, high = np.percentile(kept, [2.5, 97.5])
    return {"value": float(point), "ci_low": float(low), "ci_high": float(high)}


def paired(x: list[float], y: list[float], name: str, resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, float | None]:
    """One statistic of paired scores with its bootstrap interval (units resampled)."""
    if len(x) < 3:
        return {"value": None, "ci_low": None, "ci_high": None}
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    pick = indices(len(a), resamples, seed)
    statistic = STATISTICS[name]
    return summary(float(statistic(a[None], b[None])[0]), statistic(a[pick], b[pick]))


def share(hits: list[float], weights: list[float] | None = None, resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, float | None]:
    """A share (hits over weights, per unit) with its bootstrap interval over units."""
    if not hits:
        return {"value": None, "ci_low": None, "ci_high": None}
    h = np.asarray(hits, dtype=float)
    w = np.ones_like(h) if weights is None else np.asarray(weights, dtype=float)
    pick = indices(len(h), resamples, seed)
    with np.errstate(divide="ignore", invalid="ignore"):
        draws = h[pick].sum(axis=1) / w[pick].sum(axis=1)
    return summary(float(h.sum() / w.sum()), draws)


def group_gap(values: list[float], inside: list[bool], resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, float | None]:
    """mean(values inside) - mean(values outside), units resampled together; ``None``
    unless both groups have at least two units."""
    v, g = np.asarray(values, dtype=float), np.asarray(inside, dtype=bool)
    if g.sum() < 2 or (~g).sum() < 2:
        return {"value": None, "ci_low": None, "ci_high": None}
    pick = indices(len(v), resamples, seed)
    vs, gs = v[pick], g[pick]
    with np.errstate(divide="ignore", invalid="ignore"):
        draws = (vs * gs).sum(axis=1) / gs.sum(axis=1) - (vs * ~gs).sum(axis=1) / (~gs).sum(axis=1)
    return summary(float(v[g].mean() - v[~g].mean()), draws)
