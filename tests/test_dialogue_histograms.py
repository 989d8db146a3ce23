"""Dialogue histograms span the rubric's scale and draw label scales as words."""

from __future__ import annotations

from dialeval.benchmarks import get_benchmark
from dialeval.figures import Histogram
from dialeval.report.plots import _histogram, new_figure

RECORDS = [
    {"id": "trip", "turn_units": [{"criterion": "relevance", "turn": 2, "score": 1.0, "verdict": 1},
                                  {"criterion": "relevance", "turn": 4, "score": 4.0, "verdict": 4}],
     "conversation_units": [{"criterion": "goal_completion", "level": "conversation", "score": 3.0, "verdict": "yes"}]},
    {"id": "lamp", "turn_units": [{"criterion": "relevance", "turn": 2, "score": None, "verdict": None}],
     "conversation_units": [{"criterion": "goal_completion", "level": "conversation", "score": 1.0, "verdict": "no"}]},
]


def histograms() -> dict[str, Histogram]:
    return {f.name: f for f in get_benchmark("dialogue").figures(RECORDS, {}, {}) if isinstance(f, Histogram)}


def test_a_1_to_5_criterion_scored_1_and_4_spans_1_to_5():
    figure = histograms()["score-hist-relevance"]
    assert (figure.scale, figure.series) == ((1.0, 5.0), {"all": [1.0, 4.0]})
    _, ax = new_figure()
    _histogram(ax, figure)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "3", "4", "5"]


def test_a_label_scale_is_drawn_as_its_labels_worst_first():
    figure = histograms()["score-hist-goal-completion"]
    assert figure.labels == ("no", "partly", "yes") and figure.scale == (1.0, 3.0)
    _, ax = new_figure()
    _histogram(ax, figure)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["no", "partly", "yes"]
    heights = [p.get_height() for p in ax.patches]
    assert heights == [1, 0, 1]
