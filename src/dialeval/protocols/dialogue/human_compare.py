"""A human-labels file read as ``compare --human`` pairs it with a run: combined scores and each annotator's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialeval.protocols.dialogue.human import load_labels
from dialeval.protocols.dialogue.loading import options_of
from dialeval.conversation.rubric import load_rubric


def human_scores(path: Path, options: dict[str, Any]) -> dict[str, dict[str, float]]:
    """A human-labels file as ``item_scores`` gives the judge's scores (the annotators
    combined by option ``human_rule``), so ``compare --human`` pairs them."""
    parsed = options_of(options)
    return load_labels(path, load_rubric(parsed.rubric), rule=parsed.human_rule,
                       majority_tie=parsed.majority_tie).per_criterion()


def human_ratings(path: Path, options: dict[str, Any]) -> dict[str, dict[str, dict[str, float]]]:
    """Each annotator's labels per criterion and unit, for the human ceiling in ``compare --human``."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (unit, criterion), scores in load_labels(path, load_rubric(options_of(options).rubric)).by_unit().items():
        out.setdefault(criterion, {})[unit] = scores
    return out
