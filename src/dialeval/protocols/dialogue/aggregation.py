"""A dialogue run's metrics: the verdicts aggregated, with the run's rubric file and the agreement with human labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialeval.config import parse_options
from dialeval.protocols.dialogue.common import DialogueOptions
from dialeval.protocols.dialogue.human import agreement, load_labels
from dialeval.protocols.dialogue.metrics import aggregate as aggregate_units
from dialeval.protocols.dialogue.metrics import item_scores
from dialeval.conversation.rubric import BUILT_IN, load_rubric
from dialeval.conversation.votes import holds_votes, read_votes, votes_agreement


def aggregate(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    parsed = parse_options(DialogueOptions, options, "dialogue")
    context = {"mode": parsed.context, "budget": parsed.context_budget, "window_turns": parsed.window_turns, "rubric": parsed.rubric}
    metrics = aggregate_units(records, context)
    if parsed.rubric not in BUILT_IN:  # the run's own copy: compare --human reads it from any folder
        path = Path(parsed.rubric).expanduser()
        metrics["option_files"] = {"rubric": {"name": path.name, "text": path.read_text(encoding="utf-8")}}
    if parsed.human_scores and holds_votes(parsed.human_scores):  # issue 49: pairwise votes (a / b / tie)
        metrics["pairwise_human_agreement"] = votes_agreement(records, read_votes(parsed.human_scores, load_rubric(parsed.rubric)))
    elif parsed.human_scores:
        labels = load_labels(parsed.human_scores, load_rubric(parsed.rubric), rule=parsed.human_rule, run_records=records,
                             majority_tie=parsed.majority_tie)
        metrics["human_agreement"] = agreement(item_scores(records), labels)
        metrics["human_labels"] = labels.summary()
    return metrics
