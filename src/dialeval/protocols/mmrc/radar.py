"""The MMRC radar chart of the six abilities, one line per note-taking condition.

Why a figure record: the report draws it with the others (``plots/radar.png``, listed
under the report's figures); this module only says what it shows.
"""

from __future__ import annotations

from typing import Any

from dialeval.figures import Figure, Radar
from dialeval.protocols.mmrc import metrics
from dialeval.protocols.mmrc.aggregation import CONDITION_LABEL
from dialeval.protocols.mmrc.data import ABILITIES


def figures(records: list[dict[str, Any]], m: dict[str, Any], options: dict[str, Any]) -> list[Figure]:
    """The six ability means (0-5) of each condition; none without a condition."""
    conds = m.get("conditions", {})
    if not conds:
        return []
    series = {CONDITION_LABEL[cond]: metrics.radar_values(summary) for cond, summary in conds.items()}
    return [Radar(name="radar", title="MMRC abilities (0-5; no score = gap)", axes=list(ABILITIES), series=series, scale=(0, 5))]
