"""A judge's agreement with the humans per criterion, beside the humans' own (pure).

The judge is compared with the annotators' mean per unit (Spearman, Kendall tau-b,
Krippendorff's alpha, ordinal) and with each annotator's label (exact and adjacent
agreement: the share of labels it matches, or misses by at most one point). The
ceiling asks the same of the humans: each annotator against the mean of the others
(leave one out), averaged over annotators, and the share of pairs of annotators of one
unit who match. Every figure has a 95% bootstrap interval over units.
"""

from __future__ import annotations

import warnings
from itertools import permutations
from statistics import fmean
from typing import Any

import numpy as np

from dialeval.trust import stats

NAMES = ("spearman", "kendall_tau_b", "krippendorff_alpha")
EMPTY: dict[str, float | None] = {"value": None, "ci_low": None, "ci_high": None}


def _matches(judge: float, labels: list[float]) -> tuple[float, float]:
    return float(sum(judge == y for y in labels)), float(sum(abs(judge - y) <= 1 for y in labels))


def judge_figures(judge: dict[str, float], labels: dict[str, dict[str, float]], resamples: int = stats.RESAMPLES) -> dict[str, Any]:
    """One criterion: ``judge`` unit -> score, ``labels`` unit -> annotator -> score."""
    units = [u for u in labels if u in judge]
    out: dict[str, Any] = {"n": len(units), "labelled": len(labels)}
    consensus = [fmean(labels[u].values()) for u in units]
    scores = [judge[u] for u in units]
    for name in NAMES:
        out[name] = stats.paired(scores, consensus, name, resamples)
    exact, adjacent = zip(*(_matches(judge[u], list(labels[u].values())) for u in units)) if units else ((), ())
    counts = [float(len(labels[u])) for u in units]
    out["exact_agreement"] = stats.share(list(exact), counts, resamples)
    out["adjacent_agreement"] = stats.share(list(adjacent), counts, resamples)
    return out


def ceiling(labels: dict[str, dict[str, float]], resamples: int = stats.RESAMPLES) -> dict[str, Any]:
    """The humans' own agreement, from the units with at least two annotators; every
    figure ``None`` (with ``units`` 0) when each unit has one label."""
    several = {u: s for u, s in labels.items() if len(s) >= 2}
    out: dict[str, Any] = {"units": len(several), "annotators": len({a for s in several.values() for a in s})}
    if not several:
        return {**out, **{name: dict(EMPTY) for name in (*NAMES, "exact_agreement", "adjacent_agreement")}}
    for name in NAMES:
        out[name] = _leave_one_out(several, name, resamples)
    out["alpha_among_annotators"] = _alpha_among(several)
    pairs = [(float(sum(s[a] == s[b] for a, b in permutations(s, 2))), float(sum(abs(s[a] - s[b]) <= 1 for a, b in permutations(s, 2))),
              float(len(s) * (len(s) - 1))) for s in several.values()]
    out["exact_agreement"] = stats.share([p[0] for p in pairs], [p[2] for p in pairs], resamples)
    out["adjacent_agreement"] = stats.share([p[1] for p in pairs], [p[2] for p in pairs], resamples)
    return out


def _alpha_among(labels: dict[str, dict[str, float]]) -> float | None:
    """The usual inter-annotator figure: Krippendorff's alpha (ordinal) of all annotators at
    once, units x annotators with gaps (the ``krippendorff`` package)."""
    import krippendorff

    annotators = list(dict.fromkeys(a for s in labels.values() for a in s))
    data = np.array([[s.get(a, np.nan) for s in labels.values()] for a in annotators], dtype=float)
    if len(np.unique(data[~np.isnan(data)])) < 2:
        return None
    value = float(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal"))
    return value if np.isfinite(value) else None


def _leave_one_out(labels: dict[str, dict[str, float]], name: str, resamples: int) -> dict[str, float | None]:
    """Each annotator against the others' mean on the units it labelled, averaged over
    annotators (each resampled over its own units with the same seed)."""
    points, draws = [], []
    for annotator in dict.fromkeys(a for s in labels.values() for a in s):
        units = [u for u, s in labels.items() if annotator in s]
        if len(units) < 3:
            continue
        own = np.array([labels[u][annotator] for u in units])
        others = np.array([fmean(v for a, v in labels[u].items() if a != annotator) for u in units])
        pick = stats.indices(len(units), resamples)
        statistic = stats.STATISTICS[name]
        points.append(float(statistic(own[None], others[None])[0]))
        draws.append(statistic(own[pick], others[pick]))
    if not points:
        return dict(EMPTY)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an annotator whose labels are all alike has no rank statistic
        return stats.summary(float(np.nanmean(points)), np.nanmean(np.array(draws), axis=0))


def agreement(scores: dict[str, dict[str, float]], by_unit: dict[tuple[str, str], dict[str, float]],
              levels: dict[str, str], resamples: int = stats.RESAMPLES) -> dict[str, dict[str, Any]]:
    """``<level>/<criterion>`` -> the judge's figures and the ceiling, for every labelled criterion."""
    out = {}
    for criterion in dict.fromkeys(c for _, c in by_unit):
        labels = {u: s for (u, c), s in by_unit.items() if c == criterion}
        out[f"{levels.get(criterion, 'turn')}/{criterion}"] = {
            "criterion": criterion,
            **judge_figures(scores.get(criterion, {}), labels, resamples),
            "ceiling": ceiling(labels, resamples),
        }
    return out


def headline(figures: dict[str, dict[str, Any]], name: str = "krippendorff_alpha") -> float | None:
    """The mean of one figure over criteria (the recommendation compares candidates on it)."""
    values = [row[name]["value"] for row in figures.values() if row[name]["value"] is not None]
    return fmean(values) if values else None
