"""A dialogue run's figures: score histograms, and the judge against the human labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialeval.config import parse_options
from dialeval.figures import Figure, judge_vs_human
from dialeval.protocols.dialogue.common import DialogueOptions
from dialeval.protocols.dialogue.human_compare import human_scores
from dialeval.protocols.dialogue.metrics import item_scores
from dialeval.protocols.dialogue.plots import rubric_histograms
from dialeval.conversation.rubric import load_rubric
from dialeval.conversation.votes import holds_votes


def figures(records: list[dict[str, Any]], metrics: dict[str, Any], options: dict[str, Any]) -> list[Figure]:
    """Score histograms on the rubric's scales, and the judge against the human labels
    per criterion when the run was given some."""
    parsed = parse_options(DialogueOptions, options, "dialogue")
    out: list[Figure] = [*rubric_histograms(records, load_rubric(parsed.rubric))]
    if parsed.human_scores and not holds_votes(parsed.human_scores):  # votes (issue 49) have no scores to plot
        out += judge_vs_human(item_scores(records), human_scores(Path(parsed.human_scores), options))
    return out
