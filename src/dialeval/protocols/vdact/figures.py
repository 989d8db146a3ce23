"""VDAct's report figures: the headline score by question type, per system, with 95% intervals.

Why: the paper reads judges by question type (temporal, counting, yes/no...); a bar with
its bootstrap interval shows at once which types a system answers worse and how many
turns that rests on. Only turns with a readable score count here (the tables also show
the no-answer rule); a turn belongs to every type its question matches.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from dialeval.figures import Bars, Figure, Scatter
from dialeval.metrics.intervals import mean_with_interval
from dialeval.protocols.vdact.metrics import SCALES


def figures(records: list[dict[str, Any]], metrics: dict[str, Any], options: dict[str, Any]) -> list[Figure]:
    dims = list(metrics.get("dimensions") or {})
    if not dims:
        return []
    headline = dims[0]
    return [f for f in (_question_types(records, metrics, headline), _judge_vs_human(records, headline)) if f is not None]


def _question_types(records: list[dict[str, Any]], metrics: dict[str, Any], dim: str) -> Bars | None:
    systems: dict[str, dict[str, Any]] = metrics.get("systems") or {}
    types = list(next(iter(systems.values()), {}).get("question_types", {}))
    if not types:
        return None
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        for t in r["turns"]:
            score = (t.get("scores") or {}).get(dim)
            if t.get("status") == "ok" and score is not None:
                for kind in t.get("types", []):
                    values[r["system"]][kind].append(float(score))
    series: dict[str, list[float | None]] = {}
    intervals: dict[str, list[tuple[float, float] | None]] = {}
    for system in sorted(values):
        estimates = [mean_with_interval(values[system].get(kind, [])) for kind in types]
        series[system] = [mean for mean, _ in estimates]
        intervals[system] = [ci for _, ci in estimates]
    low, high = SCALES.get(dim, (0, 1))
    return Bars(
        name=f"question-types-{dim.lower()}",
        title=f"{dim} by question type (mean of readable scores, 95% bootstrap interval)",
        ylabel=f"mean {dim} ({low}-{high})",
        categories=types,
        series=series,
        intervals=intervals,
        ylim=(low, high),
    )


def _judge_vs_human(records: list[dict[str, Any]], dim: str) -> Scatter | None:
    """The judge's score against the mean human rating of each turn, where ratings exist."""
    points: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in records:
        for t in r["turns"]:
            score = (t.get("scores") or {}).get(dim)
            human = [h for h in (t.get("human") or []) if isinstance(h, (int, float))]
            if t.get("status") == "ok" and score is not None and human and dim == "rating":
                points[r["system"]].append((sum(human) / len(human), float(score)))
    if not points:
        return None
    return Scatter(name=f"judge-vs-human-{dim.lower()}", title=f"{dim}: judge against the mean human rating per turn",
                   xlabel="human (mean of raters)", ylabel="judge", points=dict(points), scale=SCALES[dim])
