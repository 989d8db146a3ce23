"""One resampler (metrics/intervals.py): the headline figures, the agreement statistics, the
trust card's shares and MDSEval draw the same resamples with one seed, one count and one
interval method, so the same data gives the same interval whichever report shows it."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dialeval.metrics import intervals
from dialeval.metrics.intervals import RESAMPLES, SEED, mean_with_interval, percentile_interval, unit_draws, unit_weights

SRC = Path(__file__).resolve().parents[1] / "src" / "dialeval"


def test_the_resamples_do_not_depend_on_the_batch_size():
    whole = np.concatenate(list(unit_draws(13, 50, step=50)))
    assert np.array_equal(whole, np.concatenate(list(unit_draws(13, 50, step=7))))
    counts = np.concatenate(list(unit_weights(13, 50, step=9)))
    assert np.array_equal(counts, np.stack([np.bincount(row, minlength=13) for row in whole]))


def test_a_mean_interval_is_scipys_percentile_bootstrap_with_the_same_seed_and_count():
    values = np.random.default_rng(5).normal(size=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = stats.bootstrap((values,), np.mean, n_resamples=RESAMPLES, method="percentile",
                                   random_state=np.random.default_rng(SEED)).confidence_interval
    assert mean_with_interval(list(values))[1] == (expected.low, expected.high)  # to the last bit: goldens keep their figures


def test_the_trust_cards_share_and_a_headline_mean_give_one_interval():
    from dialeval.trust import stats as trust_stats

    hits = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0]
    share = trust_stats.share(hits)
    assert [share["ci_low"], share["ci_high"]] == pytest.approx(list(mean_with_interval(hits)[1]))


def test_agreement_figures_draw_the_resamplers_count():
    from dialeval.metrics.judge_agreement import paired_agreement

    a, b = [1, 2, 3, 4, 5, 2, 4], [2, 2, 3, 5, 4, 1, 5]
    assert paired_agreement(a, b) == paired_agreement(a, b, resamples=RESAMPLES, seed=SEED)
    assert paired_agreement(a, b) != paired_agreement(a, b, resamples=999)


def test_undefined_resamples_are_left_out_and_none_defined_gives_no_interval():
    assert percentile_interval(np.array([np.nan, 1.0, 2.0, np.nan, 3.0])) == pytest.approx(
        tuple(np.percentile([1.0, 2.0, 3.0], [2.5, 97.5])))
    assert percentile_interval(np.array([np.nan, np.nan])) is None


def test_every_random_draw_in_the_package_comes_from_the_resampler():
    found = []
    for path in SRC.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path != Path(intervals.__file__) and re.search(r"default_rng|RandomState|np\.random\.|^SEED\s*=|RESAMPLES\s*=", text, re.M):
            found.append(str(path.relative_to(SRC)))
    assert found == []


@pytest.mark.parametrize("n", [3, 40, 500])
def test_mmrcs_vectorised_interval_equals_the_statistic_taken_resample_by_resample(n):
    """MMRC's mean of ability means is computed for a whole batch of resamples at once; it
    must give the interval that calling the statistic once per resample gives."""
    from dialeval.metrics.intervals import statistic_with_interval
    from dialeval.protocols.mmrc.data import ABILITIES
    from dialeval.protocols.mmrc.metrics import overall_interval

    rng = np.random.default_rng(n)
    questions = [{"ability": ABILITIES[int(rng.integers(0, 4 if n == 3 else len(ABILITIES)))],
                  "score": [0.0, 1.0, None, 0.5][int(rng.integers(0, 4))]} for _ in range(n)]
    scored = [q for q in questions if q["score"] is not None]
    ability = np.array([ABILITIES.index(q["ability"]) for q in scored])
    scores = np.array([q["score"] for q in scored])

    def one_resample(units):
        means = [scores[units][ability[units] == k].mean() for k in range(len(ABILITIES)) if (ability[units] == k).any()]
        return float(np.mean(means)) if means else None

    expected = statistic_with_interval(len(scored), one_resample)[1]
    assert expected is not None
    assert overall_interval(questions) == pytest.approx(expected, abs=1e-12)
