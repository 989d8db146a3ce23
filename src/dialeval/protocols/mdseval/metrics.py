"""Meta-evaluation figures of MDSEval, each with a 95% bootstrap interval over dialogues.

Every figure is computed from *groups*, one per dialogue, holding only the readable
judge answers; resampling dialogues (the one resampler, :mod:`dialeval.metrics.intervals`)
keeps the five summaries of a dialogue together, as the per-dialogue Spearman needs.

- Spearman: per dialogue between judge scores and human means, averaged over the
  dialogues where it is defined (x100); dialogues with a constant side are counted.
- MSE: over all (summary, aspect) scores against the human means.
- pairwise accuracy (x100): the judge picks the summary with the higher human mean.
- balanced accuracy and macro F1 (x100, scikit-learn) for the 4 faithfulness labels.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from dialeval.metrics.intervals import percentile_interval, resampled  # the one resampler's draws and interval
from dialeval.protocols.mdseval.data import FAITH_LABELS


class Figure:
    """A figure that adds up over dialogues: per-dialogue ``parts`` (a vector of sums) and
    ``combine`` from their total to the value. Resampling then only re-adds vectors,
    which lets the resampler run vectorised over thousands of resamples."""

    def __init__(self, parts: Callable[[Any], Sequence[float] | np.ndarray], combine: Callable[[np.ndarray], np.ndarray]):
        self.parts, self.combine = parts, combine

    def table(self, groups: Sequence[Any]) -> np.ndarray:
        return np.asarray([self.parts(g) for g in groups], dtype=float)

    def __call__(self, groups: Sequence[Any]) -> float | None:
        if not groups:
            return None
        with np.errstate(invalid="ignore", divide="ignore"):
            value = float(self.combine(self.table(groups).sum(axis=0)))
        return None if math.isnan(value) else value


def bootstrap_ci(groups: Sequence[Any], figure: Figure) -> tuple[float | None, float | None]:
    """95% percentile interval of ``figure`` when the dialogues (groups) are resampled."""
    if len(groups) < 2:
        return None, None
    table = figure.table(groups)

    def of(picks: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(figure.combine(table[picks].sum(axis=1)))

    low, high = percentile_interval(resampled(len(groups), of, cells_per_unit=table.shape[1])) or (None, None)
    return low, high


def estimate(groups: Sequence[Any], figure: Figure, **extra: Any) -> dict[str, Any]:
    """The figure, its interval, and what it rests on."""
    low, high = bootstrap_ci(groups, figure)
    return {"value": figure(groups), "low": low, "high": high, "dialogues": len(groups), **extra}


def _ratio(scale: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda total: scale * total[..., 0] / total[..., 1]


# ------------------------------------------------------------------ scores vs human means

Pairs = list[tuple[float, float]]  # (judge score, human mean) of one dialogue's summaries


def dialogue_spearman(pairs: Pairs) -> float | None:
    """Spearman rho over one dialogue's summaries; ``None`` if undefined (n<2 or a constant side)."""
    from scipy.stats import spearmanr

    if len(pairs) < 2:
        return None
    x, y = zip(*pairs)
    if len(set(x)) < 2 or len(set(y)) < 2:
        return None
    return float(spearmanr(x, y).statistic)


def _spearman_parts(pairs: Pairs) -> tuple[float, float]:
    rho = dialogue_spearman(pairs)
    return (0.0, 0.0) if rho is None else (rho, 1.0)


# Per-dialogue Spearman averaged over the dialogues where it is defined, x100.
mean_spearman = Figure(_spearman_parts, _ratio(100.0))
# Mean squared error of judge scores against the human means, over all scores.
mse = Figure(lambda pairs: (sum((p - h) ** 2 for p, h in pairs), len(pairs)), _ratio(1.0))


def score_figures(groups: Sequence[Pairs], unreadable: int) -> dict[str, Any]:
    """Spearman and MSE with intervals; ``unreadable`` judge answers are counted, not scored."""
    undefined = sum(dialogue_spearman(g) is None for g in groups)
    return {
        "spearman": estimate(groups, mean_spearman, undefined=undefined),
        "mse": estimate(groups, mse),
        "scores": sum(len(g) for g in groups),
        "unreadable": unreadable,
    }


# ------------------------------------------------------------------ pairwise

Picks = list[tuple[int, int]]  # (summary the judge preferred, summary the humans preferred)

# Share (x100) of pairs where the judge picked the summary the humans preferred.
accuracy = Figure(lambda picks: (sum(j == h for j, h in picks), len(picks)), _ratio(100.0))
# Share (x100) of answers that preferred the summary shown first (0).
share_first = Figure(lambda picks: (sum(p == 0 for p in picks), len(picks)), _ratio(100.0))


def human_preference(mean_a: float | None, mean_b: float | None) -> int | None:
    """0 if the first summary has the higher human mean, 1 for the second, ``None`` on a tie."""
    if mean_a is None or mean_b is None or mean_a == mean_b:
        return None
    return 0 if mean_a > mean_b else 1


# ------------------------------------------------------------------ faithfulness

Labels = list[tuple[str, str]]  # (judge label, human label)
_INDEX = {label: i for i, label in enumerate(FAITH_LABELS)}
_K = len(FAITH_LABELS)


def _confusion(pairs: Labels) -> np.ndarray:
    """Flattened confusion matrix, rows = human label, columns = judge label."""
    c = np.zeros((_K, _K))
    for pred, gold in pairs:
        c[_INDEX[gold], _INDEX[pred]] += 1
    return c.ravel()


def _balanced_accuracy(total: np.ndarray) -> np.ndarray:
    """Mean recall over the human labels that occur (scikit-learn's definition)."""
    c = total.reshape(*total.shape[:-1], _K, _K)
    support = c.sum(axis=-1)
    recall = np.diagonal(c, axis1=-2, axis2=-1) / support
    present = support > 0
    return np.where(present, recall, 0).sum(axis=-1) / present.sum(axis=-1)


def _macro_f1(total: np.ndarray) -> np.ndarray:
    """Macro F1 over the labels that occur among human or judge labels (scikit-learn's default)."""
    c = total.reshape(*total.shape[:-1], _K, _K)
    tp = np.diagonal(c, axis1=-2, axis2=-1)
    both = c.sum(axis=-1) + c.sum(axis=-2)
    present = both > 0
    return np.where(present, 2 * tp / np.where(present, both, 1), 0).sum(axis=-1) / present.sum(axis=-1)


balanced_accuracy = Figure(_confusion, lambda total: 100 * _balanced_accuracy(total))
macro_f1 = Figure(_confusion, lambda total: 100 * _macro_f1(total))
