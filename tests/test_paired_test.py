"""The one paired test (:mod:`dialeval.metrics.paired`): exact at small n (checked against
scipy's exact permutation test), an interval that is the set of centres the test keeps,
`undecided` with its reason where the units cannot decide, and coverage near 95% on a
seeded simulation of skewed and symmetric differences (the full table: docs/gate.md)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dialeval.metrics.paired import interval, paired_difference, regression_verdict, sign_flip_interval, sign_flip_p


def _scipy_exact_p(d):
    result = stats.permutation_test((np.asarray(d, dtype=float),), np.mean, permutation_type="samples",
                                    n_resamples=np.inf, alternative="two-sided")
    return result.pvalue


@pytest.mark.parametrize("d", [[1, 2, 3, -1, 2, 4, 0, 1], [-2, -2, -1, -3, 0.5, -1], [3, -1, 2, 2, -2, 1, 1, 0, 4, 2]])
def test_the_exact_sign_flip_p_is_scipys_exact_permutation_p(d):
    assert sign_flip_p(d) == pytest.approx(_scipy_exact_p(d))


def test_the_exact_interval_holds_the_centres_the_test_keeps():
    d = np.array([1.0, 2.0, 3.0, -1.0, 2.0, 4.0, 0.5, 1.0, 2.5, 1.5])
    low, high = sign_flip_interval(d)
    for centre in (low + 1e-9, (low + high) / 2, high - 1e-9):
        assert sign_flip_p(d, centre) > 0.05
    for centre in (low - 0.05, high + 0.05):
        assert sign_flip_p(d, centre) <= 0.05


def test_four_identical_drops_cannot_decide_and_say_why():
    test = paired_difference([3, 4, 3, 4], [2, 3, 2, 3], bound=4)
    assert test["mean_diff"] == -1 and test["smallest_p"] == 0.0625
    assert (test["ci_low"], test["ci_high"]) == (-4.0, 4.0)  # not [-1, -1]: four units can show nothing at 95%
    verdict = regression_verdict(test, margin=0.1)
    assert verdict["status"] == "undecided" and verdict["smallest_drop"] is None
    assert verdict["reason"].startswith("4 units: the smallest possible p is 0.0625")


def test_a_clear_drop_on_forty_units_fails_and_noise_is_undecided_with_the_drop_it_could_show():
    base = [3 + i % 3 for i in range(40)]
    drop = paired_difference(base, [b - 2 for b in base], bound=4)
    assert drop["ci_high"] < -1.5 and regression_verdict(drop, 0.2)["status"] == "fail"
    noise = paired_difference(base, [8 - b for b in base], bound=4)
    verdict = regression_verdict(noise, 0.2)
    assert verdict["status"] == "undecided" and verdict["smallest_drop"] == pytest.approx(0.2 + (noise["ci_high"] - noise["ci_low"]) / 2)
    same = paired_difference(base, base, bound=4)
    assert regression_verdict(same, 0.5)["status"] == "pass"  # 40 units unchanged: surely not 0.5 lower


@pytest.mark.parametrize("shape, n", [("skewed", 12), ("skewed", 50), ("likert", 30), ("win/tie/loss", 20)])
def test_the_interval_covers_at_least_about_95_percent(shape, n):
    rng = np.random.default_rng(44)
    sims = 2000
    if shape == "skewed":
        d, bound = np.where(rng.random((sims, n)) < 0.2, -4.0, 1.0), 4.0
    elif shape == "likert":
        q = rng.normal(3, 1, (sims, n))
        d, bound = np.clip(np.rint(q + rng.normal(0, .7, q.shape)), 1, 5) - np.clip(np.rint(q + rng.normal(0, .7, q.shape)), 1, 5), 4.0
    else:
        u = rng.random((sims, n))
        d, bound = np.where(u < 0.3, -1.0, np.where(u < 0.6, 1.0, 0.0)), 1.0
    low, high = interval(d, bound)
    missed = float(((low > 0) | (high < 0)).mean())
    assert missed <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / sims)
