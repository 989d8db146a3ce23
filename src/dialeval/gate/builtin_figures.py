"""The figures every run has whatever its protocol, registered like any other (docs/gate.md's table)."""

from __future__ import annotations

import statistics
from typing import Any

from dialeval.gate.figure_registry import register_criterion_figure, register_figure
from dialeval.report.results import RunData


@register_criterion_figure("mean", "mean over the run's scored units of that criterion, all its systems together")
def mean(scores: list[float]) -> float:
    return statistics.fmean(scores)


@register_criterion_figure("median", "median over the criterion's scored units")
def median(scores: list[float]) -> float:
    return float(statistics.median(scores))


@register_criterion_figure("min", "lowest score of the criterion's units")
def lowest(scores: list[float]) -> float:
    return float(min(scores))


@register_criterion_figure("n", "the criterion's scored units")
def units(scores: list[float]) -> float:
    return float(len(scores))


def _per_agent(run: RunData) -> list[dict[str, Any]]:
    return [a for a in (run.usage.get("per_agent") or {}).values() if isinstance(a, dict)]


@register_figure("items", "items in the run", dry_run=True)
def items(run: RunData) -> float:
    return float(len(run.items))


@register_figure("failures.count", "items that failed (an agent call errored)")
def failures_count(run: RunData) -> float:
    return float(run.failed)


@register_figure("failures.share", "items that failed, over all items")
def failures_share(run: RunData) -> float:
    return run.failed / len(run.items) if run.items else 0.0


@register_figure("calls", "model calls made", dry_run=True)
def calls(run: RunData) -> float:
    return float(sum(int(a.get("calls", 0)) for a in _per_agent(run)))


@register_figure("unparsed.share", "judge answers that could not be read, over all calls")
def unparsed_share(run: RunData) -> float:
    made = calls(run)
    return sum(int(a.get("unparsed", 0)) for a in _per_agent(run)) / made if made else 0.0


@register_figure("cost.usd", "the run's cost; absent when a model has no known price, never a 0 that passes", dry_run=True)
def cost(run: RunData) -> float | None:
    total = run.usage.get("total") or {}
    if total.get("unpriced_calls") or "cost_usd" not in total:
        return None
    return float(total["cost_usd"])
