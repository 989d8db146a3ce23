"""The annotators' own agreement: the ceiling a judge's agreement with them is read against (pure).

Why: a judge whose Spearman with the human mean is 0.6 is good where people agree with
each other at 0.65, and poor where they agree at 0.9. Two figures, as reliability
studies report them: Krippendorff's alpha among all annotators (ordinal, with a 95%
bootstrap CI over units), and each annotator's Spearman against the mean of the others
on the units they share (their mean, ``leave_one_out``, sits beside the judge's Spearman
against the mean of all).
"""

from __future__ import annotations

import warnings
from statistics import fmean
from typing import Any

import numpy as np

from dialeval.metrics.judge_agreement import alpha_with_ci


def annotator_agreement(table: dict[str, dict[str, float]]) -> dict[str, Any]:
    """``table``: unit -> {annotator: score}. Returns annotators, units, units with two or
    more labels, ``alpha`` (value and CI), ``per_annotator`` (n, spearman) and
    ``leave_one_out``; figures are ``None`` where undefined (fewer than two such units)."""
    annotators = list(dict.fromkeys(a for scores in table.values() for a in scores))
    data = np.array([[scores.get(a, np.nan) for a in annotators] for scores in table.values()], dtype=float)
    data = data.reshape(len(table), len(annotators))
    multi = int(((~np.isnan(data)).sum(axis=1) >= 2).sum()) if data.size else 0
    out: dict[str, Any] = {"annotators": len(annotators), "units": len(table), "multi_labelled": multi,
                           "alpha": {"value": None, "ci_low": None, "ci_high": None}, "per_annotator": {}, "leave_one_out": None}
    if multi < 2:
        return out
    out["alpha"] = alpha_with_ci(data)
    out["per_annotator"] = {a: _against_the_others(data, j) for j, a in enumerate(annotators)}
    read = [p["spearman"] for p in out["per_annotator"].values() if p["spearman"] is not None]
    out["leave_one_out"] = fmean(read) if read else None
    return out


def _against_the_others(data: np.ndarray, j: int) -> dict[str, Any]:
    """Annotator ``j``'s Spearman against the mean of the others, where both exist."""
    from scipy import stats

    others = np.delete(data, j, axis=1)
    shared = ~np.isnan(data[:, j]) & (~np.isnan(others)).any(axis=1)
    mine = data[shared, j]
    rest = np.nanmean(others[shared], axis=1) if shared.any() else np.array([])
    rho = None
    if len(mine) >= 3 and len(set(mine)) > 1 and len(set(rest)) > 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rho = float(stats.spearmanr(mine, rest).statistic)
    return {"n": int(shared.sum()), "spearman": rho if rho is not None and np.isfinite(rho) else None}
