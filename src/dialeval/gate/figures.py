"""The figures a gate rule can name, read from one run folder.

Why: a rule says ``quality.mean >= 3`` or ``failures.share <= 0.02`` whatever the
benchmark; here every number a run holds gets one dotted name: each numeric leaf of
``metrics.json`` under its path (``systems.bot.mean_score``), and the figures every run
has whatever its protocol: per scored dimension ``<dimension>.mean`` (also ``.n``,
``.median``, ``.min``), ``failures.share`` and ``failures.count`` (failed items),
``items``, ``calls``, ``cost.usd`` and ``unparsed.share`` (judge answers not read).
"""

from __future__ import annotations

import difflib
import re
import statistics
from typing import Any

from dialeval.report.results import RunData

SCALE = re.compile(r"\s*\([^)]*\)\s*$")  # "score (1-5)" is also "score"


def dimension_aliases(dimension: str) -> list[str]:
    """The names a rule may give a scored dimension: as written, and without its scale."""
    short = SCALE.sub("", dimension)
    return [dimension] if short == dimension or not short else [dimension, short]


def resolve_dimension(scores: dict[str, dict[str, float]], name: str) -> str | None:
    """The run's dimension a rule names (``quality``, or ``score`` for ``score (1-5)``)."""
    for dimension in scores:
        if name in dimension_aliases(dimension):
            return dimension
    return None


def dimension_names(scores: dict[str, dict[str, float]]) -> list[str]:
    return [alias for dimension in scores for alias in dimension_aliases(dimension)]


def flatten(value: Any, prefix: str = "") -> dict[str, float]:
    """Every number of a JSON object under its dotted path (booleans left out)."""
    out: dict[str, float] = {}
    if isinstance(value, dict):
        for key, inner in value.items():
            out.update(flatten(inner, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        out[prefix] = float(value)
    return out


def run_figures(run: RunData) -> dict[str, float]:
    """Dotted name -> value for every figure of ``run`` (see the module's docstring)."""
    out = flatten(run.metrics)
    for dimension, units in run.scores().items():
        values = list(units.values())
        if not values:
            continue
        for alias in dimension_aliases(dimension):
            out.update({f"{alias}.mean": statistics.fmean(values), f"{alias}.median": float(statistics.median(values)),
                        f"{alias}.min": float(min(values)), f"{alias}.n": float(len(values))})
    items = len(run.items)
    per_agent = [a for a in (run.usage.get("per_agent") or {}).values() if isinstance(a, dict)]
    calls = sum(int(a.get("calls", 0)) for a in per_agent)
    unparsed = sum(int(a.get("unparsed", 0)) for a in per_agent)
    total = run.usage.get("total") or {}
    out.update({
        "items": float(items),
        "failures.count": float(run.failed),
        "failures.share": run.failed / items if items else 0.0,
        "calls": float(calls),
        "unparsed.share": unparsed / calls if calls else 0.0,
    })
    if not total.get("unpriced_calls") and "cost_usd" in total:
        out["cost.usd"] = float(total["cost_usd"])  # unknown prices: no figure, never a 0 that passes
    return out


def did_you_mean(name: str, known: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest known names, else a few of those known."""
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    if close:
        return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"
    shown = sorted(known)[:8]
    return f" (known: {', '.join(shown)}{', ...' if len(known) > len(shown) else ''})" if known else ""
