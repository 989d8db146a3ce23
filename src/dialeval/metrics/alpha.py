"""Krippendorff's alpha from value counts, fast enough to bootstrap (pure; numpy, scipy.sparse).

Why not the ``krippendorff`` package in a loop: it builds a units x values x values array
per call, so a CI over 10,000 units on a 0-100 scale (or real-valued labels, one value
per unit) runs for minutes and gigabytes. Here a resample is a vector of unit weights
(how often each unit was drawn) and alpha follows from weighted sums in O(units + values):
the ordinal distance is the squared distance between the values' mid-ranks, so ordinal,
interval and nominal alpha all reduce to sums of positions and their squares per unit.
The figures equal the package's (tests compare them).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

Level = Literal["nominal", "ordinal", "interval"]
# The one level every report, comparison and card states (in its column names): a rubric's
# scale is ordered, and an averaged label (2.5) falls between its neighbours by rank, so an
# interval reading of whole-number judges against averaged humans is never mixed in.
ALPHA_LEVEL: Level = "ordinal"
BATCH_CELLS = 2_000_000  # resample x unit x coder cells held at once (float64)


class Reliability:
    """Coders' values of some units (``data``: units x coders, NaN where a coder gave no
    value), prepared once so that :meth:`alpha` of many unit weightings is cheap."""

    def __init__(self, data: np.ndarray, level: Level = ALPHA_LEVEL) -> None:
        data = np.asarray(data, dtype=float)
        present = ~np.isnan(data)
        self.level = level
        self.domain = np.unique(data[present])
        self.m = present.sum(axis=1).astype(float)  # values per unit
        self.pairable = self.m >= 2
        # value index per cell; missing cells point at an extra slot whose position is 0
        self.index = np.where(present, np.searchsorted(self.domain, np.where(present, data, self.domain[0] if len(self.domain) else 0)),
                              len(self.domain))
        self.present = present
        rows = np.repeat(np.arange(len(data)), data.shape[1])[present.ravel()]
        cols = self.index[present]
        # unit x value counts of pairable units only (a lone value pairs with nothing)
        keep = self.pairable[rows]
        from scipy import sparse  # lazy: scipy takes half a second to import (dialeval list, --help)

        self.counts = sparse.csr_matrix((np.ones(int(keep.sum())), (rows[keep], cols[keep])), shape=(len(data), max(len(self.domain), 1)))

    @property
    def units(self) -> int:
        return len(self.m)

    def alpha(self, weights: np.ndarray | None = None) -> np.ndarray:
        """Alpha for each row of ``weights`` (resamples x units; ``None``: every unit once);
        NaN where undefined (no pairable unit, or no variation among pairable values)."""
        w = np.ones((1, self.units)) if weights is None else np.atleast_2d(np.asarray(weights, dtype=float))
        w = w * self.pairable  # units with fewer than two values do not count
        n_v = np.asarray(self.counts.T @ w.T).T  # resamples x values: pairable values
        total = n_v.sum(axis=1)
        if self.level == "nominal":
            observed = self._nominal_observed(w)
            expected = total**2 - (n_v**2).sum(axis=1)
        else:
            pos = self._positions(n_v)
            values = pos[:, :-1]
            expected = 2 * (total * (n_v * values**2).sum(axis=1) - (n_v * values).sum(axis=1) ** 2)
            observed = self._observed(w, pos)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = 1 - (total - 1) * observed / expected
        return np.where((expected > 0) & (total > 1), value, np.nan)

    def _positions(self, n_v: np.ndarray) -> np.ndarray:
        """Each value's position: itself (interval) or its mid-rank among the pairable
        values (ordinal), with a trailing 0 for missing cells."""
        if self.level == "interval":
            pos = np.broadcast_to(self.domain, n_v.shape)
        else:
            pos = np.cumsum(n_v, axis=1) - n_v / 2
        return np.concatenate([pos, np.zeros((len(n_v), 1))], axis=1)

    def _observed(self, w: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """sum over units of w_u / (m_u - 1) x sum over ordered value pairs of squared distance."""
        out = np.empty(len(w))
        step = max(1, BATCH_CELLS // max(self.index.size, 1))
        scale = np.where(self.pairable, 2 / np.maximum(self.m - 1, 1), 0.0)
        for start in range(0, len(w), step):
            p = pos[start:start + step][:, self.index]  # resamples x units x coders (missing -> 0)
            s1, s2 = p.sum(axis=2), (p**2).sum(axis=2)
            per_unit = scale * (self.m * s2 - s1**2)
            out[start:start + step] = (w[start:start + step] * per_unit).sum(axis=1)
        return out

    def _nominal_observed(self, w: np.ndarray) -> np.ndarray:
        squares = np.asarray(self.counts.multiply(self.counts).sum(axis=1)).ravel()
        per_unit = np.where(self.pairable, (self.m**2 - squares) / np.maximum(self.m - 1, 1), 0.0)
        return w @ per_unit


def krippendorff_alpha(data: np.ndarray, level: Level = ALPHA_LEVEL) -> float | None:
    """Alpha of ``data`` (units x coders, NaN: no value); ``None`` where undefined."""
    value = float(Reliability(data, level).alpha()[0])
    return value if np.isfinite(value) else None
