"""Probes by name, like benchmarks: each plans the dialogue runs it needs per candidate and
reads its figure from their outcomes (docs/extending.md shows one of your own).

``dialeval trust --probes`` and the card read this registry; the built-in probes register
in :mod:`dialeval.trust.builtin_probes`, loaded on first use, and installed packages
register theirs from a ``dialeval.plugins`` entry point.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from dialeval.trust.candidates import Candidate
    from dialeval.trust.runs import PlannedRun, RunOutcome

Scores = dict[str, dict[str, float]]  # criterion -> unit -> score


@dataclass
class Planning:
    """What a probe plans one candidate's runs from: the card's data folder (for the files
    it derives), the labelled data, the plain run's options and the trust settings."""

    candidate: Candidate
    settings: Any  # dialeval.trust.build.TrustSettings
    inputs: Any  # dialeval.trust.build.Inputs: conversations, labels, rubric
    data: Path
    labelled: Path
    base: dict[str, Any]
    padded: Path  # the labelled conversations with padded replies
    needle_records: list[dict[str, Any]] = field(default_factory=list)

    def run(self, name: str, data: Path, options: dict[str, Any], *, cached: bool = True) -> PlannedRun:
        """A dialogue run of this candidate over ``data`` (its outcome is ``outcomes[name]``)."""
        from dialeval.trust.runs import PlannedRun

        return PlannedRun(self.candidate, name, data, options, cached=cached)


@dataclass
class Measuring:
    """What a probe reads its figure from: every run of the candidate by name (``base``:
    the plain run), its scores, the humans' consensus and the criteria's scales."""

    candidate: Candidate
    settings: Any
    inputs: Any
    outcomes: dict[str, RunOutcome]
    scores: Scores
    consensus: Scores
    scales: dict[str, tuple[float, float]]
    needles: dict[str, int]

    @property
    def resamples(self) -> int:
        return int(self.settings.resamples)

    def scores_of(self, run: str) -> Scores:
        """The scores of the candidate's run ``run`` (a name its probe planned), readable answers only."""
        from dialeval.trust.dialogue import scores_by_unit

        return scores_by_unit(self.outcomes[run].records)


def _no_runs(planning: Planning) -> list[PlannedRun]:
    return []


@dataclass(frozen=True)
class Probe:
    """A probe: its limit (``higher_is_bad``: it fails when its interval lies above it, else
    below), the line the card prints, the runs it needs and how it reads its figure."""

    name: str
    description: str
    limit: float
    higher_is_bad: bool
    measure: Callable[[Measuring], dict[str, Any]]
    runs: Callable[[Planning], list[PlannedRun]] = _no_runs
    title: str = ""  # its column in the card's table and plot (default: its name)


_REGISTRY: dict[str, Probe] = {}


def register_probe(name: str, description: str, *, limit: float, higher_is_bad: bool = True,
                   runs: Callable[[Planning], list[PlannedRun]] = _no_runs, title: str | None = None) -> Callable[[Callable[[Measuring], dict[str, Any]]], Callable[[Measuring], dict[str, Any]]]:
    """Decorate ``measure(measuring) -> record`` (built with
    :func:`dialeval.trust.probes.result`) to add the probe ``name``; ``runs(planning)`` lists
    the runs it needs beside the candidate's plain one."""

    def decorate(measure: Callable[[Measuring], dict[str, Any]]) -> Callable[[Measuring], dict[str, Any]]:
        _REGISTRY[name] = Probe(name, description, limit, higher_is_bad, measure, runs, title or name)
        return measure

    return decorate


def all_probes() -> dict[str, Probe]:
    """Every probe: the built-in ones, those registered in code and installed packages'."""
    import dialeval.trust.builtin_probes  # noqa: F401  (registers the built-in probes)
    from dialeval.plugins import load_entry_points

    load_entry_points()
    return dict(_REGISTRY)


def get_probe(name: str) -> Probe:
    probes = all_probes()
    if name not in probes:
        from dialeval.errors import ConfigError

        raise ConfigError(f"unknown probe {name!r}; choose from {', '.join(probes)}")
    return probes[name]
