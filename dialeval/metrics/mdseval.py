"""Meta-evaluation figures of MDSEval, each with a 95% bootstrap interval over dialogues.

Every figure is computed from *groups*, one per dialogue, holding only the readable
judge answers; resampling dialogues (``scipy.stats.bootstrap``, percentile method)
keeps the five summaries of a dialogue together, as the per-dialogue Spearman needs.

- Spearman: per dialogue between judge scores and human means, averaged over the
  dialogues where it is defined (x100); dialogues with a constant side are counted.
- MSE: over all (summary, aspect) scores against the human means.
- pairwise accuracy (x100): the judge picks the summary with the higher human mean.
- balanced accuracy and macro F1 (x100, scikit-learn) for the 4 faithfulness labels.
"""

from __future__ import annotations

import math
import warnings
from statistics import fmean
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

G = TypeVar("G")
CONFIDENCE = 0.95
RESAMPLES = 1000


def bootstrap_ci(
    groups: Sequence[G], statistic: Callable[[Sequence[G]], float | None], *, resamples: int = RESAMPLES, seed: int = 0
) -> tuple[float | None, float | None]:
    """95% percentile interval of ``statistic`` when the dialogues (groups) are resampled."""
    from scipy.stats import bootstrap

    if len(groups) < 2:
        return None, None

    def stat(index: np.ndarray) -> float:
        value = statistic([groups[int(i)] for i in index])
        return math.nan if value is None else float(value)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bootstrap(
            (np.arange(len(groups)),),
            stat,
            vectorized=False,
            n_resamples=resamples,
            confidence_level=CONFIDENCE,
            method="percentile",
            random_state=np.random.default_rng(seed),
        )
    low, high = result.confidence_interval
    if math.isnan(low) or math.isnan(high):
        return None, None
    return float(low), float(high)


def estimate(groups: Sequence[G], statistic: Callable[[Sequence[G]], float | None], **extra: Any) -> dict[str, Any]:
    """The figure, its interval, and what it rests on."""
    value = statistic(groups)
    low, high = bootstrap_ci(groups, statistic)
    return {"value": value, "low": low, "high": high, "dialogues": len(groups), **extra}


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


def mean_spearman(groups: Sequence[Pairs]) -> float | None:
    """Per-dialogue Spearman averaged over the dialogues where it is defined, x100."""
    values = [v for v in map(dialogue_spearman, groups) if v is not None]
    return 100 * fmean(values) if values else None


def mse(groups: Sequence[Pairs]) -> float | None:
    """Mean squared error of judge scores against the human means, over all scores."""
    errors = [(p - h) ** 2 for pairs in groups for p, h in pairs]
    return fmean(errors) if errors else None


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


def accuracy(groups: Sequence[Picks]) -> float | None:
    picks = [p for g in groups for p in g]
    return 100 * sum(j == h for j, h in picks) / len(picks) if picks else None


def human_preference(mean_a: float | None, mean_b: float | None) -> int | None:
    """0 if the first summary has the higher human mean, 1 for the second, ``None`` on a tie."""
    if mean_a is None or mean_b is None or mean_a == mean_b:
        return None
    return 0 if mean_a > mean_b else 1


def share_first(groups: Sequence[list[int]]) -> float | None:
    """Share (x100) of answers that preferred the summary shown first (0)."""
    picks = [p for g in groups for p in g]
    return 100 * sum(p == 0 for p in picks) / len(picks) if picks else None


# ------------------------------------------------------------------ faithfulness

Labels = list[tuple[str, str]]  # (judge label, human label)


def balanced_accuracy(groups: Sequence[Labels]) -> float | None:
    from sklearn.metrics import balanced_accuracy_score

    pairs = [p for g in groups for p in g]
    if not pairs:
        return None
    pred, gold = zip(*pairs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return 100 * float(balanced_accuracy_score(gold, pred))


def macro_f1(groups: Sequence[Labels]) -> float | None:
    """Macro F1 over the labels that occur among the human or judge labels (scikit-learn's default)."""
    from sklearn.metrics import f1_score

    pairs = [p for g in groups for p in g]
    if not pairs:
        return None
    pred, gold = zip(*pairs)
    return 100 * float(f1_score(gold, pred, average="macro", zero_division=0))
