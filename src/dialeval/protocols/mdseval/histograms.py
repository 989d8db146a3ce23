"""The MDSEval report's score histograms (PNG), drawn once a run is over."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from dialeval.protocols.mdseval.data import ASPECTS, SCALES, SHORT
from dialeval.protocols.mdseval.aggregation import LABEL


def plot_histograms(path: Path, records: list[dict[str, Any]]) -> Path | None:
    """One panel per aspect: share of each score value, human ratings vs every evaluator."""
    judged = [a for a in ASPECTS if any(r["aspect"] == a and r["score"] is not None for rec in records for r in rec["scores"])]
    if not judged:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from dialeval.report.plots import fit_margins

    fig, axes = plt.subplots(1, len(judged), figsize=(3.2 * len(judged), 3), squeeze=False)
    try:
        for ax, aspect in zip(axes[0], judged):
            low, high = SCALES[aspect]
            values = np.arange(low, high + 1)
            series: dict[str, list[int]] = {}
            series["human"] = [s for rec in records if rec["human"] for scores in rec["human"]["ratings"][aspect] for s in scores]
            for rec in records:
                for r in rec["scores"]:
                    if r["aspect"] == aspect and r["score"] is not None:
                        series.setdefault(LABEL[r["evaluator"]], []).append(r["score"])
            width = 0.8 / len(series)
            for i, (name, scores) in enumerate(series.items()):
                counts = Counter(scores)
                shares = [counts[int(v)] / len(scores) if scores else 0 for v in values]
                ax.bar(values + (i - (len(series) - 1) / 2) * width, shares, width, label=f"{name} (n={len(scores)})")
            ax.set_title(SHORT[aspect], fontsize=10)
            ax.set_xticks(values)
            ax.set_ylim(0, 1)
        axes[0][0].set_ylabel("share of scores")
        axes[0][-1].legend(fontsize=7)
        fit_margins(fig)
        fig.savefig(path, dpi=100)
    finally:
        plt.close(fig)
    return path


def after_run(run_dir: Path, records: list[dict[str, Any]], m: dict[str, Any]) -> None:
    """Score histograms (PNG) and, when summaries were generated, the candidate pool (JSONL)."""
    import json

    plot_histograms(Path(run_dir) / "score_histograms.png", records)
    pool = [
        {"dialogue_id": rec["id"], "setup": c["setup"], "summary": c["summary"]}
        for rec in records
        for c in rec["candidates"]
        if c["summary"] is not None
    ]
    if pool:
        from dialeval.secrets import scrub

        lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in pool)
        (Path(run_dir) / "candidates.jsonl").write_text(scrub(lines), encoding="utf-8")
