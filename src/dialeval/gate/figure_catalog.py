"""Every gate figure a rule can name: the built-in ones (:mod:`dialeval.gate.builtin_figures`),
those registered in code and installed packages'. Apart from the registry so that the
built-in figures can register there without a circle.
"""

from __future__ import annotations

import dialeval.gate.builtin_figures  # noqa: F401  (registers the built-in figures)
from dialeval.gate.figure_registry import GateFigure, registered
from dialeval.plugins import load_entry_points


def all_figures() -> dict[str, GateFigure]:
    """Every figure by label: the built-in ones, those registered in code and installed packages'."""
    load_entry_points()
    return registered()


def dry_run_figures() -> list[str]:
    """The figures a dry run measures for real, as a message lists them."""
    return [label for label, figure in all_figures().items() if figure.dry_run] + ["run.usage.*"]


def measured_by_dry_run(figure: str) -> bool:
    """Whether a dry run measures ``figure`` for real: a run figure registered so, or its usage
    in ``metrics.json`` (``run.usage.*``)."""
    registered = all_figures().get(figure)
    return figure.startswith("run.usage.") or (registered is not None and registered.dry_run)
