"""What a report figure shows, as data: benchmarks declare figures, ``report/plots.py`` draws them.

Why: a protocol knows which picture tells its story (VDAct's question types, KGDS's
error types) but must not import the report layer or matplotlib; it returns these
records from ``Benchmark.figures`` and the report draws every kind the same way.
``name`` becomes the file name (``plots/<name>.png``), so it says what the figure shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

Scale = tuple[float, float]


@dataclass(frozen=True)
class Bars:
    """Grouped bars: one group per category, one bar per series, optional 95% intervals."""

    name: str
    title: str
    ylabel: str
    categories: list[str]
    series: dict[str, list[float | None]]  # series label -> one value per category (None: no bar)
    intervals: dict[str, list[tuple[float, float] | None]] = field(default_factory=dict)
    ylim: Scale | None = None


@dataclass(frozen=True)
class Scatter:
    """Judge against human (or any two readings of the same units), one colour per series."""

    name: str
    title: str
    xlabel: str
    ylabel: str
    points: dict[str, list[tuple[float, float]]]
    scale: Scale | None = None  # both axes span it, with the diagonal drawn


@dataclass(frozen=True)
class Histogram:
    """Counts of one dimension's scores per system; bins at the scale's values."""

    name: str
    title: str
    series: dict[str, list[float]]
    scale: Scale | None = None
    labels: tuple[str, ...] = ()  # a label scale: the names of ranks 1, 2, ... (worst first), drawn as words


@dataclass(frozen=True)
class Radar:
    """Means on one scale around a circle (MMRC's six abilities), one line per series; a
    ``None`` is a gap in the line, never a point at the scale's bottom."""

    name: str
    title: str
    axes: list[str]
    series: dict[str, list[float | None]]  # series label -> one value per axis
    scale: Scale


Figure = Bars | Scatter | Histogram | Radar

_NAMED_SCALE = re.compile(r"\((-?\d+(?:\.\d+)?)\s*[-/]\s*(-?\d+(?:\.\d+)?)\)")


def scale_of(dimension: str, scales: dict[str, Scale], values: list[float]) -> Scale | None:
    """The scale a dimension is scored on: declared (exactly, or as the dimension's last
    words: ``balance`` for ``pointwise balance``), else written in its name (``score
    (1-5)``, ``(0/1)``), else the values seen; ``None`` without values."""
    if dimension in scales:
        return scales[dimension]
    for key, scale in scales.items():
        if dimension.endswith(" " + key) or dimension.startswith(key + " "):
            return scale
    named = _NAMED_SCALE.search(dimension)
    if named:
        return float(named.group(1)), float(named.group(2))
    return (min(values), max(values)) if values else None


def slug(text: str) -> str:
    """A file-name part naming ``text``: lower case, runs of other characters as one ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "figure"


def judge_vs_human(judge: dict[str, dict[str, float]], human: dict[str, dict[str, float]], label: str = "judge") -> list[Figure]:
    """One scatter per dimension scored by both, over the units both scored (``item_scores`` shape)."""
    out: list[Figure] = []
    for dimension, scores in judge.items():
        shared = sorted(set(scores) & set(human.get(dimension, {})))
        if shared:
            out.append(Scatter(
                name=f"judge-vs-human-{slug(dimension)}", title=f"{dimension}: judge against human per unit",
                xlabel="human", ylabel=label, points={label: [(human[dimension][u], scores[u]) for u in shared]},
            ))
    return out
