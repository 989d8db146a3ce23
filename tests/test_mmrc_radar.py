"""The MMRC radar chart marks abilities without a score instead of drawing them at 0, keeps
its legend off the axes, and is one of the report's figures (``plots/radar.png``)."""

from __future__ import annotations

import math

from dialeval.protocols.mmrc.data import ABILITIES
from dialeval.protocols.mmrc.radar import figures
from dialeval.report.plots import RADAR_IN, _radar, draw, layout, new_figure


def _summary(means: dict[str, float | None]) -> dict:
    return {"abilities": {a: {"mean": means.get(a)} for a in ABILITIES}}


SCORES = {"IE": 3.0, "CR": 2.0, "IU": 4.0, "IM": 1.0, "MR": 2.5}  # AR has no score


def test_an_ability_without_a_score_is_a_gap_and_labelled():
    (radar,) = figures([], {"conditions": {"off": _summary(SCORES), "on": _summary({**SCORES, "IE": 4.0})}}, {})
    fig, ax = new_figure(*RADAR_IN, polar=True)
    _radar(ax, radar)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[:5] == ["IE", "CR", "IU", "IM", "MR"] and labels[5] == "AR\n(no score)"
    line = list(ax.get_lines()[0].get_ydata())
    assert line[:5] == [3.0, 2.0, 4.0, 1.0, 2.5] and math.isnan(line[5])


def test_the_legend_is_off_the_axes_and_inside_the_picture():
    (radar,) = figures([], {"conditions": {"off": _summary(SCORES), "on": _summary(SCORES)}}, {})
    fig, ax = new_figure(*RADAR_IN, polar=True)
    _radar(ax, radar)
    layout(fig, radar)
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    assert not legend.overlaps(ax.get_window_extent(renderer))  # the circle and its labels are all visible
    assert not any(legend.overlaps(t.get_window_extent(renderer)) for t in ax.get_xticklabels())
    assert legend.x1 <= fig.bbox.x1 and legend.y1 <= fig.bbox.y1


def test_the_radar_is_drawn_with_the_reports_figures(tmp_path):
    written = draw(figures([], {"conditions": {"off": _summary(SCORES)}}, {}), tmp_path)
    assert list(written.values()) == ["plots/radar.png"] and (tmp_path / "plots" / "radar.png").stat().st_size > 1000
