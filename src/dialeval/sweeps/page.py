"""The sweep's plot (each model's headline mean with its 95% interval) and its viewer page.

Why a page: the leaderboard links each model's run, and each run opens in the viewer with
its items and every call; the page is the one place to start from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def write_page(board: dict[str, Any], sweep_dir: Path) -> Path:
    """``plots/leaderboard.png`` and ``index.html`` (with each run's viewer pages written)."""
    from dialeval.figures import Bars
    from dialeval.report.plots import draw
    from dialeval.report.viewer.render import render
    from dialeval.report.viewer.site import write_run
    from dialeval.sweeps.leaderboard import relative

    dim = board["rank_by"]
    shown = [m for m in board["models"] if (m["figures"].get(dim) or {}).get("mean") is not None]
    plots = {}
    if shown:
        figures = [m["figures"][dim] for m in shown]
        plots = draw([Bars(name="leaderboard", title=f"{board['benchmark']}: {dim} per model (95% CI)", ylabel=dim,
                           categories=[m["model"] for m in shown], series={dim: [f["mean"] for f in figures]},
                           intervals={dim: [tuple(f["ci"]) if f["ci"] else None for f in figures]})], sweep_dir)
    rows = []
    for m in board["models"]:
        run = Path(m["run"])
        view = write_run(run) if run.is_dir() else None  # the run's own pages, linked from its row
        rows.append({**m, "figure": m["figures"].get(dim) or {}, "name": run.name,
                     "report": relative(run / "report.md", sweep_dir), "view": relative(view, sweep_dir) if view else None})
    return render("sweep.html", sweep_dir / "index.html", board=board, rows=rows, plots=list(plots.values()))

