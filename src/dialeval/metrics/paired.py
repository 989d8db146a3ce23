"""Paired significance tests between systems scored on the same units in one run.

Why: two systems' means (46.52 vs 54.64) say nothing on their own; pairing each unit's
two scores removes the units' own difficulty from the comparison. The permutation test
and bootstrap CI come from :func:`dialeval.metrics.agreement.mean_difference`; the
Wilcoxon signed-rank test (scipy) is given beside it as the rank-based check.
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any

from dialeval.metrics import SEED  # agreement (numpy, scipy) is imported on use: protocols import this module at start-up


FEW_UNITS = 10  # below this many shared units the test is marked as resting on very few


def wilcoxon_p(a: list[float], b: list[float]) -> float | None:
    """Two-sided Wilcoxon signed-rank p-value of ``b - a`` (zero differences dropped, as
    Wilcoxon's own rule); ``None`` when no pair differs."""
    from scipy import stats

    if not any(x != y for x, y in zip(a, b)):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on ties and small n; the n is shown beside
        result = stats.wilcoxon(b, a, zero_method="wilcox", alternative="two-sided")
    return float(result.pvalue)


def paired_test(a: dict[str, float | None], b: dict[str, float | None], *, seed: int = SEED) -> dict[str, Any]:
    """Compare two systems' scores ``{unit: score}`` over the units both have a score for.

    Returns ``n``, both means, ``mean_diff`` (B - A) with its bootstrap 95% CI, the paired
    permutation p-value (``p_permutation``) and the Wilcoxon p-value (``p_wilcoxon``)."""
    units = sorted(u for u in set(a) & set(b) if a[u] is not None and b[u] is not None)
    x = [float(a[u]) for u in units]  # type: ignore[arg-type]
    y = [float(b[u]) for u in units]  # type: ignore[arg-type]
    out: dict[str, Any] = {"n": len(units), "only_a": sum(1 for u in a if a[u] is not None and u not in units),
                           "only_b": sum(1 for u in b if b[u] is not None and u not in units), "few_units": len(units) < FEW_UNITS}
    if not units:
        return {**out, "mean_a": None, "mean_b": None, "mean_diff": None, "ci_low": None, "ci_high": None,
                "p_permutation": None, "p_wilcoxon": None}
    from dialeval.metrics.agreement import mean_difference

    diff = mean_difference(x, y, seed=seed)
    out.update({k: diff[k] for k in ("mean_a", "mean_b", "mean_diff", "ci_low", "ci_high")})
    out["p_permutation"] = diff["p_value"]
    out["p_wilcoxon"] = wilcoxon_p(x, y) if len(units) > 1 else None
    return out


def system_tests(scores: dict[str, dict[str, dict[str, float | None]]], *, seed: int = SEED) -> list[dict[str, Any]]:
    """Every pair of systems, per dimension: ``scores`` is system -> dimension -> {unit: score}.

    Empty with fewer than two systems."""
    out = []
    for (name_a, sa), (name_b, sb) in itertools.combinations(sorted(scores.items()), 2):
        for dim in [d for d in sa if d in sb]:
            out.append({"dimension": dim, "a": name_a, "b": name_b, **paired_test(sa[dim], sb[dim], seed=seed)})
    return out
