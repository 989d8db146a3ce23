"""Prediction-powered estimates: a judge's scores on a whole corpus, corrected by a few human labels.

Why: the judge's mean over 10,000 conversations is precise but biased (a lenient judge
adds half a point); the humans' mean over 200 of them is unbiased but wide. The
prediction-powered estimate (Angelopoulos et al., 2023) is the judge's mean over all
units plus the mean of (human - judge) over the labelled ones: unbiased whatever the
judge's bias, and narrower than the humans' alone as far as the judge tracks them.

Labelled units are usually among the judged ones. With ``N`` judged units of which ``n``
are labelled (a random subset), the estimate ``mean_N(f) + mean_n(y - f)`` equals
``mean_n(y - c f) + c mean_u(f)`` with ``c = 1 - n/N`` and ``u`` the ``N - n`` unlabelled
units, two independent samples; its variance is ``var(y - c f)/n + c^2 var(f)/(N - n)``
and the interval is the normal one (central limit theorem, as in the paper). ``tune``
picks the ``c`` of least variance (PPI++), which is never wider than the humans' own
interval in large samples. Everything is vectorised over leading axes, so a simulation
of thousands of corpora is one call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Mapping

import numpy as np

Method = Literal["prediction_powered", "judge_only", "human_only"]
WIN_POINTS = {"a": 1.0, "tie": 0.5, "b": 0.0}  # as dialogue's pairwise win rate counts a verdict


@dataclass(frozen=True)
class Estimate:
    """A mean with its 95% (or ``level``) interval; ``None`` where too few units to say."""

    method: Method
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n_labelled: int
    n_judged: int

    @property
    def width(self) -> float | None:
        return None if self.ci_low is None or self.ci_high is None else self.ci_high - self.ci_low

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "mean": self.mean, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "n_labelled": self.n_labelled, "n_judged": self.n_judged}


def _z(level: float) -> float:
    from scipy import stats

    return float(stats.norm.ppf(0.5 + level / 2))


def _var(x: np.ndarray) -> np.ndarray:
    return np.var(x, axis=-1, ddof=1)


def _cov(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    dx = x - x.mean(axis=-1, keepdims=True)
    dy = y - y.mean(axis=-1, keepdims=True)
    return (dx * dy).sum(axis=-1) / (x.shape[-1] - 1)


def ppi_mean_arrays(
    judge_unlabelled: Any, judge_labelled: Any, human: Any, *, level: float = 0.95, tune: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(estimate, ci_low, ci_high)`` over the last axis: the judge's scores on the
    unlabelled units, its scores on the labelled ones and the humans' scores on the same
    labelled ones (aligned). Leading axes are independent corpora (a simulation)."""
    f_u = np.asarray(judge_unlabelled, dtype=float)
    f_l = np.asarray(judge_labelled, dtype=float)
    y = np.asarray(human, dtype=float)
    if f_l.shape != y.shape:
        raise ValueError(f"judge_labelled {f_l.shape} and human {y.shape} must be aligned, unit for unit")
    n, m = y.shape[-1], f_u.shape[-1]
    if n < 2 or m < 2:
        raise ValueError(f"need at least 2 labelled and 2 unlabelled units (got {n} and {m})")
    if tune:  # least variance: c* = cov(y, f) / (var(f) (1 + n/m)), pooled var(f) over all units
        pooled = _var(np.concatenate([f_u, f_l], axis=-1))
        with np.errstate(divide="ignore", invalid="ignore"):
            c = np.where(pooled > 0, _cov(y, f_l) / (pooled * (1 + n / m)), 0.0)
    else:
        c = np.asarray(1 - n / (n + m))  # the judge's mean over ALL units plus mean(human - judge)
    c_ = c[..., None] if c.ndim else c
    rectified = y - c_ * f_l
    estimate = rectified.mean(axis=-1) + c * f_u.mean(axis=-1)
    se = np.sqrt(_var(rectified) / n + c**2 * _var(f_u) / m)
    half = _z(level) * se
    return estimate, estimate - half, estimate + half


def classical_mean_arrays(values: Any, *, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(mean, ci_low, ci_high)`` over the last axis by the normal interval (judge-only, human-only)."""
    x = np.asarray(values, dtype=float)
    mean = x.mean(axis=-1)
    half = _z(level) * np.sqrt(_var(x) / x.shape[-1])
    return mean, mean - half, mean + half


def _as_estimate(method: Method, triple: tuple[np.ndarray, np.ndarray, np.ndarray], n: int, total: int) -> Estimate:
    mean, low, high = (float(v) for v in triple)
    return Estimate(method, mean, low, high, n, total)


def estimates(
    judge: Mapping[str, float], human: Mapping[str, float], *, level: float = 0.95, tune: bool = False
) -> dict[Method, Estimate]:
    """The three estimates of a corpus mean side by side: judge-only (every judged unit),
    human-only (every labelled unit) and prediction-powered (judged units, corrected by
    the labelled ones among them). ``judge`` and ``human`` map unit ids to scores; a
    labelled unit the judge has no score for counts in human-only alone."""
    both = [u for u in human if u in judge]
    unlabelled = [u for u in judge if u not in human]
    out: dict[Method, Estimate] = {}
    nothing = Estimate("judge_only", None, None, None, 0, 0)
    out["judge_only"] = (_as_estimate("judge_only", classical_mean_arrays([judge[u] for u in judge], level=level), 0, len(judge))
                         if len(judge) >= 2 else nothing)
    out["human_only"] = (_as_estimate("human_only", classical_mean_arrays([human[u] for u in human], level=level), len(human), 0)
                         if len(human) >= 2 else Estimate("human_only", None, None, None, len(human), 0))
    if len(both) >= 2 and len(unlabelled) >= 2:
        triple = ppi_mean_arrays([judge[u] for u in unlabelled], [judge[u] for u in both], [human[u] for u in both],
                                 level=level, tune=tune)
        out["prediction_powered"] = _as_estimate("prediction_powered", triple, len(both), len(judge))
    else:
        out["prediction_powered"] = Estimate("prediction_powered", None, None, None, len(both), len(judge))
    return out


def win_points(verdicts: Mapping[str, str | None]) -> dict[str, float]:
    """Pairwise verdicts (``a``, ``b``, ``tie``) as points for A (1, 0, 0.5); undecided ones left out."""
    return {u: WIN_POINTS[v] for u, v in verdicts.items() if v is not None}


def win_rate_estimates(
    judge: Mapping[str, str | None], human: Mapping[str, str | None], *, level: float = 0.95, tune: bool = False
) -> dict[Method, Estimate]:
    """System A's win rate over B, as :func:`estimates` gives a mean: the judge's pairwise
    verdicts on every pair, corrected by the humans' verdicts on the labelled pairs."""
    return estimates(win_points(judge), win_points(human), level=level, tune=tune)
