"""Agreement statistics and their bootstrap CIs from resampled unit counts: the same
figures as recomputing each statistic on each resample, at any scale."""

from __future__ import annotations

import math
import warnings

import krippendorff
import numpy as np
import pytest
from scipy import stats

from dialeval.metrics.alpha import Reliability, krippendorff_alpha
from dialeval.metrics.intervals import generator
from dialeval.metrics.judge_agreement import alpha_with_ci, paired_agreement


def recomputed(a, b, resamples):
    """The straightforward reading: every statistic recomputed on every resample (slow)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    funcs = {
        "spearman": lambda u, v: stats.spearmanr(u, v).statistic,
        "kendall_tau_b": lambda u, v: stats.kendalltau(u, v, variant="b").statistic,
        "krippendorff_alpha": lambda u, v: krippendorff.alpha(reliability_data=np.array([u, v]), level_of_measurement="ordinal"),
    }
    rng = generator()  # the one resampler's seed
    picks = [rng.integers(0, len(x), len(x)) for _ in range(resamples)]
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, f in funcs.items():
            draws = [f(x[p], y[p]) if len(set(x[p])) > 1 and len(set(y[p])) > 1 else math.nan for p in picks]
            low, high = np.nanpercentile(draws, [2.5, 97.5])
            out[name] = {"value": f(x, y), "ci_low": low, "ci_high": high}
    return out


@pytest.mark.parametrize("case", ["integer", "ties", "real-valued", "small"])
def test_figures_equal_recomputing_each_resample(case):
    rng = np.random.default_rng(7)
    n = 6 if case == "small" else 40
    a = rng.integers(1, 6, n).astype(float)
    b = {"integer": np.clip(a + rng.integers(-1, 2, n), 1, 5), "ties": np.where(a > 3, 5.0, 1.0),
         "real-valued": a + rng.random(n), "small": rng.integers(1, 6, n).astype(float)}[case]
    fast, slow = paired_agreement(list(a), list(b), resamples=199), recomputed(a, b, 199)  # the same draws, fewer
    for name, expected in slow.items():
        for key, value in expected.items():
            assert fast[name][key] == pytest.approx(value, abs=1e-9), (name, key)


def test_constant_scores_give_no_figure():
    assert paired_agreement([3, 3, 3, 3], [1, 2, 3, 4])["spearman"] == {"value": None, "ci_low": None, "ci_high": None}


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_equals_the_krippendorff_package_with_missing_values_and_weights(level):
    rng = np.random.default_rng(11)
    data = rng.integers(0, 5, (25, 4)).astype(float)
    data[rng.random(data.shape) < 0.3] = np.nan
    expected = krippendorff.alpha(reliability_data=data.T, level_of_measurement=level)
    assert krippendorff_alpha(data, level) == pytest.approx(expected, abs=1e-12)
    weights = rng.integers(0, 3, 25)  # a resample: unit i drawn weights[i] times
    duplicated = krippendorff.alpha(reliability_data=np.repeat(data, weights, axis=0).T, level_of_measurement=level)
    assert Reliability(data, level).alpha(weights[None])[0] == pytest.approx(duplicated, abs=1e-12)


@pytest.mark.parametrize("n, real_valued", [(10_000, False), (2_000, True)])
def test_thousands_of_units_on_a_0_to_100_scale_or_real_valued(n, real_valued):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 101, n).astype(float)
    noise = rng.normal(0, 8, n) if real_valued else rng.integers(-8, 9, n)  # real-valued: a distinct value per unit
    b = np.clip(a + noise, 0, 100)
    result = paired_agreement(a, b)
    for name in ("spearman", "kendall_tau_b", "krippendorff_alpha"):
        assert result[name]["ci_low"] < result[name]["value"] < result[name]["ci_high"]
    assert result["spearman"]["value"] == pytest.approx(stats.spearmanr(a, b).statistic)
    assert result["kendall_tau_b"]["value"] == pytest.approx(stats.kendalltau(a, b).statistic)
    if real_valued:  # three annotators on the same units, one of them unrelated
        humans = np.column_stack([a, b, a[::-1]])
        assert alpha_with_ci(humans)["value"] == pytest.approx(krippendorff_alpha(humans), abs=1e-12)
