"""The MMRC radar chart marks abilities without a score instead of drawing them at 0."""

from __future__ import annotations

import math

from dialeval.protocols.mmrc.data import ABILITIES
from dialeval.protocols.mmrc.radar import plot_radar


def _summary(means: dict[str, float | None]) -> dict:
    return {"abilities": {a: {"mean": means.get(a)} for a in ABILITIES}}


def test_an_ability_without_a_score_is_a_gap_and_labelled(tmp_path, monkeypatch):
    import matplotlib.figure

    drawn: dict = {}
    original = matplotlib.figure.Figure.savefig

    def capture(fig, path, **kwargs):
        ax = fig.axes[0]
        drawn["labels"] = [t.get_text() for t in ax.get_xticklabels()]
        drawn["lines"] = [list(line.get_ydata()) for line in ax.get_lines()]
        return original(fig, path, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", capture)
    scores = {"IE": 3.0, "CR": 2.0, "IU": 4.0, "IM": 1.0, "MR": 2.5}  # AR has no score
    path = plot_radar(tmp_path / "radar.png", {"conditions": {"off": _summary(scores)}})
    assert path.exists()
    assert drawn["labels"][:5] == ["IE", "CR", "IU", "IM", "MR"] and drawn["labels"][5] == "AR\n(no score)"
    line = drawn["lines"][0]
    assert line[:5] == [3.0, 2.0, 4.0, 1.0, 2.5] and math.isnan(line[5])
