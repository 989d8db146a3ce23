"""Gate figures by name, like benchmarks, importers and probes: every figure a gate rule can
name beyond the numbers of ``metrics.json`` is registered here (docs/extending.md shows
one of your own).

Two kinds. A run figure (``failures.share``, ``cost.usd``) reads one number from a run
folder: ``read(run) -> float | None``, ``None`` where the run does not have it (an unknown
price gives no cost, never a 0 that passes). A criterion figure (``<criterion>.mean``)
reads one number from a criterion's unit scores, ``of(scores) -> float | None``, and is
named for every criterion the run scored. The built-in figures register in
:mod:`dialeval.gate.builtin_figures`, which :mod:`dialeval.gate.figure_catalog` loads; ``--plugin`` modules and
installed packages (``dialeval.plugins`` entry point) register theirs the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from dialeval.report.results import RunData

RunReader = Callable[["RunData"], "float | None"]
ScoresReader = Callable[[list[float]], "float | None"]
CRITERION = "<criterion>"


@dataclass(frozen=True)
class GateFigure:
    """A registered figure: its name (a criterion figure's statistic, ``mean``), the line
    docs and messages show, how it is read, and whether a dry run measures it for real
    (its cost and calls do; its scores are placeholders)."""

    name: str
    description: str
    read: RunReader | None = None
    of_scores: ScoresReader | None = None
    dry_run: bool = False

    @property
    def label(self) -> str:
        """As a rule names it: ``failures.share``, ``<criterion>.mean``."""
        return f"{CRITERION}.{self.name}" if self.of_scores else self.name


_REGISTRY: dict[str, GateFigure] = {}


def register_figure(name: str, description: str, *, dry_run: bool = False) -> Callable[[RunReader], RunReader]:
    """Decorate ``read(run) -> float | None`` (``run``: a :class:`~dialeval.report.results.RunData`)
    to add the run figure ``name``; ``dry_run``: a dry run measures it for real."""

    def decorate(read: RunReader) -> RunReader:
        _add(GateFigure(name, description, read=read, dry_run=dry_run))
        return read

    return decorate


def register_criterion_figure(statistic: str, description: str) -> Callable[[ScoresReader], ScoresReader]:
    """Decorate ``of(scores) -> float | None`` (a criterion's unit scores, all systems
    together) to add ``<criterion>.<statistic>`` for every criterion a run scored."""
    if "." in statistic:
        raise ValueError(f"a criterion figure's statistic is one word ({statistic!r}): rules name it <criterion>.{statistic}")

    def decorate(of: ScoresReader) -> ScoresReader:
        _add(GateFigure(statistic, description, of_scores=of))
        return of

    return decorate


def _add(figure: GateFigure) -> None:
    _REGISTRY[figure.label] = figure


def registered() -> dict[str, GateFigure]:
    """What is registered so far, by label (:mod:`dialeval.gate.figure_catalog` loads the
    built-in and installed figures first)."""
    return dict(_REGISTRY)
