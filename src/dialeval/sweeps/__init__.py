"""Many models, one benchmark, one leaderboard: ``dialeval sweep`` and :func:`dialeval.sweep`.

Each model gets an ordinary run folder (resumable, the shared response cache); the
sweep folder ``sweeps/<id>/`` holds the leaderboard (Markdown, JSON, a plot and a page)
built from those runs. See docs/sweeps.md.
"""

from dialeval.sweeps.runs import SweepResult, dry_run_sweep, run_sweep

__all__ = ["SweepResult", "dry_run_sweep", "run_sweep"]
