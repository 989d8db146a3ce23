"""MDSEval's report figures: each judge's score of a summary against the humans' mean.

Why: MDSEval asks how well a judge follows human ratings; a scatter per aspect (one
colour per evaluator) shows the spread behind the Spearman figure and any bunching
on one score.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from dialeval.figures import Figure, Scatter
from dialeval.protocols.mdseval.data import SCALES


def figures(records: list[dict[str, Any]], metrics: dict[str, Any], options: dict[str, Any]) -> list[Figure]:
    points: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    for rec in records:
        means = (rec.get("human") or {}).get("means") or {}
        for r in rec.get("scores", []):
            human = (means.get(r["aspect"]) or [])
            summary = r.get("summary")
            if r.get("score") is None or not isinstance(summary, int) or summary >= len(human) or human[summary] is None:
                continue
            points[r["aspect"]][r["evaluator"]].append((float(human[summary]), float(r["score"])))
    return [
        Scatter(name=f"judge-vs-human-{aspect}", title=f"{aspect}: judge score against the human mean per summary",
                xlabel="human (mean of annotators)", ylabel="judge", points=dict(per_evaluator),
                scale=(float(SCALES[aspect][0]), float(SCALES[aspect][1])) if aspect in SCALES else None)
        for aspect, per_evaluator in points.items()
    ]
