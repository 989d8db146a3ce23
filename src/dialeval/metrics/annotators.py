"""The annotators' own agreement: the ceiling a judge's agreement with them is read against (pure).

Why: a judge whose Spearman with the human mean is 0.6 is good where people agree with
each other at 0.65, and poor where they agree at 0.9. Two figures, as reliability
studies report them: Krippendorff's alpha among all annotators (ordinal, with a 95%
bootstrap CI over units), and each annotator against the mean of the others on the units
they share (``leave_one_out``). A judge is read the same way, in each annotator's place
(:mod:`dialeval.metrics.ceiling`), never against the mean of all of them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dialeval.metrics.ceiling import HUMANS, leave_one_out
from dialeval.metrics.intervals import RESAMPLES
from dialeval.metrics.judge_agreement import alpha_with_ci


def annotator_agreement(table: dict[str, dict[str, float]], judges: dict[str, dict[str, float]] | None = None,
                        *, resamples: int = RESAMPLES) -> dict[str, Any]:
    """``table``: unit -> {annotator: score}; ``judges``: name -> unit -> score. Returns
    annotators, units, units with two or more labels, ``alpha`` (value and CI),
    ``per_annotator`` (n and its figures against the others), ``leave_one_out`` (the
    annotators' Spearman, Kendall tau-b and alpha against the others' mean, averaged, with
    CIs) and ``judges`` (each judge in the annotators' place); ``None`` where undefined."""
    annotators = list(dict.fromkeys(a for scores in table.values() for a in scores))
    data = np.array([[scores.get(a, np.nan) for a in annotators] for scores in table.values()], dtype=float)
    data = data.reshape(len(table), len(annotators))
    multi = int(((~np.isnan(data)).sum(axis=1) >= 2).sum()) if data.size else 0
    out: dict[str, Any] = {"annotators": len(annotators), "units": len(table), "multi_labelled": multi,
                           "alpha": {"value": None, "ci_low": None, "ci_high": None}, "per_annotator": {},
                           "leave_one_out": None, "judges": {}}
    if multi < 2:
        return out
    out["alpha"] = alpha_with_ci(data, resamples=resamples)
    loo = leave_one_out(table, judges, resamples=resamples)
    out.update(per_annotator=loo["per_annotator"], leave_one_out=loo[HUMANS], judges=loo["judges"])
    return out
