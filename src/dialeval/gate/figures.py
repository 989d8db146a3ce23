"""The figures a gate rule can name, read from one run folder.

Why: a rule says ``quality.mean >= 3`` or ``failures.share <= 0.02`` whatever the
benchmark; here every number a run holds gets one dotted name: each numeric leaf of
``metrics.json`` under its path (``systems.bot.mean_score``), and every registered figure
(:mod:`dialeval.gate.figure_registry`; the built-in ones, such as ``<dimension>.mean``,
``failures.share`` and ``cost.usd``, in :mod:`dialeval.gate.builtin_figures`).
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from dialeval.gate.figure_catalog import all_figures
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
    """Dotted name -> value for every figure of ``run``: the numbers of its ``metrics.json``,
    then every registered figure (:mod:`dialeval.gate.figure_catalog`) the run has."""
    out = flatten(run.metrics)
    figures = list(all_figures().values())
    for dimension, units in run.scores().items():
        values = list(units.values())
        for figure in figures:
            value = figure.of_scores(values) if figure.of_scores is not None and values else None
            if value is not None:
                out.update({f"{alias}.{figure.name}": float(value) for alias in dimension_aliases(dimension)})
    for figure in figures:
        value = figure.read(run) if figure.read is not None else None
        if value is not None:
            out[figure.name] = float(value)
    return out


def did_you_mean(name: str, known: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest known names, else a few of those known."""
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    if close:
        return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"
    shown = sorted(known)[:8]
    return f" (known: {', '.join(shown)}{', ...' if len(known) > len(shown) else ''})" if known else ""
