"""The human ceiling, and a judge held to it the same way (pure).

Why: each annotator is read against the mean of the *other* annotators; reading a judge
against the mean of *all* of them gives it a less noisy reference, so it scores higher by
construction (an annotator replayed as the judge would beat the humans). Here the judge
takes each annotator's place in turn, against the same mean of the others on the same
units, and its figures are averaged over which annotator was left out, exactly as the
annotators' are. Spearman, Kendall tau-b and Krippendorff's alpha (at
:data:`~dialeval.metrics.alpha.ALPHA_LEVEL`), each with a 95% percentile bootstrap CI:
one resample of the units serves every annotator and every judge, so all are drawn alike.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from statistics import fmean
from typing import Any

import numpy as np

from dialeval.metrics.intervals import RESAMPLES, SEED, unit_weights
from dialeval.metrics.judge_agreement import STATISTICS, Interval, Paired, interval

Table = dict[str, dict[str, float]]  # unit -> annotator -> score
HUMANS = "humans"


@dataclass
class _Side:
    """One reading: ``who`` (the humans, or a judge) in the place of ``left_out``, on some units."""

    who: str
    left_out: str
    units: np.ndarray  # indices into the units with two or more labels
    paired: Paired


def _empty() -> dict[str, Interval]:
    return {name: {"value": None, "ci_low": None, "ci_high": None} for name in STATISTICS}


def leave_one_out(table: Table, judges: dict[str, dict[str, float]] | None = None, *, seed: int = SEED,
                  resamples: int = RESAMPLES) -> dict[str, Any]:
    """``table``: unit -> {annotator: score}; ``judges``: name -> unit -> score.

    Returns ``units`` (those with two or more labels: the others have nobody to compare
    with), ``annotators``, ``humans`` (each statistic: annotator against the mean of the
    others, averaged over annotators, with its CI), ``per_annotator`` (its units and
    values), and ``judges``: per judge the same figures with the judge in each
    annotator's place, and ``units``, those of them it scored. ``None`` where undefined
    (an annotator with fewer than 3 such units, or whose labels are all alike, is left out
    of the average)."""
    several = {u: s for u, s in table.items() if len(s) >= 2}
    units = list(several)
    annotators = list(dict.fromkeys(a for s in several.values() for a in s))
    judges = judges or {}
    sides: list[_Side | None] = []
    per_annotator: dict[str, dict[str, Any]] = {}
    for annotator in annotators:
        mine = [i for i, u in enumerate(units) if annotator in several[u]]
        others = [fmean(v for a, v in several[units[i]].items() if a != annotator) for i in mine]
        own = _side(HUMANS, annotator, mine, [several[units[i]][annotator] for i in mine], others)
        per_annotator[annotator] = {"n": len(mine), **(_values(own) if own else dict.fromkeys(STATISTICS))}
        sides.append(own)
        for name, scores in judges.items():
            kept = [k for k, i in enumerate(mine) if units[i] in scores]
            sides.append(_side(name, annotator, [mine[k] for k in kept], [scores[units[mine[k]]] for k in kept],
                               [others[k] for k in kept]))
    out: dict[str, Any] = {"units": len(units), "annotators": len(annotators), "per_annotator": per_annotator,
                           HUMANS: _empty(), "judges": {name: {"units": sum(u in s for u in units), **_empty()} for name, s in judges.items()}}
    defined = [side for side in sides if side is not None]
    if not defined:
        return out
    draws: dict[tuple[str, str], list[np.ndarray]] = {(side.who, name): [] for side in defined for name in STATISTICS}
    rows: dict[tuple[str, str], list[np.ndarray]] = {key: [] for key in draws}  # per batch: sides x resamples
    step = min(side.paired.step for side in defined)
    for weights in unit_weights(len(units), resamples, seed, step):
        for key in rows:
            rows[key] = []
        for side in defined:
            for name, values in side.paired.draws(weights[:, side.units]).items():
                rows[(side.who, name)].append(values)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a resample where no side is defined: NaN
            for key, stacked in rows.items():
                draws[key].append(np.nanmean(np.stack(stacked), axis=0))
    for who in dict.fromkeys(side.who for side in defined):
        points = [_values(side) for side in defined if side.who == who]
        figures = {name: interval(_mean([p[name] for p in points]), np.concatenate(draws[(who, name)])) for name in STATISTICS}
        if who == HUMANS:
            out[HUMANS] = figures
        else:
            out["judges"][who].update(figures)
    return out


def _side(who: str, left_out: str, units: list[int], scores: list[float], others: list[float]) -> _Side | None:
    """A reading where its statistics exist (3 units or more, both sides varying), else ``None``."""
    if len(units) < 3:
        return None
    paired = Paired(scores, others)
    return _Side(who, left_out, np.array(units, dtype=int), paired) if paired.defined else None


def _values(side: _Side) -> dict[str, float | None]:
    return {name: (float(v) if np.isfinite(v) else None) for name, v in side.paired.values().items()}


def _mean(values: list[float | None]) -> float:
    kept = [v for v in values if v is not None]
    return fmean(kept) if kept else float("nan")
