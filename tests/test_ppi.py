"""Prediction-powered estimates, shown by simulation: a corpus with a known true mean,
judged by a biased judge, a few hundred units labelled by people; thousands of corpora
drawn at once (seeded), so each check below is a frequency, not one lucky draw."""

from __future__ import annotations

import numpy as np
import pytest

from dialeval.metrics.ppi import classical_mean_arrays, estimates, ppi_mean_arrays, win_rate_estimates

DRAWS, JUDGED, LABELLED = 3000, 1000, 200
SCALE = np.arange(1, 6)
PROBS = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
TRUTH = float((SCALE * PROBS).sum())  # the population's mean human score: 3.15


def corpora(bias: float, noise: float, seed: int = 7) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """DRAWS corpora of JUDGED units; human scores 1-5, the judge's = human + bias + noise,
    rounded onto the scale (so the bias is not even constant). The first LABELLED units of
    each corpus carry the humans' score (the units are exchangeable: a random subset)."""
    rng = np.random.default_rng(seed)
    human = rng.choice(SCALE, p=PROBS, size=(DRAWS, JUDGED)).astype(float)
    judge = np.clip(np.rint(human + bias + rng.normal(0, noise, size=human.shape)), 1, 5)
    return judge[:, LABELLED:], judge[:, :LABELLED], human[:, :LABELLED]


def covers(low: np.ndarray, high: np.ndarray, truth: float) -> float:
    return float(np.mean((low <= truth) & (truth <= high)))


@pytest.mark.parametrize("tune", [False, True])
def test_the_interval_covers_the_truth_about_95_percent_of_the_time_under_a_biased_judge(tune):
    unlabelled, judged_labelled, human = corpora(bias=0.8, noise=0.7)
    _, low, high = ppi_mean_arrays(unlabelled, judged_labelled, human, tune=tune)
    judge_only = classical_mean_arrays(np.concatenate([judged_labelled, unlabelled], axis=1))

    assert 0.93 <= covers(low, high, TRUTH) <= 0.97
    assert covers(judge_only[1], judge_only[2], TRUTH) < 0.01  # the judge alone is confidently wrong


def test_an_informative_judge_gives_a_narrower_interval_than_the_humans_alone():
    unlabelled, judged_labelled, human = corpora(bias=0.5, noise=0.4)
    _, low, high = ppi_mean_arrays(unlabelled, judged_labelled, human)
    _, h_low, h_high = classical_mean_arrays(human)

    assert np.mean(high - low) < 0.75 * np.mean(h_high - h_low)
    assert 0.93 <= covers(h_low, h_high, TRUTH) <= 0.97  # both valid; one is narrower


def test_tuning_keeps_a_useless_judge_from_widening_the_interval():
    rng = np.random.default_rng(3)
    unlabelled, judged_labelled, human = corpora(bias=0.0, noise=0.0)
    noise_u, noise_l = rng.integers(1, 6, unlabelled.shape), rng.integers(1, 6, judged_labelled.shape)  # unrelated to the humans
    plain = ppi_mean_arrays(noise_u, noise_l, human)
    tuned = ppi_mean_arrays(noise_u, noise_l, human, tune=True)
    humans = classical_mean_arrays(human)

    assert np.mean(plain[2] - plain[1]) > np.mean(humans[2] - humans[1])  # the plain estimate pays for the noise
    assert np.mean(tuned[2] - tuned[1]) < 1.01 * np.mean(humans[2] - humans[1])
    assert 0.93 <= covers(tuned[1], tuned[2], TRUTH) <= 0.97


def test_a_win_rate_corrected_by_human_verdicts_covers_the_true_win_rate():
    """A judge that favours system A: it turns a fifth of B's wins into A's."""
    rng = np.random.default_rng(11)
    truth_points = rng.choice([1.0, 0.5, 0.0], p=[0.4, 0.2, 0.4], size=(DRAWS, JUDGED))  # true win rate 0.5
    favoured = np.where((truth_points == 0.0) & (rng.random(truth_points.shape) < 0.2), 1.0, truth_points)
    _, low, high = ppi_mean_arrays(favoured[:, LABELLED:], favoured[:, :LABELLED], truth_points[:, :LABELLED])

    assert 0.93 <= covers(low, high, 0.5) <= 0.97
    assert abs(float(favoured.mean()) - 0.58) < 0.01  # what the judge alone would say


def test_the_estimate_is_the_judge_mean_on_all_units_plus_the_labelled_correction():
    judge = {"u1": 4.0, "u2": 5.0, "u3": 3.0, "u4": 4.0, "u5": 2.0, "u6": 5.0}
    human = {"u1": 3.0, "u2": 4.0, "u3": 3.0, "x9": 1.0}  # x9: labelled, never judged
    out = estimates(judge, human)

    by_hand = np.mean(list(judge.values())) + np.mean([3 - 4, 4 - 5, 3 - 3])
    assert out["prediction_powered"].mean == pytest.approx(by_hand)
    assert (out["prediction_powered"].n_labelled, out["prediction_powered"].n_judged) == (3, 6)
    assert out["judge_only"].mean == pytest.approx(23 / 6)
    assert out["human_only"].mean == pytest.approx(11 / 4) and out["human_only"].n_labelled == 4
    assert out["prediction_powered"].ci_low < by_hand < out["prediction_powered"].ci_high


def test_too_few_units_give_no_figure_rather_than_a_wrong_one():
    out = estimates({"u1": 4.0, "u2": 3.0}, {"u1": 4.0})
    assert out["prediction_powered"].mean is None and out["human_only"].mean is None
    assert out["judge_only"].mean == 3.5


def test_pairwise_verdicts_become_win_points():
    judge = {"p1": "a", "p2": "a", "p3": "tie", "p4": "b", "p5": "a", "p6": None}
    human = {"p1": "a", "p2": "b", "p3": "b"}
    out = win_rate_estimates(judge, human)
    assert out["judge_only"].mean == pytest.approx((1 + 1 + 0.5 + 0 + 1) / 5)
    assert out["prediction_powered"].mean == pytest.approx(0.7 + np.mean([0, -1, -0.5]))
