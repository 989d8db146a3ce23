"""A judge's agreement with the humans per criterion, beside the humans' own (pure).

The judge is compared with the annotators' mean per unit (Spearman, Kendall tau-b,
Krippendorff's alpha at :data:`~dialeval.metrics.alpha.ALPHA_LEVEL`) and with each
annotator's label (exact and adjacent agreement: the share of labels it matches, or
misses by at most one point). The ceiling asks the same of the humans: each annotator
against the mean of the others (leave one out), averaged over annotators, and the share
of pairs of annotators of one unit who match; the judge is held to it the same way, in
each annotator's place against the same means (``leave_one_out``), never against the
mean of all (which would favour it by construction). Every figure has a 95% bootstrap
interval over units.
"""

from __future__ import annotations

from itertools import permutations
from statistics import fmean
from typing import Any

import numpy as np

from dialeval.metrics.alpha import krippendorff_alpha
from dialeval.metrics.ceiling import HUMANS, leave_one_out
from dialeval.metrics.judge_agreement import STATISTICS, paired_agreement
from dialeval.trust import stats

NAMES = STATISTICS  # spearman, kendall_tau_b, krippendorff_alpha
EMPTY: dict[str, float | None] = {"value": None, "ci_low": None, "ci_high": None}
JUDGE = "judge"


def _matches(judge: float, labels: list[float]) -> tuple[float, float]:
    return float(sum(judge == y for y in labels)), float(sum(abs(judge - y) <= 1 for y in labels))


def judge_figures(judge: dict[str, float], labels: dict[str, dict[str, float]], resamples: int = stats.RESAMPLES) -> dict[str, Any]:
    """One criterion: ``judge`` unit -> score, ``labels`` unit -> annotator -> score."""
    units = [u for u in labels if u in judge]
    out: dict[str, Any] = {"n": len(units), "labelled": len(labels)}
    consensus = [fmean(labels[u].values()) for u in units]
    out.update(paired_agreement([judge[u] for u in units], consensus, resamples=resamples))
    exact, adjacent = zip(*(_matches(judge[u], list(labels[u].values())) for u in units)) if units else ((), ())
    counts = [float(len(labels[u])) for u in units]
    out["exact_agreement"] = stats.share(list(exact), counts, resamples)
    out["adjacent_agreement"] = stats.share(list(adjacent), counts, resamples)
    return out


def ceiling(labels: dict[str, dict[str, float]], resamples: int = stats.RESAMPLES,
            judge: dict[str, float] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The humans' own agreement, from the units with at least two annotators, and the
    ``judge`` held to it (its figures in each annotator's place); every figure ``None``
    (with ``units`` 0) when each unit has one label."""
    several = {u: s for u, s in labels.items() if len(s) >= 2}
    out: dict[str, Any] = {"units": len(several), "annotators": len({a for s in several.values() for a in s})}
    held = {"units": 0, **{name: dict(EMPTY) for name in NAMES}}
    if not several:
        return {**out, **{name: dict(EMPTY) for name in (*NAMES, "exact_agreement", "adjacent_agreement")}}, held
    loo = leave_one_out(several, {JUDGE: judge} if judge is not None else None, resamples=resamples)
    out.update(loo[HUMANS])
    out["alpha_among_annotators"] = _alpha_among(several)
    pairs = [(float(sum(s[a] == s[b] for a, b in permutations(s, 2))), float(sum(abs(s[a] - s[b]) <= 1 for a, b in permutations(s, 2))),
              float(len(s) * (len(s) - 1))) for s in several.values()]
    out["exact_agreement"] = stats.share([p[0] for p in pairs], [p[2] for p in pairs], resamples)
    out["adjacent_agreement"] = stats.share([p[1] for p in pairs], [p[2] for p in pairs], resamples)
    return out, loo["judges"].get(JUDGE, held)


def _alpha_among(labels: dict[str, dict[str, float]]) -> float | None:
    """The usual inter-annotator figure: Krippendorff's alpha of all annotators at once,
    units x annotators with gaps."""
    annotators = list(dict.fromkeys(a for s in labels.values() for a in s))
    return krippendorff_alpha(np.array([[s.get(a, np.nan) for a in annotators] for s in labels.values()], dtype=float))


def agreement(scores: dict[str, dict[str, float]], by_unit: dict[tuple[str, str], dict[str, float]],
              levels: dict[str, str], resamples: int = stats.RESAMPLES) -> dict[str, dict[str, Any]]:
    """``<level>/<criterion>`` -> the judge's figures, the ceiling, and the judge held to it
    (``leave_one_out``), for every labelled criterion."""
    out = {}
    for criterion in dict.fromkeys(c for _, c in by_unit):
        labels = {u: s for (u, c), s in by_unit.items() if c == criterion}
        judge = scores.get(criterion, {})
        humans, held = ceiling(labels, resamples, judge)
        out[f"{levels.get(criterion, 'turn')}/{criterion}"] = {
            "criterion": criterion,
            **judge_figures(judge, labels, resamples),
            "ceiling": humans,
            "leave_one_out": held,
        }
    return out


def headline(figures: dict[str, dict[str, Any]], name: str = "krippendorff_alpha") -> float | None:
    """The mean of one figure over criteria (the recommendation compares candidates on it)."""
    values = [row[name]["value"] for row in figures.values() if row[name]["value"] is not None]
    return fmean(values) if values else None
