"""Probes by name, like benchmarks: each plans the dialogue runs it needs per candidate and
reads its figure from their outcomes (docs/extending.md shows one of your own).

``dialeval trust --probes`` and the card read this registry through
:mod:`dialeval.trust.probe_catalog`, which loads the built-in probes
(:mod:`dialeval.trust.builtin_probes`) and installed packages' (a ``dialeval.plugins``
entry point); this module only holds what they register, so probes import it downwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from dialeval.trust.candidates import Candidate
    from dialeval.trust.runs import PlannedRun, RunOutcome

Scores = dict[str, dict[str, float]]  # criterion -> unit -> score
PROBES = ("position", "verbosity", "self_preference", "needle", "consistency")  # the built-in ones: the card's default


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


def registered() -> dict[str, Probe]:
    """Every probe registered so far, in the order of registration."""
    return dict(_REGISTRY)
