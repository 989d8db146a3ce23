"""A figure `dialeval compare` cannot give says why (report/compare_notes.py)."""

from __future__ import annotations

from dialeval.metrics.agreement import agreement
from dialeval.report.compare_notes import Footnotes, not_computed


def entry(a: list[float], b: list[float], *, names: tuple[str, str] = ("run-a", "run-b")) -> dict:
    units = [f"u{i}" for i in range(len(a))]
    return {"a": names[0], "b": names[1], "pairs": [[u, x, y] for u, x, y in zip(units, a, b)], **agreement(a, b)}


def test_averaged_human_labels_have_no_exact_agreement_and_the_note_names_the_rule():
    why = not_computed(entry([4, 2, 5, 1], [4.5, 2, 4.5, 1.5], names=("judge", "human")), human_rule="mean")
    assert set(why) == {"exact_agreement", "adjacent_agreement"}
    assert why["exact_agreement"].startswith("human has scores that are not whole numbers")
    assert "human_rule=majority or median" in why["exact_agreement"]


def test_a_constant_side_makes_correlations_undefined_and_says_which():
    why = not_computed(entry([3, 3, 3, 3], [1, 2, 4, 5]))
    assert why["spearman"] == "run-a gives every shared unit the same score: a correlation is undefined"
    assert "krippendorff_alpha" not in why  # alpha is defined: the pooled scores vary


def test_one_reason_one_footnote_number():
    notes = Footnotes()
    assert [notes.mark("x"), notes.mark("y"), notes.mark("x")] == ["n/a [1]", "n/a [2]", "n/a [1]"]
    assert notes.lines() == ["", "[1] x.", "[2] y."]
