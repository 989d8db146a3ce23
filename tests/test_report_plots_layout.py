"""A report figure is laid out once and saved in one draw, in the bytes matplotlib's own
``tight_layout()`` + ``savefig`` sequence gives: the run's PNGs do not change, only what
drawing them costs (issue 24: the figure was most of ``finish_run`` for a small run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib
import pytest
from matplotlib.figure import Figure as MplFigure

from dialeval.figures import Bars, Figure, Histogram, Scatter
from dialeval.report import plots
from dialeval.report.compare import _plots

FIGURES: list[Figure] = [
    Histogram("hist-one-system", "score: scores given", {"all": [4.0] * 30 + [3.0] * 10}, (1, 5)),
    Histogram("hist-two-systems", "x: scores given", {"a": [0.1, 0.5, 0.7], "b": [0.2, 0.9]}, (0, 1)),
    Bars("bars", "mean per type", "mean", ["what", "why", "how", "when", "who"], {"s": [1.0, 2.0, None, 3.0, 2.5]},
         {}, (1, 5)),
    Bars("bars-intervals", "two judges", "mean", ["p", "q"], {"s": [1.0, 2.0], "t": [2.0, 3.0]},
         {"s": [(0.5, 1.5), None]}, (0, 5)),
    Scatter("scatter", "judge against humans", "human", "judge", {"p": [(1.0, 2.0), (2.0, 2.0), (3.0, 4.0)]}, (1, 5)),
    # a million in one bar: the y axis shows an offset (1e6), so the title is placed as matplotlib places it
    Histogram("hist-offset", "a long title, long enough that matplotlib would move it above an offset: scores",
              {"all": [1.0] * 1_000_000 + [2.0]}, (1, 2)),
]
COMPARISON = [{"a": "run-a", "b": "run-b", "dimension": "score", "n": 3, "scale": "integer",
               "pairs": [("q1", 3, 4), ("q2", 4, 4), ("q3", 5, 2)]}]


def matplotlibs_own_sequence(monkeypatch: pytest.MonkeyPatch) -> None:
    """Draw as the report did before: a figure on matplotlib's default canvas, ``tight_layout()``,
    the title placed by matplotlib (never pinned to the top edge)."""
    def new_figure(width_in: float = plots.WIDTH_IN, height_in: float = plots.HEIGHT_IN) -> tuple[Any, Any]:
        fig = MplFigure(figsize=(width_in, height_in), dpi=plots.DPI)
        return fig, fig.subplots()

    monkeypatch.setattr(plots, "new_figure", new_figure)
    monkeypatch.setattr(plots, "fit_margins", lambda fig: fig.tight_layout())
    monkeypatch.setattr(plots, "_nothing_above", lambda ax: False)


def pngs(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.rglob("*.png"))}


@pytest.mark.parametrize("autolayout", [False, True], ids=["default-rc", "rc-autolayout"])
def test_every_kind_of_figure_is_the_same_bytes_as_matplotlibs_own_sequence_draws(tmp_path, monkeypatch, autolayout):
    with matplotlib.rc_context({"figure.autolayout": autolayout}):  # a user's matplotlibrc may set a layout engine
        plots.draw(FIGURES, tmp_path / "now")
        (tmp_path / "now" / "compare").mkdir()
        _plots(tmp_path / "now" / "compare", COMPARISON, {"score": (1, 5)})
        with monkeypatch.context() as patched:
            matplotlibs_own_sequence(patched)
            plots.draw(FIGURES, tmp_path / "before")
            (tmp_path / "before" / "compare").mkdir()
            _plots(tmp_path / "before" / "compare", COMPARISON, {"score": (1, 5)})
    now, before = pngs(tmp_path / "now"), pngs(tmp_path / "before")
    assert sorted(now) == sorted([f"{f.name}.png" for f in FIGURES] + ["agreement-score.png"])
    assert now == before


def test_the_title_is_pinned_to_the_top_edge_unless_the_y_axis_shows_an_offset():
    for figure, pinned in ((FIGURES[0], True), (FIGURES[-1], False)):
        fig, ax = plots.new_figure()
        plots._histogram(ax, figure)
        assert plots._nothing_above(ax) is pinned
        plots._title(ax, figure.title)
        fig.canvas.draw()
        assert bool(ax.yaxis.offsetText.get_text()) is not pinned  # what the check foresaw is what was drawn


def test_a_figure_is_drawn_once_when_saved(tmp_path, monkeypatch):
    drawn: list[str] = []
    original = MplFigure.draw

    def counting(self: MplFigure, renderer: Any) -> None:
        drawn.append(self.axes[0].get_title())
        original(self, renderer)

    monkeypatch.setattr(MplFigure, "draw", counting)
    plots.draw(FIGURES[:1], tmp_path)
    assert drawn == ["score: scores given"]  # matplotlib's own sequence draws it twice (once without pixels)
    drawn.clear()
    matplotlibs_own_sequence(monkeypatch)
    plots.draw(FIGURES[:1], tmp_path)
    assert drawn == ["score: scores given"] * 2
