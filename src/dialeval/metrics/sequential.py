"""Anytime-valid confidence sequences for a paired mean difference, and the decision they allow.

Why: judging every unit of two systems to learn what the first hundred already showed
wastes calls, but peeking at an ordinary 95% CI after each unit and stopping when it
excludes zero makes false decisions far more often than 5%. A confidence sequence holds
at every unit count at once, so a run may look after each unit and stop when it decides.

Two sequences, both closed-form running sums (vectorised over leading axes for
simulation):

- ``"eb"``: the predictable plug-in empirical-Bernstein confidence sequence (PrPl-EB) of
  Waudby-Smith & Ramdas, "Estimating means of bounded random variables by betting"
  (JRSS-B, 2023), Theorem 2. Valid at every sample size for differences inside a known
  bound ``[-bound, bound]`` (a 1-5 scale: ``bound=4``).
- ``"asymptotic"``: the asymptotic confidence sequence (a Robbins normal mixture with the
  running variance plugged in) of Waudby-Smith, Arnold, Wu, Wang & Ramdas, "Time-uniform
  central limit theory and asymptotic confidence sequences" (Annals of Statistics, 2024),
  tuned to be tightest near ``tuned_for`` units; valid as units grow. Given the bound, its
  variance starts from a prior at the bound's largest variance (see
  :func:`asymptotic_sequence`), which keeps it honest on skewed differences.

The false-decision rate and the share of units used are measured in
``benchmarks/sequential_stopping.py``.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

import numpy as np

Method = Literal["eb", "asymptotic"]
ALPHA = 0.05
PRIOR_UNITS = 4  # pseudo-units of the largest possible variance the asymptotic sequence starts from
MIN_UNITS = 10  # no decision before this many units: the asymptotic sequence's variance needs a few
EB_MAX_BET = 0.5  # the largest lambda PrPl-EB bets (the paper's c = 1/2 or 3/4)


def eb_sequence(diffs: np.ndarray, bound: float, alpha: float = ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """PrPl-EB lower and upper bounds of the mean of ``diffs`` after each unit (last axis)."""
    x = (np.asarray(diffs, dtype=float) + bound) / (2 * bound)  # into [0, 1]
    n = x.shape[-1]
    t = np.arange(1, n + 1, dtype=float)
    mu_hat = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    mu_prev = np.concatenate([np.full(x.shape[:-1] + (1,), 0.5), mu_hat[..., :-1]], axis=-1)
    var_hat = (0.25 + np.cumsum((x - mu_hat) ** 2, axis=-1)) / (t + 1)
    var_prev = np.concatenate([np.full(x.shape[:-1] + (1,), 0.25), var_hat[..., :-1]], axis=-1)
    log_term = math.log(2 / alpha)
    lam = np.minimum(np.sqrt(2 * log_term / (var_prev * t * np.log1p(t))), EB_MAX_BET)
    psi = (-np.log1p(-lam) - lam) / 4
    v = 4 * (x - mu_prev) ** 2
    lam_sum = np.cumsum(lam, axis=-1)
    centre = np.cumsum(lam * x, axis=-1) / lam_sum
    half = (log_term + np.cumsum(v * psi, axis=-1)) / lam_sum
    low = np.maximum.accumulate(np.clip(centre - half, 0, 1), axis=-1)  # running intersection: still valid
    high = np.minimum.accumulate(np.clip(centre + half, 0, 1), axis=-1)
    return low * 2 * bound - bound, high * 2 * bound - bound


def asymptotic_sequence(diffs: np.ndarray, alpha: float = ALPHA, tuned_for: int = 100,
                        bound: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Asymptotic (Gaussian-mixture) lower and upper bounds after each unit (last axis).

    With ``bound``, the running variance starts from :data:`PRIOR_UNITS` pseudo-units of the
    largest variance the bound allows (``bound**2``), as PrPl-EB's estimate starts from its
    own prior: a few units that happen to agree must not read as no variance at all (rare
    large drops would otherwise be decided away; see the benchmark's ``skewed`` rows)."""
    d = np.asarray(diffs, dtype=float)
    n = d.shape[-1]
    t = np.arange(1, n + 1, dtype=float)
    mean = np.cumsum(d, axis=-1) / t
    squares = np.maximum(np.cumsum(d * d, axis=-1) - t * mean**2, 0.0)
    if bound is None:
        var = squares / np.maximum(t - 1, 1)
    else:
        var = (PRIOR_UNITS * bound**2 + squares) / (t + PRIOR_UNITS)
    rho2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / tuned_for
    tv = t * var * rho2 + 1
    half = np.sqrt(2 * tv / (t * t * rho2) * np.log(np.sqrt(tv) / alpha))
    half = np.where(t < 2, np.inf, half)  # one unit has no spread to plug in
    if bound is not None:  # the mean cannot leave the bound
        return np.maximum(mean - half, -bound), np.minimum(mean + half, bound)
    return mean - half, mean + half


