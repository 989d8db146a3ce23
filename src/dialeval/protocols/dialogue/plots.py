"""Score histograms that span each criterion's own scale, labels drawn as words.

Why here: the report's generic histograms know a benchmark's fixed scales, but a dialogue
rubric is the user's; a ``[1, 5]`` criterion scored only 1 and 4 must still show 1-5,
and ``[yes, partly, no]`` must read as words, not ranks. Same figure names as the
generic ones, so these are the ones drawn.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from dialeval.figures import Histogram, slug
from dialeval.protocols.dialogue.metrics import units_of
from dialeval.conversation.rubric import Rubric, dimension


def rubric_histograms(records: list[dict[str, Any]], rubric: Rubric) -> list[Histogram]:
    """One histogram per judged criterion, one series per system (records' ``system``)."""
    series: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        system = str(record.get("system") or "all")
        for unit in units_of(record):
            if unit.get("score") is not None:
                level = "turn" if "turn" in unit else str(unit.get("level") or "conversation")
                series[(unit["criterion"], level)][system].append(float(unit["score"]))
    out = []
    turn_names = {c.name for c in rubric.at("turn")}
    for (name, level), per_system in series.items():
        criterion = next((c for c in rubric.criteria if c.name == name and (c.level == "turn") == (level == "turn")), None)
        if criterion is None:
            continue
        scale = criterion.scale
        shown = dimension(name, criterion.level, name in turn_names and level != "turn")
        out.append(Histogram(
            name=f"score-hist-{slug(shown)}", title=f"{shown}: scores given", series=dict(per_system),
            scale=scale.bounds, labels=tuple(reversed(scale.labels)),
        ))
    return out
