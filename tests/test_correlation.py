"""Kendall tau-b and the paired permutation test, on cases checked by hand and with scipy."""

from __future__ import annotations

import pytest
from scipy.stats import kendalltau

from dialeval.metrics.correlation import kendall_tau_b, permutation_test


def test_tau_b_matches_a_hand_count():
    # pairs of (1,2,3,4) vs (1,3,2,4): 5 concordant, 1 discordant, no ties -> (5 - 1) / 6
    result = kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4])
    assert result.tau == pytest.approx(4 / 6)
    assert result.n == 4


def test_tau_b_with_ties_matches_scipy():
    metric = [0.1, 0.4, 0.4, 0.9, 0.2, 0.7, 0.7, 0.3]
    human = [1, 2, 3, 3, 1, 2, 3, 1]
    expected = kendalltau(metric, human, variant="b")
    result = kendall_tau_b(metric, human)
    assert result.tau == pytest.approx(expected.statistic)
    assert result.p_value == pytest.approx(expected.pvalue)


def test_tau_b_skips_missing_scores():
    result = kendall_tau_b([1, None, 2, 3], [1, 3, 2, None])
    assert result.n == 2
    assert result.tau == pytest.approx(1.0)


@pytest.mark.parametrize(
    "metric, human, reason",
    [([], [], "fewer than 2"), ([1], [2], "fewer than 2"), ([2, 2, 2], [1, 2, 3], "constant"), ([1, 2, 3], [3, 3, 3], "constant")],
)
def test_tau_b_is_undefined_not_zero(metric, human, reason):
    result = kendall_tau_b(metric, human)
    assert result.tau is None and result.p_value is None
    assert reason in result.reason


def test_tau_b_needs_one_human_score_per_sample():
    with pytest.raises(ValueError):
        kendall_tau_b([1, 2], [1])


HUMAN = [1, 1, 2, 2, 3, 3, 1, 2, 3, 3, 2, 1, 3, 1, 2, 3, 2, 1, 3, 2]
GOOD = [1, 1, 2, 2, 3, 3, 1, 2, 3, 3, 2, 1, 3, 1, 2, 3, 2, 1, 2, 2]  # agrees almost everywhere
NOISE = [3, 1, 1, 2, 2, 3, 3, 1, 2, 1, 3, 2, 1, 3, 3, 2, 1, 2, 1, 3]


def test_permutation_of_a_metric_against_itself_finds_no_difference():
    test = permutation_test(GOOD, GOOD, HUMAN, permutations=200)
    assert test.difference == 0
    assert test.p_value == 1.0


def test_permutation_finds_a_much_better_metric():
    test = permutation_test(GOOD, NOISE, HUMAN, permutations=2000, seed=1)
    assert test.tau_a == pytest.approx(kendalltau(GOOD, HUMAN).statistic)
    assert test.tau_b == pytest.approx(kendalltau(NOISE, HUMAN).statistic)
    assert test.difference == pytest.approx(test.tau_a - test.tau_b)
    assert test.p_value < 0.01
    one_sided = permutation_test(GOOD, NOISE, HUMAN, permutations=2000, seed=1, alternative="greater")
    assert one_sided.p_value <= test.p_value
    reverse = permutation_test(NOISE, GOOD, HUMAN, permutations=2000, seed=1, alternative="greater")
    assert reverse.p_value > 0.9


def test_permutation_is_reproducible_with_a_seed_and_bounded():
    a = permutation_test(GOOD, NOISE, HUMAN, permutations=300, seed=7)
    b = permutation_test(GOOD, NOISE, HUMAN, permutations=300, seed=7)
    assert a.p_value == b.p_value
    assert 1 / 301 <= a.p_value <= 1.0


def test_permutation_p_value_matches_exhaustive_enumeration():
    import itertools

    human, a, b = [1, 2, 3, 1, 3], [1, 2, 3, 2, 3], [2, 1, 3, 1, 2]
    observed = kendalltau(a, human).statistic - kendalltau(b, human).statistic
    # swapping raw values is the same as swapping normalised ranks here only for tau, so
    # enumerate all 2^5 swap patterns on the ranks the test uses
    from scipy.stats import rankdata

    ra, rb = rankdata(a) / 5, rankdata(b) / 5
    extreme = 0
    for mask in itertools.product([False, True], repeat=5):
        pa = [y if m else x for x, y, m in zip(ra, rb, mask)]
        pb = [x if m else y for x, y, m in zip(ra, rb, mask)]
        d = kendalltau(pa, human).statistic - kendalltau(pb, human).statistic
        extreme += abs(d) >= abs(observed) - 1e-12
    exact = extreme / 32
    test = permutation_test(a, b, human, permutations=4000, seed=3)
    assert test.p_value == pytest.approx(exact, abs=0.03)


def test_permutation_reports_undefined_correlations():
    test = permutation_test([2, 2, 2], [1, 2, 3], [1, 2, 3], permutations=10)
    assert test.p_value is None and test.difference is None
    assert "constant" in test.reason


def test_fast_tau_used_by_the_permutations_matches_scipy():
    import numpy as np

    from dialeval.metrics.correlation import _tau_function

    rng = np.random.default_rng(0)
    human = rng.integers(1, 4, 300).astype(float)
    tau = _tau_function(human)
    for x in (rng.random(300), rng.integers(0, 6, 300).astype(float), human + rng.random(300)):
        assert tau(x) == pytest.approx(kendalltau(x, human, variant="b").statistic)
    assert tau(np.ones(300)) == 0.0
