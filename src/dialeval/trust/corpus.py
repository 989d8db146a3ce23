"""Prediction-powered estimates for the whole data file, judged by the recommended candidate.

Why: the card says which judge to trust; the corpus run then uses it on every
conversation, and the labelled units among them correct its bias (the judge's mean on
all units plus the mean of human minus judge on the labelled ones, see
:mod:`dialeval.metrics.ppi`). Valid when the labelled units are a random sample of the
data file's units.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialeval.metrics.ppi import estimates
from dialeval.trust import dialogue
from dialeval.trust.candidates import Candidate
from dialeval.trust.runs import PlannedRun, execute


def corpus_run(candidate: Candidate, data: Path, options: dict[str, Any]) -> PlannedRun:
    return PlannedRun(candidate, "corpus", data, options)


def corpus_estimates(planned: PlannedRun, labels: dialogue.HumanLabels, root: Path, cache_path: str | None) -> dict[str, Any]:
    """Judge-only, human-only and prediction-powered means per criterion, with 95% intervals."""
    [outcome] = execute([planned], root, cache_path)
    scores = dialogue.scores_by_unit(outcome.records)
    human: dict[str, dict[str, float]] = {}
    for (unit, criterion), value in labels.consensus().items():
        human.setdefault(criterion, {})[unit] = value
    return {
        "candidate": planned.candidate.label,
        "run": str(outcome.run_dir),
        "failed_items": outcome.failed,
        "criteria": {c: {method: e.to_dict() for method, e in estimates(scores.get(c, {}), human[c]).items()} for c in human},
    }
