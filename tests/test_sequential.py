"""Anytime-valid confidence sequences: they cover the true mean at every unit count at once
(a seeded simulation), where an ordinary 95% interval re-checked after each unit does not."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dialeval.metrics.sequential import confidence_sequence, decision, first_decision, regression_decision, score_bound, tuned_for

TRUE_MEAN = 0.3


def _paths(sims=400, units=200, seed=7):
    return np.clip(np.random.default_rng(seed).normal(TRUE_MEAN, 1.0, (sims, units)), -4, 4)


def _ever_missed(low, high):
    """Share of simulated paths whose interval left out the true mean at some unit count (from 10 on)."""
    return float(((low[:, 9:] > TRUE_MEAN) | (high[:, 9:] < TRUE_MEAN)).any(axis=1).mean())


@pytest.mark.parametrize("method", ["asymptotic", "eb"])
def test_a_sequence_covers_the_mean_at_every_unit_count(method):
    d = _paths()
    low, high = confidence_sequence(d, method=method, bound=4, tuned_for=tuned_for(d.shape[1]))
    assert _ever_missed(low, high) <= 0.06  # nominal 5%, with the simulation's own noise
    assert np.all(low <= high)


def test_an_ordinary_interval_checked_after_every_unit_misses_far_more_often():
    d = _paths()
    t = np.arange(1, d.shape[1] + 1)
    mean = np.cumsum(d, axis=1) / t
    var = (np.cumsum(d * d, axis=1) - t * mean**2) / np.maximum(t - 1, 1)
    half = stats.t.ppf(0.975, np.maximum(t - 1, 1)) * np.sqrt(np.maximum(var, 0) / t)
    assert _ever_missed(mean - half, mean + half) > 0.15


def test_a_clear_drop_is_decided_early_and_noise_is_not_decided():
    rng = np.random.default_rng(3)
    drop = rng.normal(-1.0, 1.0, 300)
    found = first_decision(drop, margin=0.2, gate=True)
    assert found["decision"] == "regression" and found["units_used"] < 100 and found["high"] < -0.2
    noise = rng.normal(0.0, 1.0, 300)
    assert first_decision(noise)["decision"] is None


def test_what_an_interval_decides():
    assert decision(0.1, 0.5) == "b higher" and decision(-0.5, -0.1) == "a higher" and decision(-0.1, 0.1) is None
    assert decision(-0.1, 0.1, margin=0.2) == "equivalent"
    assert regression_decision(-0.9, -0.3, 0.2) == "regression" and regression_decision(-0.1, 0.4, 0.2) == "no regression"
    assert regression_decision(-0.3, 0.1, 0.2) is None


def test_the_bounded_sequence_needs_its_bound():
    with pytest.raises(ValueError, match="bound"):
        confidence_sequence([0.1, 0.2], method="eb")


def test_rare_large_drops_are_not_decided_away_with_the_bounds_variance_prior():
    # mean 0: a drop of 3 in one unit of ten against small gains; the first units often agree
    rng = np.random.default_rng(11)
    d = np.where(rng.random((400, 100)) < 0.1, -3.0, 1 / 3)
    n = tuned_for(100)
    with_prior = confidence_sequence(d, method="asymptotic", bound=4, tuned_for=n)
    without = confidence_sequence(d, method="asymptotic", tuned_for=n)
    assert _ever_excluded_zero(*with_prior) <= 0.05 < 0.15 < _ever_excluded_zero(*without)


def _ever_excluded_zero(low, high):
    return float(((low[:, 9:] > 0) | (high[:, 9:] < 0)).any(axis=1).mean())


def test_a_criterion_s_bound_comes_from_its_scale():
    assert score_bound("score (1-5)", {}, []) == 4
    assert score_bound("rating", {"rating": (1.0, 3.0)}, []) == 2
    assert score_bound("relevance", {}, [2.0, 5.0, 4.0]) == 3 and score_bound(None, {}, []) == 1


def test_skewed_differences_under_no_effect_are_falsely_decided_at_most_about_5_percent():
    # the case: +1 (80%) / -4 (20%), mean 0, 300 units; 5.9% with a 2-unit variance prior
    streams = 4000
    d = np.where(np.random.default_rng(300).random((streams, 300)) < 0.2, -4.0, 1.0)
    low, high = confidence_sequence(d, method="asymptotic", bound=4, tuned_for=tuned_for(300))
    assert _ever_excluded_zero(low, high) <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / streams)
