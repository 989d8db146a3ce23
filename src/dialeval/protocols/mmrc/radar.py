"""The MMRC radar chart of the six abilities, drawn once a run is over."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialeval.protocols.mmrc.data import ABILITIES
from dialeval.protocols.mmrc import metrics
from dialeval.protocols.mmrc.aggregation import CONDITION_LABEL


def plot_radar(path: Path, m: dict[str, Any]) -> Path | None:
    """The six ability means of each condition on one radar chart (PNG)."""
    conds = m.get("conditions", {})
    if not conds:
        return None
    import math

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    angles = [2 * math.pi * i / len(ABILITIES) for i in range(len(ABILITIES))]
    fig = plt.figure(figsize=(4.5, 4.5))
    try:
        ax = fig.add_subplot(projection="polar")
        scored = [False] * len(ABILITIES)
        for cond, summary in conds.items():
            # an ability without a score is a gap in the line, never a point at 0
            values = [math.nan if v is None else v for v in metrics.radar_values(summary)]
            scored = [was or not math.isnan(v) for was, v in zip(scored, values)]
            ax.plot(angles + angles[:1], values + values[:1], marker="o", label=CONDITION_LABEL[cond])
            if not any(math.isnan(v) for v in values):
                ax.fill(angles + angles[:1], values + values[:1], alpha=0.15)
        ax.set_xticks(angles)
        ax.set_xticklabels([a if ok else f"{a}\n(no score)" for a, ok in zip(ABILITIES, scored)])
        ax.set_ylim(0, 5)
        ax.set_title("MMRC abilities (0-5; no score = gap)", fontsize=10)
        ax.legend(loc="lower right", bbox_to_anchor=(1.15, -0.1), fontsize=8)
        fig.savefig(path, dpi=100, bbox_inches="tight")
    finally:
        plt.close(fig)
    return path


def after_run(run_dir: Path, records: list[dict[str, Any]], m: dict[str, Any]) -> None:
    plot_radar(Path(run_dir) / "radar.png", m)