def confidence_sequence(diffs: Any, *, method: Method = "eb", bound: float | None = None, alpha: float = ALPHA,
                        tuned_for: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of the mean paired difference after each unit, at level ``1 - alpha``
    simultaneously over all unit counts. ``bound``: the largest possible ``|difference|``
    (required by ``eb``; the asymptotic sequence's variance prior, see :func:`asymptotic_sequence`)."""
    if method == "eb":
        if bound is None or bound <= 0:
            raise ValueError("the empirical-Bernstein sequence needs bound > 0: the largest possible |difference|")
        return eb_sequence(np.clip(np.asarray(diffs, dtype=float), -bound, bound), bound, alpha)
    return asymptotic_sequence(np.asarray(diffs, dtype=float), alpha, tuned_for, bound)


def decision(low: float, high: float, margin: float = 0.0) -> str | None:
    """What an interval of ``b - a`` decides: ``"b higher"`` / ``"a higher"`` when it excludes
    zero (or lies beyond ``margin``), ``"equivalent"`` when it lies within ``(-margin, margin)``,
    else ``None`` (keep judging)."""
    if low > margin:
        return "b higher"
    if high < -margin:
        return "a higher"
    if margin > 0 and -margin < low and high < margin:
        return "equivalent"
    return None


def regression_decision(low: float, high: float, margin: float) -> str | None:
    """What an interval of ``run - baseline`` decides for a gate: ``"regression"`` when the
    drop is surely larger than ``margin``, ``"no regression"`` when surely smaller."""
    if high < -margin:
        return "regression"
    if low > -margin:
        return "no regression"
    return None


SCALE_IN_NAME = re.compile(r"\((-?\d+(?:\.\d+)?)\s*-\s*(-?\d+(?:\.\d+)?)\)")


def score_bound(dimension: str | None, scales: dict[str, tuple[float, float]], seen: list[float]) -> float:
    """The largest possible paired difference of a criterion: its declared scale's width
    (``scales``, or ``(1-5)`` in its name), else the width of the scores seen (at least 1)."""
    if dimension is not None and dimension in scales:
        low, high = scales[dimension]
        return float(high - low) or 1.0
    match = SCALE_IN_NAME.search(dimension or "")
    if match:
        return abs(float(match[2]) - float(match[1])) or 1.0
    return max(1.0, (max(seen) - min(seen)) if seen else 1.0)


def tuned_for(units: int) -> int:
    """Where the asymptotic sequence is tuned to be tightest: a quarter of the units (at least
    :data:`MIN_UNITS`), since a clear effect should be decided well before the end."""
    return max(MIN_UNITS, units // 4)


def first_decision(diffs: Any, *, margin: float = 0.0, gate: bool = False, method: Method = "asymptotic",
                   bound: float | None = None, alpha: float = ALPHA, min_units: int = MIN_UNITS) -> dict[str, Any]:
    """Walk the differences in the order given and stop at the first decision (not before
    ``min_units``; a regression decision when ``gate``, see :func:`regression_decision`).

    Returns ``decision`` (None: undecided after all units), ``units_used``, ``units``, and
    the sequence's bounds when it stopped."""
    d = np.asarray(diffs, dtype=float)
    low, high = confidence_sequence(d, method=method, bound=bound, alpha=alpha, tuned_for=tuned_for(len(d)))
    decide = regression_decision if gate else decision
    for i in range(min(min_units, len(d)) - 1, len(d)):
        verdict = decide(float(low[i]), float(high[i]), margin)
        if verdict is not None:
            return {"decision": verdict, "units_used": i + 1, "units": len(d), "low": float(low[i]), "high": float(high[i])}
    last = len(d) - 1
    return {"decision": None, "units_used": len(d), "units": len(d),
            "low": float(low[last]) if len(d) else None, "high": float(high[last]) if len(d) else None}
