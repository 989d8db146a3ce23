"""KGDS's report figure: how the classified errors split over the five error types.

Why: the paper reads a summarizer by which errors it makes (omission, wrong
information...), and how self-reflection rounds move them; one bar per type and
pattern/round shows both at a glance. Shares are macro averages over samples, as in
the error table.
"""

from __future__ import annotations

from typing import Any

from dialeval.figures import Bars, Figure
from dialeval.protocols.kgds.metrics import ERROR_TYPES


def figures(records: list[dict[str, Any]], metrics: dict[str, Any], options: dict[str, Any]) -> list[Figure]:
    series: dict[str, list[float | None]] = {}
    for pattern, data in (metrics.get("patterns") or {}).items():
        for round_no, figures_of_round in sorted((data.get("rounds") or {}).items(), key=lambda kv: int(kv[0])):
            errors = (figures_of_round.get("errors") or {})
            if errors.get("classified"):
                shares = errors.get("macro") or {}
                series[f"{pattern.upper()} round {round_no}"] = [shares.get(code) for code in ERROR_TYPES]
    if not series:
        return []
    return [Bars(name="error-types", title="Error types of the summaries (macro share of classified errors)",
                 ylabel="share", categories=list(ERROR_TYPES), series=series, ylim=(0, 1))]
