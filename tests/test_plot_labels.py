"""Bar charts keep their words apart: the value on each bar and the category names never
overlap one another (KGDS's error-type chart printed "0.20.20.20.2" over four bars)."""

from __future__ import annotations

import itertools

import pytest

from dialeval.figures import Bars
from dialeval.protocols.kgds.metrics import ERROR_TYPES
from dialeval.report.plots import _bars, fit_margins, new_figure


def _overlaps(texts, renderer) -> list[tuple[str, str]]:
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts if t.get_text()]
    return [(a, b) for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2) if box_a.overlaps(box_b)]


@pytest.mark.parametrize("rounds", [1, 2, 3])
def test_the_error_type_chart_has_no_overlapping_labels(rounds):
    series = {f"{p} round {r}": [0.2, 0.15, 0.4, 0.25, 0.1] for p in ("EBS-AOS", "ABS-AOS") for r in range(rounds)}
    figure = Bars(name="error-types", title="Error types", ylabel="share", categories=list(ERROR_TYPES), series=series, ylim=(0, 1))
    fig, ax = new_figure()
    _bars(ax, figure)
    fit_margins(fig)
    renderer = fig.canvas.get_renderer()
    values = list(ax.texts)  # bar_label's texts
    assert len(values) == (5 * len(series) if 5 * len(series) <= 24 else 0)
    assert _overlaps(values, renderer) == []
    assert _overlaps(ax.get_xticklabels(), renderer) == []
