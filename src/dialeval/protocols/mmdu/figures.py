"""MMDU's report figure: the judge's score per dimension (x10, as the paper's table).

Why: six dimensions and an overall score read as a profile: a chart shows which
abilities lag behind the others without reading seven columns.
"""

from __future__ import annotations

from typing import Any

from dialeval.figures import Bars, Figure


def figures(records: list[dict[str, Any]], metrics: dict[str, Any], options: dict[str, Any]) -> list[Figure]:
    dims = (metrics.get("scores") or {}).get("dimensions") or {}
    if not any(d.get("score") is not None for d in dims.values()):
        return []
    system = str(metrics.get("system") or "system")
    return [Bars(name="dimension-scores", title=f"{system}: score per dimension (1-10 x10)", ylabel="score (0-100)",
                 categories=list(dims), series={system: [d.get("score") for d in dims.values()]},
                 ylim=(0, 100))]
