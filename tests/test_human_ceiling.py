"""The human ceiling and a judge held to it the same way (metrics/ceiling.py): each annotator
against the mean of the others, and the judge in each annotator's place, never against the
mean of all annotators, which would favour it by construction."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from scipy import stats

from dialeval.metrics.ceiling import leave_one_out


def test_each_annotator_and_the_judge_are_read_against_the_same_means_by_hand():
    """Three annotators who labelled overlapping units; the judge takes each one's place."""
    rng = np.random.default_rng(3)
    quality = rng.integers(1, 6, 12)
    table = {f"u{i}": {a: float(np.clip(q + rng.integers(-1, 2), 1, 5)) for a in "abc" if not (a == "c" and i < 3)}
             for i, q in enumerate(quality)}  # c skipped the first three units
    judge = {f"u{i}": float(q) for i, q in enumerate(quality) if i != 5}  # one unreadable verdict
    out = leave_one_out(table, {"judge": judge}, resamples=200)
    humans, held = [], []
    for a in "abc":
        units = [u for u in table if a in table[u]]
        others = [np.mean([v for b, v in table[u].items() if b != a]) for u in units]
        humans.append(stats.spearmanr([table[u][a] for u in units], others).statistic)
        kept = [(judge[u], m) for u, m in zip(units, others) if u in judge]
        held.append(krippendorff.alpha(reliability_data=np.array(kept).T, level_of_measurement="ordinal"))
    assert out["humans"]["spearman"]["value"] == pytest.approx(np.mean(humans))
    assert out["judges"]["judge"]["krippendorff_alpha"]["value"] == pytest.approx(np.mean(held))
    assert (out["units"], out["annotators"], out["judges"]["judge"]["units"]) == (12, 3, 11)
    assert out["per_annotator"]["c"]["n"] == 9
    for figure in (out["humans"]["spearman"], out["judges"]["judge"]["krippendorff_alpha"]):
        assert figure["ci_low"] <= figure["value"] <= figure["ci_high"]


def test_units_with_one_label_set_no_ceiling():
    out = leave_one_out({"u1": {"a": 3.0}, "u2": {"a": 4.0}}, {"judge": {"u1": 3.0, "u2": 4.0}})
    assert out["units"] == 0 and out["humans"]["spearman"]["value"] is None
    assert out["judges"]["judge"] == {"units": 0, **{k: {"value": None, "ci_low": None, "ci_high": None}
                                                     for k in ("spearman", "kendall_tau_b", "krippendorff_alpha")}}


def replayed(seed: int, units: int = 30, annotators: int = 3) -> tuple[float, float, float]:
    """Exchangeable annotators (one quality per unit, each label off by noise); the first is
    replayed as the judge against the others. Returns the judge held to the ceiling, the
    ceiling, and the judge against the mean of all (the old, favoured reading): Spearman."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(3, 1, units)
    labels = np.clip(np.rint(quality[:, None] + rng.normal(0, 1, (units, annotators))), 1, 5)
    table = {f"u{i}": {f"a{k}": float(labels[i, k]) for k in range(1, annotators)} for i in range(units)}
    out = leave_one_out(table, {"a0": {f"u{i}": float(labels[i, 0]) for i in range(units)}}, resamples=10)
    against_all = stats.spearmanr(labels[:, 0], labels[:, 1:].mean(axis=1)).statistic
    return out["judges"]["a0"]["spearman"]["value"], out["humans"]["spearman"]["value"], against_all


@pytest.mark.timeout(120)
def test_an_annotator_replayed_as_the_judge_does_not_beat_the_ceiling_systematically():
    """100 panels of exchangeable annotators: held to the ceiling, the replayed annotator beats
    it by nothing beyond noise; read against the mean of all, it beats it (what the card did)."""
    figures = np.array([replayed(seed) for seed in range(100)])
    fair, unfair = figures[:, 0] - figures[:, 1], figures[:, 2] - figures[:, 1]
    error = fair.std(ddof=1) / np.sqrt(len(fair))
    assert abs(fair.mean()) < 2 * error  # no systematic gain
    assert unfair.mean() > 3 * unfair.std(ddof=1) / np.sqrt(len(unfair))  # the old reading favoured the judge
    assert 0.35 < np.mean(fair > 0) < 0.65
