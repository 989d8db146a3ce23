"""PNG figures of a run: score histograms for every benchmark, and what a benchmark declares.

Why: ``1: 192, 2: 213, 3: 199`` is read faster as bars. Drawing is pure (figure records
in, files out), matplotlib's Agg backend is imported only here and only when a figure
is drawn, and the files carry no timestamp, so the same run draws the same bytes.
Axes span the whole scale, never only the values seen: a judge that never gave a 1
shows an empty bar at 1.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterator

from dialeval.figures import Bars, Figure, Histogram, Scale, Scatter, scale_of, slug

PLOTS_DIR = "plots"
WIDTH_IN, HEIGHT_IN, DPI = 5.6, 3.6, 100  # 560 x 360 px: readable in a report, small on disk
MAX_BINS = 12  # scales with more integer values than this are drawn in ten equal bins
PNG_METADATA = {"Software": None}  # no version string, no date: deterministic bytes


def score_histograms(
    records: list[dict[str, Any]],
    score_dimensions: Callable[[list[dict[str, Any]]], dict[str, list[float]]],
    scales: dict[str, Scale],
) -> list[Histogram]:
    """One histogram per judged dimension, one series per system (records' ``system``
    field; a run of one system has one series)."""
    by_system: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_system[str(record.get("system") or "all")].append(record)
    series: dict[str, dict[str, list[float]]] = defaultdict(dict)
    for system, group in by_system.items():
        for dimension, values in score_dimensions(group).items():
            if values:
                series[dimension][system] = [float(v) for v in values]
    return [
        Histogram(
            name=f"score-hist-{slug(dimension)}",
            title=f"{dimension}: scores given",
            series=per_system,
            scale=scale_of(dimension, scales, [v for vs in per_system.values() for v in vs]),
        )
        for dimension, per_system in series.items()
    ]


def draw(figures: list[Figure], run_dir: Path) -> dict[str, str]:
    """Write each figure to ``run_dir/plots/<name>.png``; returns name -> relative path."""
    if not figures:
        return {}
    out = Path(run_dir) / PLOTS_DIR
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for figure in figures:
        path = out / f"{figure.name}.png"
        with _Canvas(figure.title) as ax:
            if isinstance(figure, Histogram):
                _histogram(ax, figure)
            elif isinstance(figure, Bars):
                _bars(ax, figure)
            else:
                _scatter(ax, figure)
            ax.figure.savefig(path, metadata=PNG_METADATA)
        written[figure.title] = f"{PLOTS_DIR}/{path.name}"
    return written


class _Canvas:
    """One figure at a time, always closed (pyplot keeps every open figure alive)."""

    def __init__(self, title: str):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        self.plt = plt
        self.fig, self.ax = plt.subplots(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI)
        self.ax.set_title(title, fontsize=10)

    def __enter__(self) -> Any:
        return self.ax

    def __exit__(self, *exc: object) -> None:
        self.plt.close(self.fig)


def _integer_scale(scale: Scale | None, values: list[float]) -> list[float] | None:
    """The scale's values when it is a short integer scale holding every value, else ``None``."""
    if scale is None or any(v != int(v) for v in values) or scale[0] != int(scale[0]) or scale[1] != int(scale[1]):
        return None
    low, high = int(scale[0]), int(scale[1])
    if high - low + 1 > MAX_BINS or any(v < low or v > high for v in values):
        return None
    return [float(v) for v in range(low, high + 1)]


def _offsets(count: int, width: float = 0.8) -> Iterator[tuple[float, float]]:
    """(offset, bar width) of each of ``count`` bars side by side in a group of ``width``."""
    bar = width / max(count, 1)
    for k in range(count):
        yield (k - (count - 1) / 2) * bar, bar


def _histogram(ax: Any, figure: Histogram) -> None:
    import numpy as np

    every = [v for vs in figure.series.values() for v in vs]
    ticks = _integer_scale(figure.scale, every)
    if ticks is not None:
        for (system, values), (offset, width) in zip(figure.series.items(), _offsets(len(figure.series))):
            counts = [sum(1 for v in values if v == t) for t in ticks]
            ax.bar([t + offset for t in ticks], counts, width=width, label=f"{system} (n={len(values)})")
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.set_xlim(ticks[0] - 0.6, ticks[-1] + 0.6)
    else:
        low, high = figure.scale or (min(every), max(every))
        if high <= low:
            low, high = low - 0.5, high + 0.5
        edges = np.linspace(min(low, min(every)), max(high, max(every)), 11)
        for system, values in figure.series.items():
            ax.hist(values, bins=edges, alpha=0.6, label=f"{system} (n={len(values)})")
        ax.set_xlim(edges[0], edges[-1])
    ax.set_xlabel("score")
    ax.set_ylabel("count")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=7)
    ax.figure.tight_layout()


def _bars(ax: Any, figure: Bars) -> None:
    positions = range(len(figure.categories))
    for (label, values), (offset, width) in zip(figure.series.items(), _offsets(len(figure.series))):
        xs = [p + offset for p, v in zip(positions, values) if v is not None]
        ys = [v for v in values if v is not None]
        intervals = figure.intervals.get(label)
        errors = None
        if intervals:
            kept = [(v, ci) for v, ci in zip(values, intervals) if v is not None]
            errors = [[v - ci[0] if ci else 0.0 for v, ci in kept], [ci[1] - v if ci else 0.0 for v, ci in kept]]
        ax.bar(xs, ys, width=width, label=label, yerr=errors, capsize=3 if errors else 0)
    ax.set_xticks(list(positions), figure.categories, rotation=30 if len(figure.categories) > 4 else 0,
                  ha="right" if len(figure.categories) > 4 else "center", fontsize=8)
    if figure.ylim is not None:
        ax.set_ylim(*figure.ylim)
    ax.set_ylabel(figure.ylabel)
    if len(figure.series) > 1 or figure.intervals:
        ax.legend(fontsize=7)
    ax.figure.tight_layout()


def _scatter(ax: Any, figure: Scatter) -> None:
    every = [c for pts in figure.points.values() for p in pts for c in p]
    low, high = figure.scale or (min(every), max(every))
    pad = (high - low) * 0.05 or 0.5
    for label, pts in figure.points.items():
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=16, alpha=0.6, label=f"{label} (n={len(pts)})")
    ax.plot([low, high], [low, high], color="grey", linewidth=0.8, linestyle="--")
    ax.set_xlim(low - pad, high + pad)
    ax.set_ylim(low - pad, high + pad)
    ax.set_xlabel(figure.xlabel)
    ax.set_ylabel(figure.ylabel)
    ax.legend(fontsize=7)
    ax.figure.tight_layout()
